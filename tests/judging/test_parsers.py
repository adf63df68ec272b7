"""Judge output parsers (methods §7): real-looking replies, including the nasty ones."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from apps.judging.parsers import (
    PARSERS,
    AnalysisRatingParser,
    HundredPointParser,
    PairwiseParser,
    PrometheusParser,
    Scale,
    ScoreOnlyParser,
    get_parser,
    geval_logprob_score,
    logprob_reading,
    score_token_top_logprobs,
)

LIKERT = Scale(1, 5)
rating = AnalysisRatingParser(LIKERT)
prometheus = PrometheusParser(LIKERT)
score_only = ScoreOnlyParser(LIKERT)
hundred = HundredPointParser()
pairwise = PairwiseParser()


# -- analyze-then-rate ------------------------------------------------------------------------

HU_FIGURE_1 = (
    "The summary is fluent, presenting information in a coherent and grammatically \n"
    "correct manner. The sentences are well-constructed with proper use of punctuation \n"
    "and phrasing that conveys the essence of the source material effectively. Rating: 5 "
)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Analysis: The summary repeats itself twice.\nRating: 2", 2.0),
        (HU_FIGURE_1, 5.0),
        ("Analysis: Mostly fluent.\nRating: 4/5", 4.0),
        ("Analysis: Mostly fluent.\nRating: 4 out of 5", 4.0),
        ("Analysis: ok\n**Rating:** 4", 4.0),
        ("Analysis: ok\n**Rating: 4**", 4.0),
        ("Analysis: ok\nRating: `4`", 4.0),
        ("## Analysis\nThe text is coherent.\n\n## Rating\n4", 4.0),
        ("Analysis: ok\nRating:\n3", 3.0),
        ("Analysis: ok\nFinal rating: 3.", 3.0),
        ("Analysis: ok\nRating (1-5): 2", 2.0),
        ("Analysis: ok\nRating: [3]", 3.0),
        ("Analysis: ok\nRating: 4.0", 4.0),
        ("analysis: fine. rating: 1", 1.0),
        ("Analysis: good.\nRating: 4\n\nRating: 4", 4.0),  # repeated, not conflicting
        ("- Analysis: ok\n- Rating: 5", 5.0),
        ("4", 4.0),  # only a number: no doubt about it
        ("  **3**  ", 3.0),
        ("Analysis: uses 2 examples from the 3 sources.\nRating: 4", 4.0),
    ],
)
def test_analysis_rating_reads_the_rating(reply: str, expected: float) -> None:
    result = rating.parse(reply)
    assert result.status == "parsed", result.reason
    assert result.score == expected
    assert result.verdict is None


@pytest.mark.parametrize(
    ("reply", "reason_part"),
    [
        ("Analysis: good.\nRating: 4\n\nOn reflection, Rating: 2", "conflicting ratings: 2, 4"),
        ("Analysis: ...\nRating: 7", "outside the scale 1-5"),
        ("Analysis: ...\nRating: 0", "outside the scale 1-5"),
        ("Analysis: ...\nRating: -1", "outside the scale 1-5"),
        ("Analysis: ...\nRating: 8/10", "out of 10"),
        ("Analysis: ...\nRating: 3.5", "no decimals"),
        ("Analysis: ...\nRating: 4-5", "range"),
        ("Analysis: ...\nRating: 3 or 4", "range"),
        ("Analysis: ...\nRating: N/A", "not followed by a number"),
        ("Analysis: The summary is fluent and I like it.", "no 'Rating:' found"),
        ("", "empty reply"),
        ("   \n\t ", "empty reply"),
        ("**  **", "empty reply"),
        ("Analysis: ...\nRating: 80%", "percentage"),
    ],
)
def test_analysis_rating_refuses_to_guess(reply: str, reason_part: str) -> None:
    result = rating.parse(reply)
    assert result.status == "unparsed"
    assert result.score is None
    assert reason_part in result.reason


def test_decimals_only_when_the_strategy_allows_them() -> None:
    assert rating.parse("Rating: 3.5").status == "unparsed"
    lenient = AnalysisRatingParser(Scale(1, 5, allow_decimals=True))
    assert lenient.parse("Rating: 3.5").score == 3.5
    assert lenient.parse("Rating: 5.5").status == "unparsed"


def test_other_scales() -> None:
    three = AnalysisRatingParser(Scale(1, 3))
    assert three.parse("Rating: 3").score == 3.0
    assert "outside the scale 1-3" in three.parse("Rating: 4").reason
    assert three.parse("Rating: 2/3").score == 2.0
    assert three.parse("Rating: 2/5").status == "unparsed"


# -- Prometheus -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Feedback: The response covers every point of the rubric. [RESULT] 5", 5.0),
        ("Feedback: Misses the second step.\n[RESULT] 3", 3.0),
        ("Feedback: fine [RESULT]: 4", 4.0),
        ("Feedback: fine [RESULT] (4)", 4.0),
        ("Feedback: fine **[RESULT] 2**", 2.0),
        ("Feedback: fine [Result] 1", 1.0),
        ("Feedback: fine [RESULT] 4/5", 4.0),
        ("Feedback: mentions 3 issues of 5 rubric items. [RESULT] 2", 2.0),
    ],
)
def test_prometheus_reads_the_result(reply: str, expected: float) -> None:
    result = prometheus.parse(reply)
    assert result.status == "parsed", result.reason
    assert result.score == expected


@pytest.mark.parametrize(
    ("reply", "reason_part"),
    [
        ("Feedback: fine [RESULT] 6", "outside the scale"),
        ("Feedback: fine [RESULT] 2 ... [RESULT] 4", "conflicting"),
        ("Feedback: fine. Score: 4", "no '[RESULT]' marker"),
        ("Feedback: fine [RESULT] excellent", "not followed by a number"),
        ("", "empty reply"),
    ],
)
def test_prometheus_refuses_to_guess(reply: str, reason_part: str) -> None:
    result = prometheus.parse(reply)
    assert result.status == "unparsed"
    assert reason_part in result.reason


# -- score only (vanilla, G-Eval) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("4", 4.0),
        ("4.", 4.0),
        (" 2\n", 2.0),
        ("`3`", 3.0),
        ("Score: 5", 5.0),
        ("Coherence: 3", 3.0),
        ("Coherence (1-5): 3", 3.0),
        ("I would rate this summary 4 out of 5.", 4.0),
        ("On a scale of 1 to 5, I give it a 2.", 2.0),
        ("4 - the summary is consistent with the article.", 4.0),
        ("Rating: 1", 1.0),
        ("4\n\nThe summary misses 2 of the 3 key events.", 4.0),  # alone on its line
        ("My rating is 4.", 4.0),
        ("The summary covers the main points.\n\nScore: 3/5", 3.0),
        ("[RESULT] 2", 2.0),
    ],
)
def test_score_only_reads_a_bare_number(reply: str, expected: float) -> None:
    result = score_only.parse(reply)
    assert result.status == "parsed", result.reason
    assert result.score == expected


@pytest.mark.parametrize(
    ("reply", "reason_part"),
    [
        ("Score: 3\nScore: 4", "conflicting scores"),
        ("The summary is good.", "no rating where one stands"),
        ("The summary misses 2 of the 3 key events.", "no rating where one stands"),
        ("4\n\nOn reflection, I would rate it 2.", "conflicting scores: 2, 4"),
        ("9", "outside the scale"),
        ("4-5", "range"),
        ("3.7", "no decimals"),
        ("", "empty reply"),
    ],
)
def test_score_only_refuses_to_guess(reply: str, reason_part: str) -> None:
    result = score_only.parse(reply)
    assert result.status == "unparsed"
    assert reason_part in result.reason


# Replies of real models (SmolLM2-135M-Instruct through llama.cpp, and the ones that
# misled the parsers before): list and step numbers are never scores, whatever the parser.
NOT_A_RATING = [
    "1. The father of modern taxonomy is Carl Linnaeus, who developed binomial nomenclature.",
    "Step 1: read the text.",
    "Step 1: Read the summary.\nStep 2: Compare it with the article.",
    "1) The summary is concise.\n2) It keeps the main facts.",
    "The summary gives 2 reasons and 3 examples.",
    "The score of this summary is high.",
    # SmolLM2 (llama.cpp), asked for the score alone; the parser used to read these as 1 and 5
    "1. **Structure of Plastics**: Plastics are polymers consisting of long chains",
    "The answer is 5.",  # not said to be a rating: unscored rather than guessed
    "The answer to the question is:\n- 5: no problem at all on this axis.",  # the rubric echoed
]


# Replies SmolLM2-135M-Instruct (llama.cpp) gave in bench/real_model.py, with what they mean.
SMOLLM2_REPLIES = [
    (
        "1. The cat sat on the mat.\n2. The cat went to sleep in the sun.\n\nThe score is 2.",
        2.0,
        "rating 2 on the scale 1-5",
    ),
    (
        "Overall: How good the answer is as a whole, both as a piece of writing and as an "
        "answer to the task.\nRating: 6-9\nFinal Score: Overall: 9/10\n\n9/10 - Based on how "
        "well the answer matches our criterion \n",
        None,
        "is a range, not one value",
    ),
    (
        "1. **Physical Description: Mechanical properties**: Plastic is a complex, "
        "multifunctional material with various physical and chemical characteristics",
        None,
        "list and step numbers are not ratings",
    ),
    (
        "95\nRating: Excellent\nThe answer provides a thorough explanation of how plastics "
        "turn white upon bending, but the source is not provided.",
        None,
        "a rating label is not followed by a number",
    ),
]


@pytest.mark.parametrize(("reply", "score", "reason_part"), SMOLLM2_REPLIES)
def test_real_model_replies(reply: str, score: float | None, reason_part: str) -> None:
    result = rating.parse(reply)
    assert result.score == score and reason_part in result.reason, result
    assert score_only.parse(reply).score == score  # read (or refused) alike


@pytest.mark.parametrize("reply", NOT_A_RATING)
def test_list_and_step_numbers_are_never_scores(reply: str) -> None:
    for parser in (score_only, rating, prometheus, hundred):
        result = parser.parse(reply)
        assert result.status == "unparsed", (parser.name, result)
        assert result.score is None


# -- 0-100 (AdvEval) --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("85", 85.0),
        ("Score: 0", 0.0),
        ("Score: 100", 100.0),
        ("Score: 72/100", 72.0),
        ("Score: 64%", 64.0),
        ("I'd give the response a score of 35 out of 100.", 35.0),
        ("**Score:** 90", 90.0),
    ],
)
def test_hundred_point_scores(reply: str, expected: float) -> None:
    result = hundred.parse(reply)
    assert result.status == "parsed", result.reason
    assert result.score == expected


@pytest.mark.parametrize(
    ("reply", "reason_part"),
    [
        ("Score: 101", "outside the scale 0-100"),
        ("Score: 8/10", "out of 10"),
        ("Score: 70 ... Score: 75", "conflicting"),
        ("Score: 70.5", "no decimals"),
        ("", "empty reply"),
    ],
)
def test_hundred_point_refusals(reply: str, reason_part: str) -> None:
    result = hundred.parse(reply)
    assert result.status == "unparsed"
    assert reason_part in result.reason


# -- pairwise ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("A", "A"),
        ("B", "B"),
        ("b.", "B"),
        ("tie", "tie"),
        ("Tie.", "tie"),
        ("[[A]]", "A"),
        ("[[B]]", "B"),
        ("[[C]]", "tie"),  # MT-Bench's tie
        ("Output (a)", "A"),
        ("Output (b)", "B"),
        ("Verdict: B", "B"),
        ("**Verdict:** A", "A"),
        ("Final verdict: tie", "tie"),
        ("Winner: Response B", "B"),
        ("Response A is better.", "A"),
        ("It's a tie.", "tie"),
        (
            "Assistant A answers the question directly, while Assistant B adds irrelevant "
            "details.\n\nFinal verdict: [[A]]",
            "A",
        ),
        (
            "Output (a) misses the constraint on length; Output (b) follows every rule.\n\n"
            "Output (b)",
            "B",
        ),
        ("Explanation: both are correct and equally concise.\nVerdict: tie", "tie"),
        ("Answer: A\nExplanation: A is more faithful.", "A"),
        ("A is better than B.", "A"),
        ("B is the better answer.", "B"),
        ("Output (b) is clearly better than Output (a).", "B"),
        ("I prefer Response A: it keeps every fact.", "A"),
        ("Summary B is better.", "B"),
    ],
)
def test_pairwise_reads_the_verdict(reply: str, expected: str) -> None:
    result = pairwise.parse(reply)
    assert result.status == "parsed", result.reason
    assert result.verdict == expected
    assert result.score is None


@pytest.mark.parametrize(
    ("reply", "reason_part"),
    [
        ("Response A is more detailed but Response B is more accurate.", "no explicit verdict"),
        ("[[A]]\n\nOn second thought: [[B]]", "conflicting verdicts: A, B"),
        ("Verdict: A\n\nOutput (b)", "conflicting verdicts"),
        ("Both are good.", "no explicit verdict"),
        ("This is a better summary than the other one.", "no explicit verdict"),
        # SmolLM2 (llama.cpp) in bench/real_model.py
        ("A:", "no explicit verdict"),
        ("A:\nAnswer A is not better than answer B.", "no explicit verdict"),
        ("Response A is better in fluency, but B is better in accuracy.", "conflicting"),
        ("", "empty reply"),
    ],
)
def test_pairwise_refuses_to_guess(reply: str, reason_part: str) -> None:
    result = pairwise.parse(reply)
    assert result.status == "unparsed"
    assert reason_part in result.reason


# -- two ratings in one reply: conflicting in every format ------------------------------------

TWO_RATINGS = [
    (score_only, "2\n\nHmm, on reflection: 5", "conflicting scores: 2, 5"),
    (hundred, "20\n\nHmm, on reflection: 50", "conflicting scores: 20, 50"),
    (hundred, "Score: 20\n\nHmm, on reflection: 50", "conflicting scores: 20, 50"),
    (rating, "2\n\nHmm, on reflection: 5", "conflicting ratings: 2, 5"),
    (rating, "Analysis: ok\nRating: 2\n\nHmm, on reflection: 5", "conflicting ratings: 2, 5"),
    (rating, "Analysis: ok\nRating: 2\n\n5", "conflicting ratings: 2, 5"),
    (rating, "Analysis: ok\nRating: 4\nScore: 3", "conflicting ratings: 3, 4"),
    (prometheus, "2\n\nHmm, on reflection: 5", "conflicting results: 2, 5"),
    (prometheus, "Feedback: ok [RESULT] 2\n\nHmm, on reflection: 5", "conflicting results: 2, 5"),
    (pairwise, "A\n\nHmm, on reflection: B", "conflicting verdicts: A, B"),
    (pairwise, "Verdict: A\n\nHmm, on reflection: B", "conflicting verdicts: A, B"),
    (pairwise, "[[A]]\n\nOn second thought: Output (b)", "conflicting verdicts: A, B"),
    (pairwise, "Verdict: A\n\nActually: tie", "conflicting verdicts: A, tie"),
]


@pytest.mark.parametrize(("parser", "reply", "reason"), TWO_RATINGS)
def test_two_different_ratings_are_conflicting_in_every_format(
    parser: PairwiseParser | ScoreOnlyParser | AnalysisRatingParser | PrometheusParser,
    reply: str,
    reason: str,
) -> None:
    result = parser.parse(reply)
    assert result.status == "unparsed", (parser.name, result)
    assert result.score is None and result.verdict is None
    assert result.reason == reason


@pytest.mark.parametrize(
    ("parser", "reply", "expected"),
    [
        # the same rating twice
        (score_only, "2\n\nHmm, on reflection: 2", 2.0),
        (hundred, "20\n\nHmm, on reflection: 20", 20.0),
        (rating, "Analysis: ok\nRating: 2\n\nHmm, on reflection: 2", 2.0),
        (prometheus, "Feedback: ok [RESULT] 2\n\nHmm, on reflection: 2", 2.0),
        (pairwise, "A\n\nHmm, on reflection: A", "A"),
        # numbers that are not a second rating: other levels named in the analysis, the
        # scale's wording, counts off the scale, a fraction of another number
        (rating, "Analysis: it does not deserve a 5; 3 out of 5 facts are kept.\nRating: 4", 4.0),
        (rating, "Analysis: on the scale used: 1-5\nWords: 120\nRating: 4", 4.0),
        (rating, "Analysis: ok\nRating: 4\n\nOut of ten: 8/10", 4.0),
        (prometheus, "Feedback: unlike a score 5 response, it misses a step. [RESULT] 4", 4.0),
        (prometheus, "Feedback: a score of 3 would be too low.\nWords: 120\n[RESULT] 4", 4.0),
        (score_only, "4\n\nOn a 1-5 scale, that is good.", 4.0),
        (pairwise, "Note: a\nVerdict: B", "B"),  # a bare side must be a capital letter
    ],
)
def test_a_repeated_rating_or_a_number_that_is_no_rating_keeps_parsing(
    parser: PairwiseParser | ScoreOnlyParser | AnalysisRatingParser | PrometheusParser,
    reply: str,
    expected: float | str,
) -> None:
    result = parser.parse(reply)
    assert result.status == "parsed", (parser.name, result)
    assert (result.verdict if isinstance(expected, str) else result.score) == expected


@given(st.integers(1, 5), st.integers(1, 5))
def test_a_second_rating_on_reflection_is_never_ignored(first: int, second: int) -> None:
    on_reflection = f"\n\nHmm, on reflection: {second}"
    for parser, reply in (
        (score_only, f"{first}{on_reflection}"),
        (hundred, f"{first * 10}\n\nHmm, on reflection: {second * 10}"),
        (rating, f"Analysis: ok\nRating: {first}{on_reflection}"),
        (prometheus, f"Feedback: ok [RESULT] {first}{on_reflection}"),
    ):
        assert parser.parse(reply).parsed == (first == second), (parser.name, reply)


# -- registry ---------------------------------------------------------------------------------


def test_registry_names_every_format() -> None:
    assert set(PARSERS) == {
        "analysis_rating",
        "prometheus",
        "score_only",
        "score_0_100",
        "pairwise",
        "json_pass_score",  # imported judges (docs/import.md)
        "grade_letter",
    }


def test_get_parser_configures_the_scale() -> None:
    parser = get_parser("analysis_rating", lo=1, hi=3)
    assert parser.scale == Scale(1, 3)
    assert parser.parse("Rating: 3").score == 3.0
    assert parser.parse("Rating: 5").status == "unparsed"
    assert get_parser("score_0_100").scale == Scale(0, 100)
    assert get_parser("score_only", lo=1, hi=5, allow_decimals=True).parse("3.5").score == 3.5
    with pytest.raises(KeyError, match="unknown output format"):
        get_parser("nope")
    with pytest.raises(ValueError):
        get_parser("score_only", lo=1)
    with pytest.raises(ValueError):
        Scale(5, 1)


# -- properties -------------------------------------------------------------------------------


@given(st.integers(1, 5), st.text(alphabet=st.characters(blacklist_categories=["Nd"])))
def test_any_in_scale_rating_after_any_digit_free_analysis_is_read(n: int, analysis: str) -> None:
    assume("rating" not in analysis.lower())  # a second "Rating:" label would be refused
    result = rating.parse(f"Analysis: {analysis}\nRating: {n}")
    assert result.status == "parsed", result.reason
    assert result.score == n


@given(st.integers(1, 5), st.integers(1, 5))
def test_two_different_ratings_are_never_resolved(first: int, second: int) -> None:
    result = rating.parse(f"Rating: {first}\nRating: {second}")
    assert result.parsed == (first == second)


@given(st.integers(-1000, 1000).filter(lambda n: not 1 <= n <= 5))
def test_out_of_scale_is_never_scored(n: int) -> None:
    for parser in (rating, prometheus, score_only):
        result = parser.parse(f"Rating: {n} [RESULT] {n}")
        assert result.status == "unparsed"


@given(st.text())
def test_parsers_never_raise_and_never_score_out_of_scale(text: str) -> None:
    for parser in (rating, prometheus, score_only, hundred, pairwise):
        result = parser.parse(text)
        if result.score is not None:
            assert parser.scale.lo <= result.score <= parser.scale.hi
        assert result.parsed == (result.score is not None or result.verdict is not None)


# -- G-Eval logprobs --------------------------------------------------------------------------


def test_geval_weighted_mean_of_scale_tokens() -> None:
    top = {"4": math.log(0.6), "3": math.log(0.3), "5": math.log(0.1)}
    result = geval_logprob_score(top, LIKERT)
    assert result.status == "parsed"
    assert result.score == pytest.approx(4 * 0.6 + 3 * 0.3 + 5 * 0.1)


def test_geval_renormalizes_over_valid_tokens_and_merges_spellings() -> None:
    top = [
        ("4", math.log(0.3)),
        (" 4", math.log(0.1)),  # same value as "4"
        ("2", math.log(0.2)),
        ("The", math.log(0.3)),  # not a score
        ("9", math.log(0.05)),  # off the scale
        ("4.5", math.log(0.05)),
    ]
    result = geval_logprob_score(top, LIKERT)
    assert result.score == pytest.approx((4 * 0.4 + 2 * 0.2) / 0.6)


def test_geval_accepts_openai_shapes() -> None:
    class Top:
        def __init__(self, token: str, logprob: float) -> None:
            self.token, self.logprob = token, logprob

    objects = [Top("1", math.log(0.5)), Top("2", math.log(0.5))]
    dicts = [{"token": "1", "logprob": math.log(0.5)}, {"token": "2", "logprob": math.log(0.5)}]
    assert geval_logprob_score(objects, LIKERT).score == pytest.approx(1.5)
    assert geval_logprob_score(dicts, LIKERT).score == pytest.approx(1.5)


def test_geval_without_a_valid_token_is_unparsed() -> None:
    result = geval_logprob_score({"The": -0.1, "9": -1.0, "x": -2.0}, LIKERT)
    assert result.status == "unparsed"
    assert "no token of the scale" in result.reason
    assert geval_logprob_score([], LIKERT).status == "unparsed"
    assert geval_logprob_score({"3": -math.inf}, LIKERT).status == "unparsed"


def test_geval_finds_the_scale_tokens_wherever_they_are_in_the_top_logprobs() -> None:
    """The model wrote "The score is 4": no generated token is a digit at first, but the
    alternatives at some position hold the scale's tokens; renormalised over the scale."""
    content = [
        {"token": "The", "logprob": -0.4, "top_logprobs": [{"token": "The", "logprob": -0.4}]},
        {
            "token": " answer",
            "logprob": -0.9,
            "top_logprobs": [
                {"token": " answer", "logprob": math.log(0.4)},
                {"token": "4", "logprob": math.log(0.3)},
                {"token": "2", "logprob": math.log(0.1)},
            ],
        },
    ]
    result = logprob_reading(content, LIKERT)
    assert result.parsed
    assert result.score == pytest.approx((4 * 0.3 + 2 * 0.1) / 0.4)


