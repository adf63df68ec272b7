"""The site's own error pages, and quiet refusals: a participant who opens a page that does
not exist gets the site's 404 page (not Django's list of routes, as the demo once showed); a
403 or 404 writes one log line, not a traceback (config/errors.py)."""

from __future__ import annotations

import io
import logging

import pytest
from django.test import Client

from config.errors import QuietRefusals
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_missing_page_is_the_sites_own_404(client):
    client.force_login(UserFactory(role="annotator"))
    page = client.get("/no/such/page/")
    assert page.status_code == 404
    text = page.content.decode()
    assert "There is nothing here" in text and "Back to your studies" in text
    assert "URLconf" not in text and "api/v1/" not in text  # no list of routes


def test_a_refusal_writes_one_line_not_a_traceback():
    """Through the log handler the settings configure (LOGGING), its output kept here."""
    handler = next(
        h
        for h in logging.getLogger().handlers
        if any(isinstance(f, QuietRefusals) for f in h.filters)
    )
    assert isinstance(handler, logging.StreamHandler)
    kept = io.StringIO()
    before = handler.setStream(kept)
    client = Client()
    client.force_login(UserFactory(role="annotator"))
    try:
        assert client.get("/judging/judges/").status_code == 403
    finally:
        handler.setStream(before)
    logged = kept.getvalue()
    assert "Forbidden (Permission denied): /judging/judges/" in logged
    assert "Traceback" not in logged
