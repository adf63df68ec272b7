"""A participant's browser, as the tests drive it: arrive through a link, ask for work,
answer it (the vetting page's form), until the completion page."""

from __future__ import annotations

import re
import uuid
from typing import Any

from django.test import Client

from apps.annotation.models import PanelLink


def arrive(client: Client, link: PanelLink, query: str, **extra: Any) -> Any:
    """Open the link with `query` (the platform's parameters) and agree to take part."""
    return client.post(f"/join/{link.token}/?{query}", {"consent": "1"}, **extra)


def vet_next(client: Client, study_pk: int) -> int | None:
    """The perturbation the participant is handed now, or None: sent to their start page
    (followed, as a browser does: it records them finished)."""
    page = client.get(f"/studies/{study_pk}/vet/")
    if page.status_code == 302:
        assert "/participant/" in page["Location"], page["Location"]
        assert client.get(page["Location"]).status_code == 200
        return None
    assert page.status_code == 200, page.status_code
    # Read from the page, not `page.context`: clients in other threads render meanwhile.
    found = re.search(rf"/studies/{study_pk}/vet/(\d+)/verdict/".encode(), page.content)
    assert found, "no unit on the page"
    return int(found.group(1))


def vet_answer(client: Client, study_pk: int, perturbation: int, verdict: str = "valid") -> Any:
    return client.post(
        f"/studies/{study_pk}/vet/{perturbation}/verdict/",
        # 5 s of time on task, as a page measures and sends it
        {"idempotency_key": str(uuid.uuid4()), "verdict": verdict, "active_seconds": "5"},
    )


def vet_until_done(client: Client, study_pk: int, verdict: str = "valid") -> list[int]:
    """Answer every unit handed out until there is none; the units answered."""
    done = []
    while (perturbation := vet_next(client, study_pk)) is not None:
        assert vet_answer(client, study_pk, perturbation, verdict).status_code == 302
        done.append(perturbation)
        assert len(done) < 1000
    return done
