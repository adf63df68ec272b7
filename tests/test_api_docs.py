"""The API's front door: /api/v1/ lists its endpoints, the schema is readable in a browser,
and Swagger UI and Redoc are served from this server for logged-in users."""

import pytest
from rest_framework.authtoken.models import Token

pytestmark = pytest.mark.django_db


def test_api_root_lists_the_endpoints_with_working_links(client, researcher):
    assert client.get("/api/v1/").status_code in (401, 403)
    token = Token.objects.create(user=researcher)
    root = client.get("/api/v1/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert root.status_code == 200
    body = root.json()
    paths = {e["path"]: e for e in body["endpoints"]}
    assert paths["/api/v1/studies/{pk}/reports/{name}/"]["methods"] == ["GET"]
    assert "POST" in paths["/api/v1/imports/"]["methods"]
    tasks = paths["/api/v1/tasks/"]["url"]
    assert tasks.endswith("/api/v1/tasks/")
    assert client.get(tasks, HTTP_AUTHORIZATION=f"Token {token.key}").status_code == 200
    assert body["docs"]["swagger_ui"].endswith("/api/v1/docs/")


def test_schema_shows_in_a_browser_and_still_serves_tools(client, researcher):
    client.force_login(researcher)
    shown = client.get("/api/v1/schema/", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*")
    assert shown.status_code == 200 and shown["Content-Type"].startswith("text/plain")
    assert "attachment" not in shown.get("Content-Disposition", "")
    assert shown.content.startswith(b"openapi: 3")
    as_json = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json")
    assert as_json.json()["info"]["title"] == "Discern API"


@pytest.mark.parametrize("page", ["docs", "redoc"])
def test_interactive_docs_are_local_and_need_a_login(client, researcher, page):
    anonymous = client.get(f"/api/v1/{page}/")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    client.force_login(researcher)
    html = client.get(f"/api/v1/{page}/").content.decode()
    assert "/static/drf_spectacular_sidecar/" in html
    assert "cdn." not in html and "jsdelivr" not in html and "unpkg" not in html
