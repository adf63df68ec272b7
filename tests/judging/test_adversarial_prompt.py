"""What the generator is shown and how its replies are read (pure functions)."""

from __future__ import annotations

from apps.judging.adversarial.prompt import GeneratorInput, generator_messages, parse_candidates
from apps.judging.adversarial.rule_candidates import COMBINATIONS, rule_candidates
from apps.judging.adversarial.trajectory import Step, best_step, trajectory


def steps(*scores: float) -> list[Step]:
    return [Step(order, f"text {order}", s) for order, s in enumerate(scores)]


def test_the_trajectory_is_the_ten_best_in_ascending_order():
    made = steps(5, -3, 40, 12, 12, 7, 0, 99, 1, 2, 3, 60, -50)
    shown = trajectory(made)
    assert len(shown) == 10
    assert [s.s_fb for s in shown] == [1, 2, 3, 5, 7, 12, 12, 40, 60, 99]
    assert [s.order for s in shown if s.s_fb == 12] == [4, 3]  # the earlier one nearer the top
    assert trajectory(steps(3, 1)) == [Step(1, "text 1", 1), Step(0, "text 0", 3)]
    assert trajectory([]) == []


def test_the_best_is_the_highest_and_earliest_among_equals():
    assert best_step(steps(1, 9, 9, 4)) == Step(1, "text 1", 9)
    assert best_step([]) is None


def given(**changes) -> GeneratorInput:
    fields = {
        "task_name": "Question answering",
        "task_description": "Answer the question.",
        "text_name": "answer",
        "source": "What is two and two?",
        "criterion": "",
        "steps": trajectory(steps(10, -5.25)),
        "wanted": 3,
    } | changes
    return GeneratorInput(**fields)


def test_the_prompt_carries_the_task_the_source_and_the_trajectory():
    system, user = generator_messages(given())
    assert system["role"] == "system" and user["role"] == "user"
    text = user["content"]
    assert text.startswith("Task: Question answering. Answer the question.")
    assert "Source:\nWhat is two and two?" in text
    assert text.index("<RES>text 1</RES>\nScore: -5.2") < text.index("<RES>text 0</RES>\nScore: 10")
    assert "Write 3 new answers" in text and "<RES>" in text and "</RES>" in text
    assert "criterion" not in text


def test_the_criterion_is_shown_when_asked_and_an_empty_trajectory_is_left_out():
    text = generator_messages(given(criterion="Answers must be correct.", steps=[], wanted=1))[1][
        "content"
    ]
    assert "Evaluation criterion: Answers must be correct." in text
    assert "so far, with their scores" not in text
    assert "Write one new answer" in text


def test_candidates_are_read_between_res_tags():
    reply = "Sure!\n<RES> first </RES>\n<RES>second</RES><RES>first</RES>\n<RES>third</RES>"
    parsed = parse_candidates(reply, wanted=2)
    assert parsed.parsed and parsed.texts == ["first", "second"]
    assert "1 more than asked for left out" in parsed.reason
    assert parse_candidates("<RES>a<RES> <RES>b<RES>", 5).texts == ["a", "b"]  # the paper's tags
    nothing = parse_candidates("I cannot help with that.", 2)
    assert (nothing.parsed, nothing.texts) == (False, [])
    assert "<RES>" in nothing.reason
    assert parse_candidates("<RES>   </RES>", 2).parsed is False


def test_rule_candidates_are_new_seeded_and_from_self_contained_rules():
    original = "The cat sat on the mat. It was warm there. The dog slept by the door."
    first = rule_candidates(original, seed=7, wanted=4, tried=set())
    assert len(first) == 4
    assert first == rule_candidates(original, seed=7, wanted=4, tried=set())
    texts = {c.text for c in first}
    assert original not in texts and len(texts) == 4
    assert {c.provenance["rule"] for c in first} <= {rule for rule, _ in COMBINATIONS}
    assert not {"random_ending", "random_answer", "wrong_ending"} & {r for r, _ in COMBINATIONS}
    again = rule_candidates(original, seed=7, wanted=4, tried=texts)
    assert not texts & {c.text for c in again}