def test_geval_says_precisely_why_it_has_no_score() -> None:
    assert logprob_reading(None, LIKERT).reason == "the endpoint returned no logprobs"
    content = [{"token": "Good", "logprob": -0.1, "top_logprobs": [{"token": "Ok", "logprob": -2}]}]
    reason = logprob_reading(content, LIKERT).reason
    assert "logprobs came back for 1 tokens (up to 1 alternatives each)" in reason
    assert "no token of the scale 1-5 is among them" in reason


def test_score_token_is_the_first_scale_token() -> None:
    content = [
        {"token": "Score", "logprob": -0.1, "top_logprobs": []},
        {"token": ":", "logprob": -0.1, "top_logprobs": []},
        {"token": " 4", "logprob": -0.2, "top_logprobs": [{"token": " 4", "logprob": -0.2}]},
    ]
    assert score_token_top_logprobs(content, LIKERT) == [(" 4", -0.2)]
    assert score_token_top_logprobs(content[:2], LIKERT) is None


@given(
    st.dictionaries(
        st.sampled_from(["1", "2", "3", "4", "5", " 3", "x", "10"]),
        st.floats(-20, 0),
        min_size=1,
    )
)
def test_geval_score_stays_within_the_scale(top: dict[str, float]) -> None:
    result = geval_logprob_score(top, LIKERT)
    if result.parsed:
        assert result.score is not None
        assert 1 - 1e-9 <= result.score <= 5 + 1e-9
