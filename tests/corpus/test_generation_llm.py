"""LLM-written kinds end to end: the real openai client against the local fake server."""

import pytest

from apps.catalog.models import KindPrompt, PerturbationKind
from apps.corpus.generation.jobs import generation_job_run
from apps.corpus.models import GenerationJob, Perturbation
from apps.endpoints.models import Endpoint
from tests.factories import DatasetFactory, SourceItemFactory
from tests.fakes.fixtures import fake_openai_server as fake_openai_server
from tests.fakes.openai_server import FakeOpenAIServer, _prompt_text

pytestmark = pytest.mark.django_db
ORIGINALS = [
    "The bridge reopened on Friday after two years of repairs.",
    "Clover between wheat rows raised yields by eight percent.",
    "The library will close at the end of March.",
]


def negating_reply(request) -> str:
    """A generator that negates the last text of the prompt, or gives up on the library."""
    prompt = _prompt_text(request)
    original = next(
        o
        for o in ORIGINALS
        if o in prompt.split("<perturbed>")[-1] or prompt.rstrip().endswith(o) or o in prompt[-400:]
    )
    if "library" in original:
        return "I cannot help with that."
    return (
        f"<perturbed>{original.replace(' after', ' despite', 1).replace(' raised', ' did not raise', 1)}"
        "</perturbed>\n<explanation>Negated the main claim.</explanation>"
    )


@pytest.fixture
def generator(monkeypatch, catalog):
    server = FakeOpenAIServer(reply=negating_reply)
    server.__enter__()
    monkeypatch.setenv("DISCERN_KEY_FAKE_GENERATOR", "sk-test-not-a-real-key")
    endpoint = Endpoint.objects.create(
        name="generator",
        base_url=server.base_url,
        model="fake-writer",
        api_key_env="DISCERN_KEY_FAKE_GENERATOR",
        max_concurrency=4,
    )
    yield endpoint, server
    server.__exit__(None, None, None)


def _run(generator_judge, seed=0):
    dataset = DatasetFactory()
    for n, text in enumerate(ORIGINALS):
        SourceItemFactory(dataset=dataset, external_id=f"t{n}", original=text)
    job = GenerationJob.objects.create(dataset=dataset, generator=generator_judge, seed=seed)
    job.kinds.set(PerturbationKind.objects.filter(slug="negation"))
    generation_job_run(job_id=job.pk)
    job.refresh_from_db()
    return job


def test_llm_kind_writes_perturbations_with_the_call_as_provenance(generator):
    judge, server = generator
    job = _run(judge)
    made = Perturbation.objects.filter(origin="llm").order_by("item__external_id")
    assert [p.text for p in made] == [
        "The bridge reopened on Friday despite two years of repairs.",
        "Clover between wheat rows did not raise yields by eight percent.",
    ]
    first = made[0]
    assert first.explanation == "Negated the main claim."
    prompt = KindPrompt.objects.get(kind__slug="negation", version=1)
    assert first.generation["model"] == "fake-writer"
    assert first.generation["prompt_version"] == prompt.version
    assert first.generation["request_id"] and first.generation["reply"].startswith("<perturbed>")
    assert any(prompt.instruction in m["content"] for m in first.generation["messages"])
    assert first.generation["params"]["max_tokens"] == job.max_tokens
    assert "sk-test" not in str(first.generation)  # the key is never stored
    assert first.versions.get().number == 1
    # the reply with no usable text is kept in the problems, not turned into a perturbation
    assert job.counts["unusable"] == 1 and job.counts["created"] == 2
    problem = next(p for p in job.problems if p["item"] == "t2")
    assert "I cannot help with that." in problem["reply"] and "unusable reply" in problem["reason"]
    assert server.request_count == 3


def test_rerunning_makes_no_new_calls_for_what_exists(generator):
    judge, server = generator
    job = _run(judge)
    again = GenerationJob.objects.create(dataset=job.dataset, generator=judge, seed=0)
    again.kinds.set(job.kinds.all())
    generation_job_run(job_id=again.pk)
    again.refresh_from_db()
    # the two stored perturbations are not asked for again; the unusable one is retried once
    assert server.request_count == 4
    assert again.counts["already_there"] == 2
    assert Perturbation.objects.filter(origin="llm").count() == 2


def test_a_failing_endpoint_is_reported_per_item(generator):
    judge, server = generator
    from tests.fakes.openai_server import Fault

    judge.max_attempts = 2
    judge.save()
    for _ in range(6):
        server.enqueue(Fault.server_error())
    job = _run(judge)
    failed = [p for p in job.problems if p["reason"].startswith("call failed")]
    assert len(failed) == 3 and job.counts.get("created", 0) == 0
