"""The demo's model server (`make demo`): an OpenAI-compatible server on loopback playing one
LLM judge, "demo judge", on the demo study's texts, so that an audit and an improvement can be
tried end to end with no model and no key (docs/improve.md, "In the demo").

The judge reads: every original gets 5, every perturbed text 2, except that under any prompt
but a rubric it does not notice spelling mistakes (scored as their original). Its card says
so ("misses" on Grammaticality); **Improve this judge** finds the rubric and confirms it on the
held-out texts. The texts' kinds are read from the database when the server starts.

It answers in the format the prompt asks for: the imported judges' (docs/import.md, the
shipped examples in fixtures/judges/, imported for the demo's researcher by
``demo_judges_import``) get promptfoo's JSON, Inspect's "GRADE: C" or a closing "Y"/"N",
good texts passing and the others failing.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from aiohttp import web
from django.conf import settings

from apps.corpus.models import Perturbation, SourceItem
from apps.judging.importing import judges_in
from apps.judging.models import Judge
from apps.judging.services.imports import judge_import

MODEL = "demo-judge"
NAME = "demo judge"
MISSED = "spelling-mistake"
#: A phrase of the rubric strategy's prompt (fbi-single-rubric) and of no other shipped one.
RUBRIC = "Rubric (use the whole range"
PAIR = re.compile(r"Answer A:\n(.*?)\n\nAnswer B:\n", re.DOTALL)
#: Where an imported judge's prompt holds the judged text: promptfoo's and Inspect's.
JUDGED = (("<Output>\n", "\n</Output>"), ("[Submission]: ", "\n***"))
LETTERS = {True: "C", False: "I", None: "P"}
#: The shipped examples of judges to import (docs/import.md).
DEMO_IMPORTS = Path(settings.BASE_DIR) / "fixtures" / "judges"


class DemoJudge:
    """The judge's replies, from which text a prompt holds (see the module's docstring)."""

    def __init__(self, originals: set[str], kinds: dict[str, str]) -> None:
        self.originals, self.kinds = originals, kinds

    @classmethod
    def of_study(cls, study: Any) -> DemoJudge:
        items = SourceItem.objects.filter(dataset__studies=study)
        kinds = {
            p.text.strip(): p.kind.slug
            for p in Perturbation.objects.filter(item__in=items).select_related("kind")
        }
        return cls({i.original.strip() for i in items}, kinds)

    def reply(self, prompt: str) -> str:
        if pair := PAIR.search(prompt):
            return "A" if pair.group(1).strip() in self.originals else "B"
        return answer(prompt, self.reads_well(prompt))

    def reads_well(self, prompt: str) -> bool | None:
        """Whether the judged text seems right to this judge; None: it knows no such text."""
        rubric = RUBRIC in prompt
        judged = _judged(prompt)
        known = [t for t in (*self.originals, *self.kinds) if t and t in judged]
        if not known:
            return None
        text = max(known, key=len)
        kind = self.kinds.get(text)
        return kind is None or (kind == MISSED and not rubric)


def _judged(prompt: str) -> str:
    for start, end in JUDGED:
        if start in prompt:
            return prompt.split(start, 1)[1].split(end, 1)[0]
    return prompt.split("Assistant's answer:", 1)[-1].split("to rate.", 1)[-1]


def answer(prompt: str, good: bool | None) -> str:
    """The verdict in the format the prompt asks for (None: undecided, in the middle)."""
    why = {True: "reads well.", False: "it has an error.", None: "I cannot tell."}[good]
    share = {True: 1.0, False: 0.0, None: 0.5}[good]
    if "{reason: string, pass: boolean, score: number}" in prompt:  # promptfoo llm-rubric
        return json.dumps({"reason": why, "pass": bool(good), "score": share})
    if '"score" and "reason"' in prompt:  # promptfoo g-eval, 0-10
        return json.dumps({"score": round(10 * share), "reason": why})
    if "GRADE: $LETTER" in prompt:  # Inspect AI
        return f"{why}\nGRADE: {LETTERS[good]}"
    if '"Y" or "N"' in prompt and good is not None:  # promptfoo closed QA
        letter = "Y" if good else "N"
        return f"{why}\n{letter}\n{letter}"
    rating = {True: 5, False: 2, None: 3}[good]
    return f"Justification: {why}\nRating: {rating}"


def demo_judges_import(*, owner: Any, base_url: str) -> list[Judge]:
    """Import the shipped examples (fixtures/judges/) for ``owner``, their calls going to the
    demo's model server at ``base_url``; those already imported are left as they are."""
    imported = []
    for path in sorted(DEMO_IMPORTS.glob("*.yaml")):
        data = path.read_bytes()
        names = [judge.name for judge in judges_in(data, path.name)[1]]
        if not Judge.objects.filter(created_by=owner, name__in=names).exists():
            imported += judge_import(owner=owner, data=data, filename=path.name, base_url=base_url)
    return imported


def application(judge: DemoJudge) -> web.Application:
    """An OpenAI-compatible /v1/chat/completions answering as ``judge``."""

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        text = judge.reply(prompt)
        return web.json_response(
            {
                "id": f"chatcmpl-demo-{time.monotonic_ns()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", MODEL),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt) // 4,
                    "completion_tokens": len(text) // 4,
                    "total_tokens": (len(prompt) + len(text)) // 4,
                },
            }
        )

    app = web.Application(client_max_size=16 * 2**20)
    app.router.add_post("/v1/chat/completions", completions)
    return app
