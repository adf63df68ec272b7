"""Swagger UI runs in a real browser from this server's own files (no CDN)."""

from urllib.parse import urlparse

import pytest

from apps.annotation.demo import DEMO_PASSWORD, demo_load

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_swagger_ui_lists_the_api_after_login(page, live_server, catalog):
    demo_load()
    hosts = set()
    page.on("request", lambda request: hosts.add(urlparse(request.url).hostname))
    page.goto(f"{live_server.url}/api/v1/docs/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url("**/api/v1/docs/")
    page.locator(".swagger-ui .info .title", has_text="Discern API").wait_for()
    assert page.locator(".opblock-summary-path", has_text="/api/v1/studies/").count() > 0
    assert hosts <= {urlparse(live_server.url).hostname}
