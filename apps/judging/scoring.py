"""From a judge's reply to a score or verdict: the strategy's parser, G-Eval probabilities,
the format reminder for a second ask, and pairwise verdicts about the texts themselves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from apps.judging.models import Preferred, Strategy
from apps.judging.parsers import ParseResult, Scale, get_parser, logprob_reading

REMINDERS = {
    "analysis_rating": 'Please answer again in exactly this format: "Analysis:" followed by '
    'your analysis, then a last line "Rating: n" with one whole number n from {lo} to {hi}.',
    "prometheus": 'Please answer again in exactly this format: "Feedback:" followed by your '
    'feedback, then "[RESULT] n" with one whole number n from {lo} to {hi}.',
    "score_only": "Please answer again with nothing but one whole number from {lo} to {hi}.",
    "score_0_100": "Please answer again with nothing but one whole number from 0 to 100.",
    "pairwise": 'Please answer again and end with a last line "Verdict: A", "Verdict: B" or '
    '"Verdict: tie".',
    "json_pass_score": 'Please answer again with only a JSON object {"reason": string, '
    '"pass": boolean, "score": number}, the score from {lo} to {hi}.',
    "grade_letter": "Please answer again and end with your grade, exactly in the format the "
    "instructions above ask for.",
}


@dataclass(frozen=True)
class ReplyReader:
    """Everything needed to read replies of one strategy (plain data: safe in any thread)."""

    parser: str
    scale: Scale
    use_logprobs: bool = False
    format_retry: bool = False
    reminder: str = ""
    grade_pattern: str = ""

    @classmethod
    def for_strategy(cls, strategy: Strategy) -> ReplyReader:
        template = strategy.format_reminder or REMINDERS.get(strategy.parser, "")
        reminder = template.replace("{lo}", str(strategy.scale_min)).replace(
            "{hi}", str(strategy.scale_max)
        )
        return cls(
            parser=strategy.parser,
            scale=strategy.scale,
            use_logprobs=strategy.use_logprobs,
            format_retry=strategy.format_retry,
            reminder=reminder,
            grade_pattern=strategy.grade_pattern,
        )

    def read(self, text: str, logprobs: Sequence[dict[str, Any]] | None = None) -> ParseResult:
        by_probability = None
        if self.use_logprobs:
            by_probability = logprob_reading(logprobs, self.scale)
            if by_probability.parsed:
                return by_probability
        parser = get_parser(
            self.parser,
            lo=self.scale.lo,
            hi=self.scale.hi,
            allow_decimals=self.scale.allow_decimals,
            grade_pattern=self.grade_pattern,
        )
        result = parser.parse(text)
        if by_probability is not None:
            why = by_probability.reason
            return replace(result, reason=f"{result.reason} (read from the text: {why})")
        return result

    def retry_messages(
        self, messages: Sequence[dict[str, str]], reply: str
    ) -> list[dict[str, str]]:
        """The first exchange, then the format reminder."""
        return [
            *messages,
            {"role": "assistant", "content": reply},
            {"role": "user", "content": self.reminder},
        ]


def preferred_text(verdict: str | None, original_first: bool | None) -> str:
    """A pairwise verdict ("A" = the first text shown) as "original" / "perturbed" / "tie"."""
    if not verdict or original_first is None:
        return ""
    if verdict == "tie":
        return Preferred.TIE
    first_won = verdict == "A"
    return Preferred.ORIGINAL if first_won == original_first else Preferred.PERTURBED
