"""Checks on the shipped catalog fixtures (fixtures/catalog/*.json).

The files are read with json and checked against docs/methods.md (aspect tree, the 18
aspect-targeted kinds, DHP tasks and metrics, the FBI release). Checks that need the published
peer data (settings.DISCERN_PEERS_DIR) or the papers are skipped when those are absent.
"""

import json
import re
from pathlib import Path

import pytest

from tests.conftest import PEERS

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "fixtures" / "catalog"
FBI_DATA = PEERS / "fbi" / "data"
HU_CRITERIA = PEERS / "hu2024" / "aspect_criteria.json"
SEEDS = PEERS.parent / "seeds"  # the papers' text, beside the peer data when present

TREE = {
    "overall": None,
    "readability": "overall",
    "fluency": "readability",
    "grammaticality": "fluency",
    "coherence": "readability",
    "simplicity": "readability",
    "adequacy": "overall",
    "faithfulness": "adequacy",
    "non-hallucination": "faithfulness",
    "non-contradiction": "faithfulness",
    "informativeness": "adequacy",
}
CRITERION_TYPES = {"default", "simplified", "detailed", "term", "list"}

TASKS = {
    "summarization",
    "dialogue-summarization",
    "paraphrase",
    "table-to-text",
    "story-completion",
    "question-answering",
    "translation",
    "dialogue-response",
    "long-form-writing",
    "factual-qa",
    "instruction-following",
    "reasoning",
}
TEXT_NAMES = {
    "summary",
    "answer",
    "story ending",
    "translation",
    "response",
    "paraphrase",
    "description",
}
DHP_METRICS = {
    "summarization": ["coherence", "consistency", "fluency", "relevance"],
    "story-completion": ["coherence", "consistency", "fluency"],
    "question-answering": ["answer-quality"],
    "translation": ["accuracy", "fluency"],
}

ASPECT_TARGETED = {
    "repetition": "fluency",
    "passive-voice": "fluency",
    "inversion": "fluency",
    "improper-connective": "coherence",
    "sentence-exchange": "coherence",
    "incorrect-verb-form": "grammaticality",
    "word-exchange": "grammaticality",
    "spelling-mistake": "grammaticality",
    "uncommon-phrase": "simplicity",
    "complex-sentence": "simplicity",
    "abbreviation": "informativeness",
    "hypernym": "informativeness",
    "sentence-deletion": "informativeness",
    "complement": "non-hallucination",
    "continuation": "non-hallucination",
    "different-entity": "non-contradiction",
    "conflicting-fact": "non-contradiction",
    "negation": "non-contradiction",
}
HU_RULES = {
    "sentence-exchange": "sentence_exchange",
    "word-exchange": "word_exchange",
    "spelling-mistake": "spelling_mistake",
    "sentence-deletion": "sentence_deletion",
}

# The FBI data release: <ability>/<file stem>; 24 kinds plus the score-invariant set.
FBI_FILES = {
    "factual": [
        "contextual-errors",
        "entity-errors",
        "incorrect-fact",
        "number-errors",
        "opposite-fact",
        "remove-fact",
    ],
    "instruction-following": [
        "assumption-errors",
        "do-less-errors",
        "do-more-errors",
        "ignore-format-errors",
        "incorrect-sequence-errors",
    ],
    "long-form": [
        "coherence-errors",
        "comprehensiveness-errors",
        "consistency-errors",
        "formatting-errors",
        "grammar-errors",
        "seq-errors",
        "spelling-errors",
        "superficial-errors",
    ],
    "reasoning": [
        "calculation-errors",
        "copying-numbers-errors",
        "final-answer-errors",
        "incorrect-units",
        "wrong-formula",
    ],
    "score-invariant": ["score_invariant"],
}
FBI_RELEASE_ONLY = {"fbi-formatting-errors", "fbi-superficial-errors"}

KIND_KEYS = {
    "slug",
    "name",
    "family",
    "level",
    "method",
    "degree",
    "target_aspect",
    "task",
    "ability",
    "score_invariant",
    "description",
    "quality_issue",
    "rule",
    "parameters",
    "source",
}
FAMILY_SOURCE = {
    "aspect-targeted": "hu2024",
    "hierarchical": "dhp",
    "fbi": "fbi",
    "adversarial": "adveval",
}


