"""The report card pages: the owner reads and downloads them, shares a read-only link that
needs a login and can revoke it; nobody else (not the study's annotators or experts) sees
anything; the page's queries do not grow with the number of runs."""

import json

import pytest
from django.urls import reverse

from apps.analysis.cards.snapshots import audit_json
from apps.analysis.models import CardShare
from tests.analysis.audit_builders import scripted_audit, scripted_subject
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def _card_url(audit, subject, suffix=""):
    if suffix:
        return reverse("audit-card-file", args=[audit.pk, subject.pk, suffix])
    return reverse("audit-card", args=[audit.pk, subject.pk])


def test_the_owner_reads_the_card_and_downloads_it(client, catalog):
    audit, _, careless = scripted_audit(n_items=6)
    client.force_login(audit.owner)
    page = client.get(_card_url(audit, careless))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Report card: " in html and "Position bias" in html
    assert 'href="/judging/runs/' in html  # evidence links
    assert "skipped, no search budget given" in html
    card = client.get(_card_url(audit, careless, "json")).json()
    assert card["name"] == "audit-card"
    one_file = client.get(_card_url(audit, careless, "html"))
    assert one_file["Content-Disposition"].endswith('.html"')
    body = one_file.content.decode()
    assert "data:image/png;base64" not in body or "<img" in body
    assert "<script" not in body and 'rel="stylesheet"' not in body  # self-contained
    compare = client.get(reverse("audit-compare", args=[audit.pk]))
    assert compare.status_code == 200 and "Paired tests" in compare.content.decode()
    whole = client.get(reverse("audit-json", args=[audit.pk]))
    assert json.loads(whole.content) == json.loads(json.dumps(audit_json(audit)))


def test_nobody_else_sees_it_without_a_link_and_a_revoked_link_opens_nothing(client, catalog):
    audit, careful, _ = scripted_audit(n_items=4)
    annotator = MembershipFactory(study=audit.study, user=UserFactory(role="annotator")).user
    expert = MembershipFactory(study=audit.study, user=UserFactory(role="expert")).user
    colleague = UserFactory(role="researcher")
    url = _card_url(audit, careful)
    for user in (annotator, expert, colleague):
        client.force_login(user)
        assert client.get(url).status_code == 404
        assert client.get(reverse("audit-json", args=[audit.pk])).status_code == 404
        new = client.post(reverse("audit-share-new", args=[audit.pk]))
        assert new.status_code in (403, 404)
    assert not CardShare.objects.exists()
    client.force_login(audit.owner)
    made = client.post(reverse("audit-share-new", args=[audit.pk]))
    share = CardShare.objects.get()
    assert share.token in made.content.decode() and len(share.token) >= 40
    client.force_login(annotator)
    shared = client.get(f"{url}?share={share.token}")
    assert shared.status_code == 200
    assert 'href="/judging/runs/' not in shared.content.decode()  # the runs stay the owner's
    assert client.get(f"{url}?share=wrong-{share.token}").status_code == 404
    assert client.post(reverse("audit-share-new", args=[audit.pk])).status_code in (403, 404)
    client.logout()
    anonymous = client.get(f"{url}?share={share.token}")
    assert anonymous.status_code == 302 and "login" in anonymous["Location"]
    client.force_login(audit.owner)
    client.post(reverse("audit-share-revoke", args=[audit.pk, share.pk]))
    client.force_login(annotator)
    assert client.get(f"{url}?share={share.token}").status_code == 404


def _page_queries(client, audit, subject, django_assert_max_num_queries, limit):
    client.force_login(audit.owner)
    client.get(_card_url(audit, subject))  # builds the snapshot
    with django_assert_max_num_queries(limit) as counted:
        assert client.get(_card_url(audit, subject)).status_code == 200
    return len(counted.captured_queries)


def test_the_card_page_queries_do_not_grow_with_the_runs(
    client, catalog, django_assert_max_num_queries
):
    small, _, small_subject = scripted_audit(n_items=3)
    big, _, big_subject = scripted_audit(n_items=12)
    for n in range(3):  # more subjects, more runs in the same audit
        scripted_subject(
            big,
            big.study,
            *_items_of(big),
            careless=bool(n % 2),
            criterion=_criterion(big),
            name=f"extra-{n}",
        )
    first = _page_queries(client, small, small_subject, django_assert_max_num_queries, 30)
    second = _page_queries(client, big, big_subject, django_assert_max_num_queries, 30)
    assert first == second


def _items_of(audit):
    from apps.corpus.models import Perturbation, SourceItem

    items = list(SourceItem.objects.filter(dataset__studies=audit.study).order_by("pk"))
    perts: dict[str, list] = {}
    for p in Perturbation.objects.filter(item__in=items).select_related("kind").order_by("item_id"):
        perts.setdefault(p.kind.slug, []).append(p)
    return items, perts


def _criterion(audit):
    return audit.study.criteria.get().key
