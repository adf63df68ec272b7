"""Every page each role can reach from the menu fits a 390 px window (a phone): wide tables
scroll in their own box, forms and prompts wrap, nothing widens the page."""

from __future__ import annotations

from urllib.parse import urljoin, urlparse

import pytest

from apps.annotation.demo import DEMO_PASSWORD, demo_load
from tests.e2e.screens import overflow

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NOT_PAGES = ("/accounts/logout", "/admin", "/api/", ".csv", ".json", ".xml", ".html", ".png")


def _reachable(page, base: str, limit: int = 120) -> dict[str, int]:
    """Same-site pages reachable by links from the home page: {path: px wider than window}."""
    found: dict[str, int] = {}
    queue = ["/"]
    while queue and len(found) < limit:
        path = queue.pop(0)
        if path in found:
            continue
        response = page.goto(base + path)
        assert response is not None and response.ok, f"{path}: HTTP {response and response.status}"
        found[path] = overflow(page)
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
            url = urlparse(urljoin(base + path, href))
            link = url.path + (f"?{url.query}" if url.query else "")
            wanted = f"{url.scheme}://{url.netloc}" == base and link not in found
            if wanted and link not in queue and not any(p in url.path for p in NOT_PAGES):
                queue.append(link)
    return found


@pytest.mark.parametrize("role", ["researcher", "annotator", "expert"])
def test_every_page_a_role_reaches_fits_a_narrow_window(browser, live_server, catalog, role):
    demo_load()
    context = browser.new_context(viewport={"width": 390, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", role)
        page.fill("input[name=password]", DEMO_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        pages = _reachable(page, live_server.url)
    finally:
        context.close()
    assert len(pages) >= (25 if role == "researcher" else 4), sorted(pages)
    assert {path: px for path, px in pages.items() if px > 0} == {}
