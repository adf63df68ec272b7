"""The parsers imported judges read with: promptfoo's JSON answer and letter grades. A reply
they cannot read with certainty is unparsed, never guessed."""

from __future__ import annotations

import pytest

from apps.judging.parsers import DEFAULT_GRADE_PATTERN, Scale, get_parser, grade_pattern_problem

RUBRIC = Scale(0, 1, allow_decimals=True)


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ('{"reason": "greets", "pass": true, "score": 1.0}', 1.0),
        ('{"reason": "half", "pass": false, "score": 0.4}', 0.4),
        ('```json\n{"reason": "fenced", "pass": true, "score": 0.75}\n```', 0.75),
        ('Sure! {"reason": "no score", "pass": true}', 1.0),
        ('{"reason": "no score", "pass": false}', 0.0),
        ('{"pass": true, "score": 0}', 0.0),  # the score wins over pass
        ('{not json} then {"score": 0.5}', 0.5),
    ],
)
def test_json_pass_score_reads_promptfoos_answer(reply, score):
    result = get_parser("json_pass_score", lo=0, hi=1, allow_decimals=True).parse(reply)
    assert result.parsed and result.score == score


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("It passes.", "no JSON object"),
        ('{"reason": "only a reason"}', 'neither "score" nor "pass"'),
        ('{"score": "0.9"}', '"score" is not a number'),
        ('{"score": 7}', "off the scale 0-1"),
        ('{"score": true}', '"score" is not a number'),
        ('{"pass": "yes"}', 'neither "score" nor "pass"'),
        ("", "no JSON object"),
    ],
)
def test_json_pass_score_leaves_bad_answers_unparsed(reply, why):
    result = get_parser("json_pass_score", lo=0, hi=1, allow_decimals=True).parse(reply)
    assert not result.parsed and why in result.reason


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("The answer is right.\nGRADE: C", 1.0),
        ("Partly.\nGRADE: P", 0.5),
        ("Wrong.\ngrade : i", 0.0),
        ("GRADE: C because it matches", 1.0),
    ],
)
def test_grade_letter_reads_inspects_grades(reply, score):
    result = get_parser("grade_letter", lo=0, hi=1, allow_decimals=True).parse(reply)
    assert result.parsed and result.score == score


@pytest.mark.parametrize(
    "reply",
    ["GRADE: C\nOn reflection more text", "No grade here.", "GRADE: X", "", "Grade C"],
)
def test_grade_letter_leaves_replies_without_a_grade_unparsed(reply):
    assert not get_parser("grade_letter", lo=0, hi=1).parse(reply).parsed


def test_a_stored_pattern_replaces_the_default():
    parser = get_parser("grade_letter", lo=0, hi=1, grade_pattern=r"Verdict:\s*([CI])")
    assert parser.parse("Verdict: I").score == 0.0
    assert not parser.parse("GRADE: C").parsed
    closed_qa = get_parser("grade_letter", lo=0, hi=1, grade_pattern=r"([YN])\s*$")
    assert closed_qa.parse("Reasoning.\nY\nY\n").score == 1.0
    assert not closed_qa.parse("Reasoning, no letter.").parsed
    with pytest.raises(ValueError, match="reads no grade pattern"):
        get_parser("score_only", grade_pattern="x(y)")


def test_grade_patterns_are_checked():
    assert grade_pattern_problem(DEFAULT_GRADE_PATTERN) is None
    assert "capture group" in grade_pattern_problem("GRADE: [CPI]")
    assert "not a regular expression" in grade_pattern_problem("GRADE: ([CPI]")
