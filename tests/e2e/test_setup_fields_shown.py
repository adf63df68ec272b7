"""Set-up pages show a setting only when it applies. Generate: the generator's settings once
an LLM-written kind is ticked (or before any kind is), not for rule-based kinds alone;
"Choose all" on a group counts as ticking its boxes. A strategy: how many likeliest tokens to
read only when scores come from the token probabilities."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from apps.annotation.demo import DEMO_PASSWORD, demo_load

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _researcher(page, live_server) -> None:
    demo_load()
    page.set_default_timeout(10_000)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "researcher")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def test_the_llm_settings_follow_the_kinds_ticked(page, live_server, catalog):
    _researcher(page, live_server)
    page.goto(f"{live_server.url}/generate/")
    llm = page.locator("fieldset[data-applies-to=llm]")
    expect(llm).to_be_visible()  # nothing ticked yet: every setting shows
    rule_group = page.locator("details.check-group:has(input[data-kind=rule])").first
    rule_group.locator("summary").click()
    rule_group.locator("input[data-kind=rule]").first.check()
    expect(llm).to_be_hidden()
    expect(page.locator("select[name=generator]")).to_be_disabled()  # not sent either
    llm_group = page.locator("details.check-group:has(input[data-kind=llm])").first
    llm_group.locator("summary").click()
    llm_group.locator("button[data-choose-all]").click()
    expect(llm).to_be_visible()
    llm_group.locator("button[data-choose-all]").click()  # cleared again
    expect(llm).to_be_hidden()


def test_the_likeliest_tokens_show_with_token_probabilities(page, live_server, catalog):
    _researcher(page, live_server)
    page.goto(f"{live_server.url}/judging/strategies/new/")
    tokens = page.locator("#field-top_logprobs")
    expect(tokens).to_be_hidden()
    page.check("input[name=use_logprobs]")
    expect(tokens).to_be_visible()
    page.uncheck("input[name=use_logprobs]")
    expect(tokens).to_be_hidden()
