"""Judges scripted for the local fake OpenAI-compatible server (tests/fakes/openai_server.py):
each reply follows from which text the prompt holds, and the model name says which judge
answers. ``careful`` scores every perturbed text lower (a score-invariant one as its original)
and prefers the original in either order; ``careless`` scores the kinds in ``missed`` as their
original (unless shown the original as reference, or prompted with ``caught_by``: a phrase of
one strategy's template) and always prefers the first text shown; ``generator`` writes no
candidate; ``gold`` rates everything 80 of 100; ``stubborn`` misses what ``careless`` does,
whatever the prompt. A few-shot prompt's examples are not the text judged: only what follows
"to rate." is read."""

from __future__ import annotations

import re
from typing import Any

from apps.corpus.models import Perturbation, SourceItem

PAIR = re.compile(r"Answer A:\n(.*?)\n\nAnswer B:\n(.*?)\n\nReply", re.DOTALL)
INVARIANT = "fbi-score-invariant"


class ScriptedJudges:
    def __init__(
        self,
        originals: set[str],
        perturbed: dict[str, str],
        missed: set[str],
        caught_by: str = "",
    ) -> None:
        self.originals, self.perturbed, self.missed = originals, perturbed, missed
        self.caught_by = caught_by

    @classmethod
    def of(cls, study: Any, missed: set[str], caught_by: str = "") -> ScriptedJudges:
        """The script for a study's texts (read once: the server answers from its own loop)."""
        items = SourceItem.objects.filter(dataset__studies=study)
        perturbed = {
            p.text.strip(): p.kind.slug
            for p in Perturbation.objects.filter(item__in=items).select_related("kind")
        }
        return cls({i.original.strip() for i in items}, perturbed, missed, caught_by)

    def __call__(self, request: dict[str, Any]) -> str:
        model = request.get("model")
        if model == "generator":
            return "Here are some thoughts, but no candidate between the tags."
        if model == "gold":
            return "80"
        careless = model in ("careless", "stubborn")
        prompt = "\n".join(str(m.get("content") or "") for m in request.get("messages", []))
        pair = PAIR.search(prompt)
        if pair is not None:
            first_is_original = pair.group(1).strip() in self.originals
            return "A" if careless or first_is_original else "B"
        caught = bool(self.caught_by) and self.caught_by in prompt
        reference = "Assistant's answer:" in prompt
        if reference:  # the judged text comes after the reference (the original)
            prompt = prompt.split("Assistant's answer:", 1)[1]
        prompt = prompt.split("to rate.", 1)[-1]  # after a few-shot prompt's examples
        text = max((t for t in [*self.originals, *self.perturbed] if t in prompt), key=len)
        if text in self.originals:
            return "Justification: fine.\nRating: 5"
        kind = self.perturbed[text]
        helped = model != "stubborn" and (reference or caught)
        missed = careless and kind in self.missed and not helped
        kept = kind == INVARIANT or missed
        return f"Justification: {'fine' if kept else 'flawed'}.\nRating: {5 if kept else 2}"
