"""The hostile-file corpus: files an attacker (or a careless export) might upload.

Each case is generated here, in code, with the message the importer must give. The tests in
this folder feed every case through the command line, the upload page and the API, and check
that nothing was written and no job was left running.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    name: str  # the uploaded file's name
    data: bytes
    message: str  # must appear in the error, as shown to the user

    def __str__(self) -> str:
        return self.name


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def _jsonl(*objects: dict) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objects).encode()


GOOD = {"id": "g1", "original": "A good text."}

ITEM_CASES = [
    Case(
        "nul.csv",
        b"id,original\ng1,Fine.\nn1,Hello\x00world\n",
        "nul.csv, row 3, field 'original': contains a NUL character",
    ),
    Case(
        "nul.jsonl",
        _jsonl(GOOD, {"id": "n1", "original": "x", "source": "a\x00b"}),
        "nul.jsonl, row 2, field 'source': contains a NUL character",
    ),
    Case(
        "nul-in-metadata.jsonl",
        _jsonl(GOOD, {"id": "n1", "original": "x", "metadata": {"k": "\x00"}}),
        "nul-in-metadata.jsonl, row 2, field 'metadata': contains a NUL character",
    ),
    Case(
        "number.jsonl",
        _jsonl(GOOD, {"id": "n1", "original": 42}),
        "number.jsonl, row 2, field 'original': must be a string",
    ),
    Case(
        "number-task.jsonl",
        _jsonl(GOOD, {"id": "n1", "original": "x", "task": 7}),
        "number-task.jsonl, row 2, field 'task': must be a string",
    ),
    Case(
        "number-explanation.jsonl",
        _jsonl(
            GOOD,
            {
                "id": "n1",
                "original": "x",
                "perturbations": [{"kind": "negation", "text": "y", "explanation": 5}],
            },
        ),
        "number-explanation.jsonl, row 2, field 'perturbations[0]': id and explanation must be "
        "strings",
    ),
    Case(
        "surrogate.jsonl",
        _jsonl(GOOD) + b'{"id": "s1", "original": "bad \\ud800 text"}\n',
        "surrogate.jsonl, row 2, field 'original': contains a lone surrogate (\\ud800)",
    ),
    Case(
        "surrogate-kind.jsonl",
        _jsonl(GOOD) + b'{"id": "s1", "original": "x", "perturbations": [{"kind": "negation", '
        b'"text": "\\udfff"}]}\n',
        "surrogate-kind.jsonl, row 2, field 'perturbed': contains a lone surrogate (\\udfff)",
    ),
    Case(
        "nested.jsonl",
        _jsonl(GOOD)
        + ('{"id": "d1", "original": "x", "metadata": {"a": ' + _deep(100_000) + "}}\n").encode(),
        "nested.jsonl, row 2: JSON nested more than 32 levels deep",
    ),
    Case(
        "nested.csv",
        ('id,original,metadata\nd1,x,"{""a"": ' + _deep(50) + '}"\n').encode(),
        "nested.csv, row 2, field 'metadata': JSON nested more than 32 levels deep",
    ),
    Case(
        "infinite.jsonl",
        _jsonl(GOOD) + b'{"id": "i1", "original": "x", "metadata": {"n": 1e999}}\n',
        "infinite.jsonl, row 2: the number 1e999 is too large",
    ),
    Case(
        "nan.jsonl",
        _jsonl(GOOD) + b'{"id": "i1", "original": "x", "metadata": {"n": NaN}}\n',
        "nan.jsonl, row 2: NaN is not a JSON number",
    ),
    Case(
        "digits.jsonl",
        _jsonl(GOOD) + b'{"id": "i1", "original": "x", "metadata": {"n": ' + b"9" * 5000 + b"}}\n",
        "digits.jsonl, row 2: not valid JSON (a number with too many digits)",
    ),
    Case(
        "unclosed.csv",
        b'id,original\ng1,Fine.\nq1,"Hello\nq2,World\n',
        "unclosed.csv, row 3: a quoted field starting on line 3 is not closed properly",
    ),
    Case(
        "text-after-quote.csv",
        b'id,original\nq1,"Hello" world\nq2,Fine.\n',
        "text-after-quote.csv, row 2: a quoted field starting on line 2 is not closed properly",
    ),
    Case(
        "unclosed.tsv",
        b'id\toriginal\ng1\tFine.\nq1\t"Hello\nq2\tWorld\n',
        "unclosed.tsv, row 3: a quoted field starting on line 3 is not closed properly",
    ),
    Case(
        "long-perturbation-id.csv",
        (
            "id,original,kind,perturbed,perturbation_id\np1,x,negation,y," + "z" * 300 + "\n"
        ).encode(),
        "long-perturbation-id.csv, row 2, field 'perturbation_id': longer than 200 characters",
    ),
    Case(
        "long-id.jsonl",
        _jsonl({"id": "i" * 201, "original": "x"}),
        "long-id.jsonl, row 1, field 'id': longer than 200 characters",
    ),
]


def zip_of(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


FBI_HEADER = b"cdx\tquestion\tog\tperturbed_gpt4\n"

ZIP_CASES = [
    Case(
        "bomb.zip",
        zip_of({"factual/entity-errors.tsv": FBI_HEADER + b"a" * 1_500_000}),
        "bomb.zip: member 'factual/entity-errors.tsv' expands",
    ),
    Case(
        "too-big.zip",
        zip_of(
            {f"factual/part-{n}.tsv": FBI_HEADER + bytes(range(256)) * 4000 for n in range(3)},
            zipfile.ZIP_STORED,
        ),
        "too-big.zip: unpacks to more than 2,000,000 bytes",
    ),
    Case(
        "escape.zip",
        zip_of({"../../etc/factual/x.tsv": FBI_HEADER}),
        "escape.zip: unsafe member name '../../etc/factual/x.tsv'",
    ),
    Case(
        "fbi-quote.zip",
        zip_of({"factual/entity-errors.tsv": FBI_HEADER + b'c1\tq\t"og\tp\nc2\tq\tog\tp\n'}),
        "factual/entity-errors.tsv, row 2: a quoted field starting on line 2 is not closed",
    ),
    Case("broken.zip", b"PK\x03\x04 this is not a zip", "broken.zip: not a readable zip file"),
    Case(
        "many.zip",
        zip_of({f"factual/{n}.tsv": b"" for n in range(60)}),
        "many.zip: 60 members, over the limit of 50",
    ),
]
# The limits the zip cases are written against (the tests set them).
ZIP_LIMITS = {
    "DISCERN_ZIP_MAX_BYTES": 2_000_000,
    "DISCERN_ZIP_MAX_MEMBERS": 50,
    "DISCERN_ZIP_MAX_RATIO": 100,
}

CRITERIA_CASES = [
    Case(
        "case.json",
        json.dumps({"Fluency": {"Gold": "One."}, "fluency": {"Gold": "Two."}}).encode(),
        "case.json, field 'case-fluency-gold': two descriptions give the same criterion",
    ),
    Case(
        "labels.json",
        json.dumps({"Fluency": {"Gold": "One.", "gold": "Two."}}).encode(),
        "labels.json, field 'labels-fluency-gold': two descriptions give the same criterion",
    ),
    Case(
        "nul.json",
        json.dumps({"Fluency": {"Gold": "a\x00b"}}).encode(),
        "nul.json, field 'Fluency.Gold': contains a NUL character",
    ),
    Case(
        "surrogate.json",
        b'{"Fluency": {"Gold": "a \\ud800 b"}}',
        "surrogate.json, field 'Fluency.Gold': contains a lone surrogate",
    ),
    Case(
        "nested.json",
        ('{"Fluency": {"Gold": ' + _deep(100_000) + "}}").encode(),
        "nested.json: JSON nested more than 32 levels deep",
    ),
    Case(
        "long-label.json",
        json.dumps({"Fluency": {"Selection" + "1" * 150: "Text."}}).encode(),
        "would be longer than 120 characters",
    ),
]
LONG_SOURCE = "s" * 101
LONG_SOURCE_MESSAGE = "field 'source': longer than 100 characters"

RATINGS_HEADER = b"item,perturbation,criterion,rater,score\n"
RATINGS_CASES = [
    Case(
        "long-rater.csv",
        RATINGS_HEADER + b"s1,,coherence,e1,4\ns1,,coherence," + b"r" * 101 + b",3\n",
        "long-rater.csv, row 3, field 'rater': longer than 100 characters",
    ),
    Case(
        "long-criterion.csv",
        RATINGS_HEADER + b"s1,,coherence,e1,4\ns1,," + b"c" * 101 + b",e1,3\n",
        "long-criterion.csv, row 3, field 'criterion': longer than 100 characters",
    ),
    Case(
        "nul.csv",
        RATINGS_HEADER + b"s1,,coherence,e\x001,4\n",
        "nul.csv, row 2, field 'rater': contains a NUL character",
    ),
    Case(
        "unclosed.csv",
        RATINGS_HEADER + b's1,,coherence,e1,4\ns1,,"coherence,e2,4\ns1,,fluency,e2,3\n',
        "unclosed.csv, row 3: a quoted field is not closed properly",
    ),
    Case(
        "surrogate.jsonl",
        b'{"item": "s1", "criterion": "c\\ud800", "rater": "e1", "score": 3}\n',
        "surrogate.jsonl, row 1, field 'criterion': contains a lone surrogate",
    ),
    Case(
        "object.jsonl",
        b'{"item": "s1", "criterion": {"a": 1}, "rater": "e1", "score": 3}\n',
        "object.jsonl, row 1, field 'criterion': must be a string or a number",
    ),
    Case(
        "nested.jsonl",
        (
            '{"item": "s1", "criterion": "c", "rater": "e1", "score": ' + _deep(100_000) + "}\n"
        ).encode(),
        "nested.jsonl, row 1: JSON nested more than 32 levels deep",
    ),
]
