"""Upgrading keeps what was there: a judge shared before offers became a thing stays usable by
its recipients, accepted (judging 0012), and a judge's prices keep their value (judging 0013)."""

from __future__ import annotations

from decimal import Decimal

import pytest

# the migration tests' helper, and their fixture that leaves the newest schema behind
from tests.endpoints.test_migration import _newest_schema_afterwards as _newest_schema_afterwards
from tests.endpoints.test_migration import migrate

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [("judging", "0011_strategy_technique_help")]


def test_shares_made_before_stay_accepted():
    old = migrate(BEFORE)
    User = old.get_model("accounts", "User")
    rita = User.objects.create(username="rita", role="researcher")
    beta = User.objects.create(username="beta", role="researcher")
    endpoint = old.get_model("endpoints", "Endpoint").objects.create(
        name="gpt judge", owner=rita, base_url="https://api.example.org/v1", model="m"
    )
    judge = old.get_model("judging", "Judge").objects.create(
        name="gpt judge", kind="llm", endpoint=endpoint, created_by=rita
    )
    judge.shared_with.add(beta)
    endpoint.shared_with.add(beta)

    migrate(None)

    from apps.accounts.models import User as CurrentUser
    from apps.endpoints.selectors import endpoints_for_user
    from apps.judging.models import JudgeShare
    from apps.judging.selectors import judge_offers_for, judges_for_user

    share = JudgeShare.objects.get()
    assert (share.judge_id, share.user_id, share.state) == (judge.pk, beta.pk, "accepted")
    beta = CurrentUser.objects.get(pk=beta.pk)
    assert list(
        judges_for_user(beta).filter(created_by_id=rita.pk).values_list("pk", flat=True)
    ) == [judge.pk]
    assert endpoints_for_user(beta).filter(pk=endpoint.pk).exists()
    assert not judge_offers_for(beta).exists()
    rita_share = JudgeShare.objects.create(
        judge_id=judge.pk, user_id=rita.pk
    )  # the table takes more
    assert rita_share.state == "offered" and rita_share.offered_at is not None


def test_prices_per_1000_tokens_become_prices_per_million():
    """A judge priced per 1,000 tokens before judging 0013 costs the same after it."""
    old = migrate([("judging", "0012_judge_shares_are_offers")])
    old.get_model("judging", "Judge").objects.create(
        name="priced", kind="metric", metric="bleu", price_per_1k_prompt_tokens="0.0025"
    )

    migrate(None)

    from apps.judging.models import Judge

    judge = Judge.objects.get(name="priced")
    assert judge.price_per_million_prompt_tokens == Decimal("2.5")  # $0.0025 per 1,000
    assert judge.price_per_million_completion_tokens is None
    assert judge.cost(1_000_000, 0) == Decimal("2.5") and judge.cost(1000, 0) == Decimal("0.0025")