def load(name):
    with open(CATALOG / f"{name}.json", encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def aspects():
    return load("aspects")


@pytest.fixture(scope="module")
def tasks():
    return load("tasks")


@pytest.fixture(scope="module")
def kinds():
    return load("kinds")


def by_family(kinds, family):
    return [k for k in kinds if k["family"] == family]


# ---------------------------------------------------------------- aspects


def test_aspect_tree_matches_spec_in_tree_order(aspects):
    assert {a["slug"]: a["parent"] for a in aspects} == TREE
    seen = set()
    for aspect in aspects:
        assert aspect["parent"] is None or aspect["parent"] in seen, aspect["slug"]
        seen.add(aspect["slug"])
    assert len(seen) == len(aspects) == 11


def test_every_aspect_has_a_name_definition_and_five_criteria(aspects):
    for aspect in aspects:
        assert aspect["name"] and aspect["definition"].strip()
        assert set(aspect["criteria"]) == CRITERION_TYPES, aspect["slug"]
        for text in aspect["criteria"].values():
            assert text.startswith(aspect["name"] + ": ")
            assert "{T}" in text
            # {T} is the only placeholder, so str.replace / format_map is safe.
            assert set(re.findall(r"\{[^}]*\}", text)) == {"{T}"}


def test_criteria_types_relate_as_described(aspects):
    for aspect in aspects:
        c = aspect["criteria"]
        assert len(c["simplified"]) < len(c["default"]), aspect["slug"]
        assert c["detailed"].startswith(c["default"]) and len(c["detailed"]) > len(c["default"])
        assert len(c["term"]) < len(c["simplified"]), aspect["slug"]
        head, *lines = c["list"].split("\n")
        assert head == c["default"]
        assert [line.split(":")[0] for line in lines] == [f"Score {s}" for s in (5, 4, 3, 2, 1)]
        assert all(len(line) > len("Score 5: ") + 5 for line in lines)


# ---------------------------------------------------------------- tasks


def test_tasks_are_the_spec_vocabulary(tasks):
    slugs = [t["slug"] for t in tasks]
    assert len(slugs) == len(set(slugs)) == 12
    assert set(slugs) == TASKS
    for task in tasks:
        assert task["name"] and task["description"].strip()
        assert task["text_name"] in TEXT_NAMES


def test_task_metrics_are_complete_and_dhp_metrics_exact(tasks):
    metrics = {t["slug"]: [m["slug"] for m in t["metrics"]] for t in tasks}
    for slug, expected in DHP_METRICS.items():
        assert metrics[slug] == expected
    for task in tasks:
        assert task["metrics"], task["slug"]
        assert len(metrics[task["slug"]]) == len(set(metrics[task["slug"]]))
        for metric in task["metrics"]:
            assert set(metric) == {"slug", "name", "definition"}
            assert metric["name"] and metric["definition"].strip()


# ---------------------------------------------------------------- kinds


def test_kinds_have_the_schema_and_valid_values(kinds, aspects, tasks):
    aspect_slugs = {a["slug"] for a in aspects}
    task_slugs = {t["slug"] for t in tasks}
    slugs = [k["slug"] for k in kinds]
    assert len(slugs) == len(set(slugs))
    for k in kinds:
        assert set(k) == KIND_KEYS, k["slug"]
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", k["slug"])
        assert k["family"] in FAMILY_SOURCE and k["source"] == FAMILY_SOURCE[k["family"]]
        assert k["level"] in {"C", "W", "S", ""}
        assert k["method"] in {"rule", "llm"}
        assert k["degree"] in {"minor", "major", ""}
        assert k["target_aspect"] is None or k["target_aspect"] in aspect_slugs
        assert k["task"] == "" or k["task"] in task_slugs
        assert k["ability"] in {"", "long-form", "factual", "instruction-following", "reasoning"}
        assert isinstance(k["score_invariant"], bool)
        assert isinstance(k["parameters"], dict)
        assert k["name"] and k["description"].strip() and k["quality_issue"].strip()
        # rule kinds name their rule function; LLM kinds have none and no rule parameters
        if k["method"] == "rule":
            assert re.fullmatch(r"[a-z_]+", k["rule"]), k["slug"]
        else:
            assert k["rule"] == "" and k["parameters"] == {}, k["slug"]


def test_quality_issue_does_not_name_an_aspect_or_metric(kinds, aspects, tasks):
    names = {a["name"].lower() for a in aspects} | {
        m["name"].lower() for t in tasks for m in t["metrics"]
    }
    for k in kinds:
        text = k["quality_issue"].lower()
        for name in names:
            assert not re.search(r"\b" + re.escape(name) + r"\b", text), (k["slug"], name)


def test_the_18_aspect_targeted_kinds(kinds):
    hu = by_family(kinds, "aspect-targeted")
    assert {k["slug"]: k["target_aspect"] for k in hu} == ASPECT_TARGETED
    for k in hu:
        assert k["degree"] == "" and k["task"] == "" and k["ability"] == ""
        assert k["level"] in {"C", "W", "S"}
        assert not k["score_invariant"]
        assert k["rule"] == HU_RULES.get(k["slug"], "")
        assert k["method"] == ("rule" if k["slug"] in HU_RULES else "llm")


def test_hierarchical_kinds_follow_dhp(kinds):
    dhp = {k["slug"]: k for k in by_family(kinds, "hierarchical")}
    for k in dhp.values():
        assert k["level"] in {"C", "W", "S"} and k["ability"] == ""
        assert not k["score_invariant"]
        for degree in ("minor", "major"):
            if k["slug"].endswith("-" + degree):
                assert k["degree"] == degree
                twin = k["slug"][: -len(degree)] + ("major" if degree == "minor" else "minor")
                assert twin in dhp and dhp[twin]["rule"] == k["rule"]
        if k["degree"] == "":
            assert k["task"], k["slug"]  # undegreed variants exist only for a task
    rules = {k["rule"] for k in dhp.values()}
    assert {
        "char_deletion",
        "typos",
        "word_span_deletion",
        "sentence_reordering",
        "random_ending",
        "random_answer",
        "wrong_ending",
    } <= rules
    assert (
        dhp["char-deletion-minor"]["parameters"]["k"]
        < dhp["char-deletion-major"]["parameters"]["k"]
    )
    assert dhp["word-span-deletion-minor"]["parameters"] == {"k": 5}
    assert dhp["word-span-deletion-major"]["parameters"] == {"k": 25}
    assert dhp["sentence-reordering-minor"]["parameters"] == {"k": 2}
    assert dhp["sentence-reordering-major"]["parameters"] == {"k": "all"}
    assert dhp["random-ending"]["task"] == dhp["wrong-ending"]["task"] == "story-completion"
    assert dhp["random-answer"]["task"] == "question-answering"
    assert dhp["fictional-entities-minor"]["method"] == "llm"
    # every DHP task gets kinds at each level the paper uses for it
    levels = {}
    for k in dhp.values():
        for task in (
            [k["task"]] if k["task"] else ["summarization", "question-answering", "translation"]
        ):
            levels.setdefault(task, set()).add(k["level"])
    assert levels["summarization"] == levels["story-completion"] == {"C", "W", "S"}
    assert levels["question-answering"] == {"C", "W", "S"}
    assert levels["translation"] == {"C", "W"}


def test_fbi_kinds_match_the_data_release(kinds):
    fbi = {k["slug"]: k for k in by_family(kinds, "fbi")}
    expected = {
        "fbi-" + stem.replace("_", "-"): ability
        for ability, stems in FBI_FILES.items()
        for stem in stems
    }
    assert len(expected) == 25 and set(fbi) == set(expected)
    for slug, ability in expected.items():
        k = fbi[slug]
        assert k["method"] == "llm" and k["degree"] == "" and k["task"] == ""
        if ability == "score-invariant":
            assert k["score_invariant"] and k["ability"] == "" and k["target_aspect"] is None
        else:
            assert not k["score_invariant"] and k["ability"] == ability
    release_only = {s for s, k in fbi.items() if "Only in the FBI data release" in k["description"]}
    in_paper = {s for s, k in fbi.items() if "Named in the FBI paper's table" in k["description"]}
    assert release_only == FBI_RELEASE_ONLY
    assert len(in_paper) == 22
    assert sum(k["score_invariant"] for k in kinds) == 1


def test_fbi_kinds_match_the_files_on_disk(kinds):
    if not FBI_DATA.is_dir():
        pytest.skip(f"peer data not found: {FBI_DATA} (set DISCERN_PEERS_DIR)")
    on_disk = {"fbi-" + p.stem.replace("_", "-") for p in FBI_DATA.glob("*/*.tsv")}
    assert on_disk == {k["slug"] for k in by_family(kinds, "fbi")}


def test_family_counts(kinds):
    counts = {}
    for k in kinds:
        counts[k["family"]] = counts.get(k["family"], 0) + 1
    assert counts["aspect-targeted"] == 18
    assert counts["fbi"] == 25
    assert counts["hierarchical"] >= 14


# ---------------------------------------------------------------- own wording


def shingles(text, n=8):
    words = re.findall(r"[a-z0-9']+", text.lower().replace("{t}", "t").replace("{s}", "s"))
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def our_texts(aspects, tasks, kinds):
    for a in aspects:
        yield a["slug"], a["definition"]
        for kind, text in a["criteria"].items():
            yield f"{a['slug']}/{kind}", text
    for t in tasks:
        yield t["slug"], t["description"]
        for m in t["metrics"]:
            yield f"{t['slug']}/{m['slug']}", m["definition"]
    for k in kinds:
        yield k["slug"], k["description"] + "\n" + k["quality_issue"]


def test_wording_is_not_copied_from_peers_or_papers(aspects, tasks, kinds):
    sources = []
    if HU_CRITERIA.is_file():
        peer = json.loads(HU_CRITERIA.read_text(encoding="utf-8"))
        sources += [text for types in peer.values() for text in types.values()]
    sources += [
        p.read_text(encoding="utf-8", errors="replace") for p in sorted(SEEDS.glob("*.txt"))
    ]
    if not sources:
        pytest.skip("peer criteria and papers not present")
    theirs = set().union(*(shingles(s) for s in sources))
    copied = {
        key: sorted(shingles(text) & theirs)
        for key, text in our_texts(aspects, tasks, kinds)
        if shingles(text) & theirs
    }
    assert copied == {}
