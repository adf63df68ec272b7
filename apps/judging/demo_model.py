"""The demo's model server (`make demo`): an OpenAI-compatible server on loopback playing one
LLM judge, "demo judge", on the demo study's texts, so that an audit and an improvement can be
tried end to end with no model and no key (docs/improve.md, "In the demo").

The judge reads: every original gets 5, every perturbed text 2, except that under any prompt
but a rubric it does not notice spelling mistakes (scored as their original). Its card says
so ("misses" on Grammaticality); **Improve this judge** finds the rubric and confirms it on the
held-out texts. The texts' kinds are read from the database when the server starts.
"""

from __future__ import annotations

import re
import time
from typing import Any

from aiohttp import web

from apps.corpus.models import Perturbation, SourceItem

MODEL = "demo-judge"
NAME = "demo judge"
MISSED = "spelling-mistake"
#: A phrase of the rubric strategy's prompt (fbi-single-rubric) and of no other shipped one.
RUBRIC = "Rubric (use the whole range"
PAIR = re.compile(r"Answer A:\n(.*?)\n\nAnswer B:\n", re.DOTALL)


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
        rubric = RUBRIC in prompt
        judged = prompt.split("Assistant's answer:", 1)[-1].split("to rate.", 1)[-1]
        known = [t for t in (*self.originals, *self.kinds) if t and t in judged]
        if not known:
            return "Justification: I cannot tell.\nRating: 3"
        text = max(known, key=len)
        kind = self.kinds.get(text)
        if kind is None or (kind == MISSED and not rubric):
            return "Justification: reads well.\nRating: 5"
        return "Justification: it has an error.\nRating: 2"


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
