"""A scripted world for adversarial searches on the local fake OpenAI-compatible server.

Three models on the fake server, told apart by model name (the generator is an LLM judge's
endpoint; gold and victim are LLM judges):

- the generator reads the levels of the candidates in its prompt's trajectory and proposes
  texts one level higher ("Answer at level 3, variant 1."): it improves along the trajectory;
- the gold judge rates every text 90 (good);
- the victim rates a text ``100 - 20 * level`` (level 0 is R0; texts not written by the
  generator, such as the rule baseline's, stay at level 0).

So for R+ (alpha 1) ``S_fb = 90 - (100 - 20 L) = 20 L - 10``: -10 for R0, then 10, 30, 50...
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from apps.corpus.models import Dataset
from apps.endpoints.models import Endpoint
from apps.judging.models import AdversarialSearch, Judge, JudgeRun
from apps.judging.services import JudgeChoice, SearchSetup, adversarial_search_create
from apps.judging.services.searches import adversarial_search_start
from tests.factories import DatasetFactory, SourceItemFactory
from tests.fakes.openai_server import FakeOpenAIServer
from tests.judging.conftest import llm_judge, strategy

LEVEL = re.compile(r"level (\d+)")
WANTED = re.compile(r"Write (\d+) new|Write one new")
GOLD = 90


def _prompt(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request.get("messages", []))


def level_of(text: str) -> int:
    found = LEVEL.findall(text)
    return int(found[-1]) if found else 0


def victim_score(level: int) -> int:
    return max(0, 100 - 20 * level)


def generator_reply(prompt: str) -> str:
    trajectory = prompt.split("Source:", 1)[-1]
    levels = [int(x) for x in re.findall(r"<RES>[^<]*?level (\d+)", trajectory)]
    top = max(levels, default=0)
    wanted_match = WANTED.search(prompt)
    wanted = int(wanted_match.group(1)) if wanted_match and wanted_match.group(1) else 1
    return "\n".join(
        f"<RES>Answer at level {top + 1}, variant {i + 1}.</RES>" for i in range(wanted)
    )


def scripted_reply(request: dict[str, Any]) -> str:
    prompt = _prompt(request)
    model = request.get("model")
    if model == "generator-model":
        return generator_reply(prompt)
    judged = prompt.split("Answer with a single whole number")[0]
    judged = judged.rsplit(":\n", 1)[-1]  # the text, after "<text name>:"
    if model == "gold-model":
        return str(GOLD)
    # only the generator's texts climb levels: R0 and its rule-based variants stay at 0
    return str(victim_score(level_of(judged) if "variant" in judged else 0))


@dataclass
class World:
    server: FakeOpenAIServer
    owner: Any
    dataset: Dataset
    generator: Endpoint
    gold: Judge
    victim: Judge
    criterion: Any

    def setup(self, **options: Any) -> SearchSetup:
        fields: dict[str, Any] = {
            "dataset": self.dataset,
            "generator": self.generator,
            "victim": JudgeChoice(self.victim, strategy("adveval-0-100")),
            "gold": [JudgeChoice(self.gold, strategy("adveval-gold-0-100"))],
            "direction": "R+",
            "criterion": self.criterion,
            "target_score": 50,
            "max_iterations": 10,
            "query_budget": 300,
            "candidates_per_iteration": 2,
            "rule_baseline": False,
        } | options
        return SearchSetup(**fields)

    def create(self, start: bool = False, **options: Any) -> AdversarialSearch:
        search = adversarial_search_create(
            user=self.owner, setup=self.setup(**options), start=False
        )
        if start:
            adversarial_search_start(search=search)
        return search


def scripted_world(demo: Any, server: FakeOpenAIServer, items: int = 1) -> World:
    """A dataset of ``items`` items whose R0 is at level 0, and the three scripted models."""
    from apps.catalog.models import Criterion

    server.reply = scripted_reply
    owner = demo.owner
    task = demo.datasets.first().task
    dataset = DatasetFactory(name="scripted", owner=owner, task=task)
    for number in range(items):
        SourceItemFactory(
            dataset=dataset,
            external_id=f"s{number}",
            task=task,
            source=f"Question {number}: what is the answer?",
            original=f"Answer at level 0 (item {number}).",
        )
    seeded = {"default_params": {"seed": 1}}  # the gold samples differ by seed
    criterion = Criterion.objects.get(key="discern-overall-default")
    return World(
        server=server,
        owner=owner,
        dataset=dataset,
        generator=llm_judge(server, name="generator", model="generator-model").endpoint,
        gold=llm_judge(server, name="gold", model="gold-model", **seeded),
        victim=llm_judge(server, name="victim", model="victim-model"),
        criterion=criterion,
    )


@dataclass
class Searched:
    """A study whose adversarial search is done, with annotators to check its texts."""

    study: Any
    search: AdversarialSearch
    annotators: list[Any]
    texts: dict[str, Any]  # the item's external id -> its adversarial perturbation


def searched_study(
    demo: Any, server: FakeOpenAIServer, items: int, annotators: int = 3, thread: bool = False
):
    """The demo study with an R+ search of ``items`` scripted items done (every final text at
    level 3, S_gold 90), and ``annotators`` more annotators. ``thread``: work the search in a
    thread of its own (a browser test's thread runs Playwright's event loop)."""
    from django.db import connection

    from apps.judging.services import adversarial_search_work
    from tests.factories import MembershipFactory, UserFactory

    world = scripted_world(demo, server, items=items)
    demo.datasets.add(world.dataset)
    search = world.create(study=demo, target_score=50, rule_baseline=False)
    # running, but with no worker task queued: a session's worker must not take it over
    AdversarialSearch.objects.filter(pk=search.pk).update(status="running")
    JudgeRun.objects.filter(search_judge__search=search).update(status="running")
    if thread:

        def work() -> None:
            try:
                adversarial_search_work(search_id=search.pk)
            finally:
                connection.close()

        worker = threading.Thread(target=work)
        worker.start()
        worker.join(120)
    else:
        adversarial_search_work(search_id=search.pk)
    search.refresh_from_db()
    assert search.status == "done", search.error
    people = [
        MembershipFactory(
            study=demo, user=UserFactory(username=f"checker{n}", role="annotator"), role="annotator"
        ).user
        for n in range(annotators)
    ]
    texts = {
        it.item.external_id: it.perturbation
        for it in search.items.select_related("item", "perturbation")
    }
    return Searched(demo, search, people, texts)
