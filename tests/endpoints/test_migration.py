"""Upgrading keeps everyone's LLM judges working: each one's endpoint settings move to an
endpoint of its own (named, owned and shared like it), and a generation job's generator and
study come along (judging 0005-0006, corpus 0007-0008)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [
    ("judging", "0004_judge_ownership_and_key_allow_list"),
    ("corpus", "0006_dataset_name_per_owner"),
]


def migrate(targets):
    """Migrate to ``targets`` (None: the newest); the models as they were there (every other
    app as far as it is still migrated: apps whose newer migrations build on the targets are
    taken back with them)."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
    if not targets:
        return None
    executor.loader.build_graph()
    applied = [
        node for node in executor.loader.applied_migrations if node in executor.loader.graph.nodes
    ]
    return executor.loader.project_state(sorted(applied)).apps


@pytest.fixture(autouse=True)
def _newest_schema_afterwards():
    """Whatever happens in the test, later tests find every migration applied."""
    yield
    migrate(None)


def test_judges_and_generation_jobs_move_to_endpoints():
    old = migrate(BEFORE)
    User = old.get_model("accounts", "User")
    rita = User.objects.create(username="rita", role="researcher")
    beta = User.objects.create(username="beta", role="researcher")
    judge = old.get_model("judging", "Judge").objects.create(
        name="gpt judge",
        kind="llm",
        base_url="https://api.example.org/v1",
        api_key_env="DISCERN_KEY_OPENAI",
        model="gpt-x",
        default_params={"seed": 7},
        max_concurrency=3,
        requests_per_minute=90,
        timeout_s=20.0,
        max_attempts=2,
        max_tokens_param="max_completion_tokens",
        created_by=rita,
    )
    judge.shared_with.add(beta)
    old.get_model("judging", "Judge").objects.create(name="BLEU", kind="metric", metric="bleu")
    dataset = old.get_model("corpus", "Dataset").objects.create(name="d", owner=rita)
    study = old.get_model("annotation", "Study").objects.create(name="s", slug="s", owner=rita)
    job = old.get_model("corpus", "GenerationJob").objects.create(
        dataset=dataset, generator=judge, study=study, created_by=rita
    )
    plain = old.get_model("corpus", "GenerationJob").objects.create(dataset=dataset)

    migrate(None)

    from apps.corpus.models import GenerationJob
    from apps.endpoints.models import Endpoint
    from apps.judging.models import Judge

    moved = Judge.objects.get(pk=judge.pk)
    endpoint = moved.endpoint
    assert (endpoint.name, endpoint.owner_id) == ("gpt judge", rita.pk)
    assert [u.username for u in endpoint.shared_with.all()] == ["beta"]
    config = endpoint.config()
    assert (config.base_url, config.model, config.api_key_env) == (
        "https://api.example.org/v1",
        "gpt-x",
        "DISCERN_KEY_OPENAI",
    )
    assert (config.max_concurrency, config.requests_per_minute, config.timeout_s) == (3, 90, 20.0)
    assert (config.retry.max_attempts, config.max_tokens_param) == (2, "max_completion_tokens")
    assert endpoint.default_params == {"seed": 7}
    assert Judge.objects.get(name="BLEU").endpoint is None
    assert Endpoint.objects.count() == 1
    job = GenerationJob.objects.get(pk=job.pk)
    assert job.generator == endpoint and job.deliver_to == {"study": study.pk}
    plain = GenerationJob.objects.get(pk=plain.pk)
    assert plain.generator is None and plain.deliver_to == {}
