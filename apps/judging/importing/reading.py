"""Reading an uploaded file: capped, YAML (JSON is YAML) through ``yaml.safe_load``, a mapping
at the top; then the format it is, by its fields."""

from __future__ import annotations

from typing import Any

import yaml

from apps.judging.importing import inspect_scorer, promptfoo
from apps.judging.importing.mapping import ImportedJudge, ImportRefused

MAX_BYTES = 256 * 1024
FORMATS = {"promptfoo": "a promptfoo config", "inspect": "an Inspect AI scorer description"}


def read_document(data: bytes, filename: str) -> dict[str, Any]:
    """The file's top-level mapping, or ImportRefused saying what is wrong with it."""
    if len(data) > MAX_BYTES:
        raise ImportRefused(
            [f"{filename}: {len(data):,} bytes; an import takes at most {MAX_BYTES // 1024} KB"]
        )
    try:
        text = data.decode("utf-8")
        document = yaml.safe_load(text)
    except UnicodeDecodeError:
        raise ImportRefused([f"{filename}: not text (UTF-8)"]) from None
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        problem = getattr(error, "problem", None) or "unreadable"
        raise ImportRefused([f"{filename}: not YAML or JSON{line}: {problem}"]) from None
    except RecursionError:
        raise ImportRefused([f"{filename}: nested too deeply to read"]) from None
    if not isinstance(document, dict):
        raise ImportRefused(
            [
                f"{filename}: a promptfoo config or an Inspect AI scorer description is a "
                f"mapping of fields, not {_kind(document)}"
            ]
        )
    return document


def judges_in(data: bytes, filename: str) -> tuple[str, list[ImportedJudge]]:
    """The format of the file ("promptfoo" or "inspect") and the judges it describes."""
    document = read_document(data, filename)
    stem = filename.rsplit("/", 1)[-1].rsplit(".", 1)[0] or "imported"
    if "scorer" in document:
        return "inspect", [inspect_scorer.judge_of(document, stem)]
    if {"tests", "defaultTest"} & set(document):
        return "promptfoo", promptfoo.judges_of(document, stem)
    raise ImportRefused(
        [
            f"{filename}: neither a promptfoo config (it has no tests nor defaultTest) nor an "
            "Inspect AI scorer description (it has no scorer)"
        ]
    )


def _kind(value: Any) -> str:
    if value is None:
        return "an empty file"
    return "a list" if isinstance(value, list) else f"a single value ({type(value).__name__})"
