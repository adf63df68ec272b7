"""promptfoo's grading prompts, word for word, with promptfoo's variables in Discern's words.

From promptfoo/promptfoo: ``DEFAULT_GRADING_PROMPT`` and ``OPENAI_CLOSED_QA_PROMPT`` in
src/prompts/grading.ts (commit e5c8e0173bbabc7387304784fefaa1ba9ccea088; its ``dedent``
applied to the first), ``GEVAL_PROMPT_EVALUATE`` in src/prompts/index.ts (commit
001ead31a0416c9c4c17d4093c60542d2343cac0), as src/matchers/llmGrading.ts fills them:
llm-rubric ``output`` (the evaluated text) and ``rubric`` (the assertion's value);
closed QA ``input`` (the test's prompt), ``completion`` and ``criteria``; g-eval ``criteria``,
``steps`` (joined by "\\n- "), ``maxScore`` (10), ``input`` and ``output``.
"""

from __future__ import annotations

RUBRIC_SYSTEM = (
    "You are grading output according to a user-specified rubric. If the statement in the "
    "rubric is true, then the output passes the test. You respond with a JSON object with "
    "this structure: {reason: string, pass: boolean, score: number}\n"
    "\n"
    "Examples:\n"
    "\n"
    "<Output>Hello world</Output>\n"
    "<Rubric>Content contains a greeting</Rubric>\n"
    '{"reason": "the content contains the word \'Hello\'", "pass": true, "score": 1.0}\n'
    "\n"
    "<Output>Avast ye swabs, repel the invaders!</Output>\n"
    "<Rubric>Does not speak like a pirate</Rubric>\n"
    '{"reason": "\'avast ye\' is a common pirate term", "pass": false, "score": 0.0}'
)


def rubric_user(rubric: str) -> str:
    return "<Output>\n{{text}}\n</Output>\n<Rubric>\n" + rubric + "\n</Rubric>"


def closed_qa(criteria: str) -> str:
    return (
        "You are assessing a submitted answer on a given task based on a criterion. Here is "
        "the data:\n[BEGIN DATA]\n***\n[Task]: {{source}}\n***\n[Submission]: {{text}}\n***\n"
        "[Criterion]: " + criteria + "\n***\n[END DATA]\n"
        "Does the submission meet the criterion? First, write out in a step by step manner "
        "your reasoning about the criterion to be sure that your conclusion is correct. Avoid "
        "simply stating the correct answers at the outset. Then print only the single "
        'character "Y" or "N" (without quotes or punctuation) on its own line corresponding '
        "to the correct answer. At the end, repeat just the letter again by itself on a new "
        "line.\n\n    Reasoning:"
    )


#: promptfoo's closed-QA verdict: the reply, trailing white space removed, ends in Y (or N).
CLOSED_QA_PATTERN = r"([YN])\s*$"

#: The steps promptfoo's g-eval has the model write first (GEVAL_PROMPT_STEPS, a call of its
#: own): Discern asks once, so they are written here, the same for every criterion.
GEVAL_STEPS = (
    "Read the Prompt and the Reply in full.",
    "Check, point by point, whether what the Evaluation Criteria describe is present in the Reply.",
    "Note every place where the Reply falls short of the Evaluation Criteria.",
    "Decide how fully and clearly the Evaluation Criteria are observed in the Reply.",
)
GEVAL_MAX_SCORE = 10


def geval(criteria: str) -> str:
    steps = "\n- ".join(GEVAL_STEPS)
    top = str(GEVAL_MAX_SCORE)
    return (
        "\nYou will be given one Reply for a Prompt below. Your task is to rate the Reply on "
        "one metric.\nPlease make sure you read and understand these instructions carefully. "
        "Please keep this document open while reviewing, and refer to it as needed.\n\n"
        "**Evaluation Criteria**\n" + criteria + "\n\n**Evaluation Steps**\n- " + steps + "\n"
        "Given the evaluation steps, return a JSON with two keys: \n"
        '  1) a "score" key that MUST be an integer from 0 to ' + top + ", where " + top + " "
        "indicates that the condition described by the Evaluation Criteria is fully and "
        "clearly observed in the Reply according to the Evaluation Steps, and 0 indicates "
        "that it is not observed at all;\n"
        '  2) a "reason" key, a reason for the given score, but DO NOT QUOTE THE SCORE in your '
        "reason. Please mention specific information from Prompt and Reply in your reason, "
        "but be very concise with it!\n\n**Prompt**\n{{source}}\n\n**Reply**\n{{text}}\n\n"
        "**OUTPUT FORMAT**\nIMPORTANT: \n"
        "- Return output ONLY as a minified JSON object (no code fences).\n"
        '- The JSON object must contain exactly two keys: "score" and "reason".\n'
        "- No additional words, explanations, or formatting are needed.\n"
        "- Absolutely no additional text, explanations, line breaks, or formatting outside "
        "the JSON object are allowed.\n\nExample JSON:\n"
        '{"score":0,"reason":"The text of reply does not follow the evaluation criteria '
        'provided."}\n\nHere is the final evaluation in the required minified JSON format:\n'
        "JSON:\n"
    )
