"""Odd bytes anywhere a user can type: every routed path, with a NUL, a byte sequence that
is not UTF-8 (a lone surrogate, percent-encoded) or a 10 KB segment in place of each of its
parameters, in the query and in form fields, answers below 500, for the owner of every object
and for anyone (docs/api.md, "Errors")."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.test_access import FOREIGN, alpha_world, schema_requests, url_conf_requests

pytestmark = pytest.mark.django_db

NUL, SURROGATE, LONG = "%00", "%ED%A0%80", "9" * 10_240
ODD = {"NUL": NUL, "lone surrogate": SURROGATE, "10 KB": LONG}
FORM = {"NUL": "a%00b", "lone surrogate": f"a{SURROGATE}b", "10 KB": "x" * 10_240}
FORM_TYPE = "application/x-www-form-urlencoded"
#: JSON bodies: the escapes a JSON text may hold and no database column can.
JSON = {"NUL": '"a\\u0000b"', "lone surrogate": '"a\\udcedb"'}


JSON_FIELDS = ("name", "label", "text", "base_url", "model", "default_params", "note")


def odd_paths() -> list[tuple[str, str, str]]:
    """(method, path, what) with each id or value of the path replaced by each odd value."""
    found = []
    for method, path in sorted(url_conf_requests()):
        segments = path.split("/")
        spots = [
            i for i, s in enumerate(segments) if s == str(FOREIGN) or re.fullmatch(r"[a-z-]+", s)
        ]
        for spot in spots[-1:] or [len(segments) - 1]:
            for what, value in ODD.items():
                odd = [*segments[:spot], value, *segments[spot + 1 :]]
                found.append((method, "/".join(odd), what))
    return found


def test_odd_bytes_in_any_path_query_or_form_field_never_give_a_server_error():
    client = Client(raise_request_exception=False)
    world = alpha_world()
    failures = []
    for who in (None, world.owner):
        client.logout()
        if who is not None:
            client.force_login(who)
        for method, path, what in odd_paths():
            if "logout" in path:
                continue
            response = getattr(client, method)(path)
            if response.status_code >= 500:
                failures.append(f"{method.upper()} {path[:80]} ({what}): {response.status_code}")
        for method, path in sorted(url_conf_requests()):
            if "logout" in path:
                continue
            for what, value in FORM.items():
                fields = f"name={value}&q={value}&text={value}"
                if method == "get":
                    response = client.get(f"{path}?{fields}")
                else:
                    response = client.post(path, fields, content_type=FORM_TYPE)
                if response.status_code >= 500:
                    failures.append(f"{method.upper()} {path} with {what}: {response.status_code}")
        for method, path in sorted(schema_requests()):
            if method == "get" or "logout" in path:
                continue
            for what, value in JSON.items():
                body = "{" + ", ".join(f'"{k}": {value}' for k in JSON_FIELDS) + "}"
                response = getattr(client, method)(path, body, content_type="application/json")
                if response.status_code >= 500:
                    failures.append(f"{method.upper()} {path} JSON {what}: {response.status_code}")
    assert not failures, "\n".join(failures[:40]) + f"\n({len(failures)} in all)"
