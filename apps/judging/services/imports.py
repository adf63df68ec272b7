"""Importing judges from a promptfoo config or an Inspect AI scorer description
(docs/import.md): check everything first (``judge_import_preview``, which saves nothing),
then create each judge's endpoint, strategy and judge in one transaction (``judge_import``):
one problem anywhere and nothing is created.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import slugify

from apps.endpoints.models import Endpoint
from apps.endpoints.services import endpoint_problems, endpoint_settings_apply
from apps.judging import selectors
from apps.judging.importing import FORMATS, ImportedJudge, ImportRefused, MappedField, judges_in
from apps.judging.importing.naming import unique_name
from apps.judging.models import Judge, Strategy
from apps.judging.services.connection_test import sample_messages
from apps.judging.services.judges import judge_save, strategy_create, strategy_problems

SLUG_LENGTH = 72


@dataclass
class JudgePreview:
    """One judge as it will be saved: its name, strategy slug, the mapping's rows and the
    prompt it sends for the sample text (the connection test's)."""

    judge: ImportedJudge
    slug: str
    messages: list[dict[str, str]]

    @property
    def rows(self) -> list[MappedField]:
        return self.judge.rows


@dataclass
class ImportPreview:
    file_format: str
    judges: list[JudgePreview]

    @property
    def format_name(self) -> str:
        return FORMATS[self.file_format]


def judge_import_preview(
    *, owner: Any, data: bytes, filename: str, base_url: str = ""
) -> ImportPreview:
    """What importing this file would create for ``owner``, checked as saving checks it
    (names, the endpoint's address and key grant, the strategy); ImportRefused naming each
    problem's field in the file. ``base_url``: every judge's server address instead of the
    file's (e.g. a local copy of the model). Nothing is saved."""
    file_format, judges = judges_in(data, filename)
    taken = set(selectors.judges_for_user(owner).values_list("name", flat=True))
    previews, problems = [], []
    for judge in judges:
        if base_url:
            judge.endpoint["base_url"] = base_url
            judge.rows.append(MappedField("(--base-url)", "endpoint.base_url", base_url))
        judge.name = judge.strategy["name"] = unique_name(judge.name, taken)
        taken.add(judge.name)
        strategy = Strategy(slug=_slug(owner, judge.name), **judge.strategy)
        problems += _problems(judge, strategy, owner)
        previews.append(JudgePreview(judge, strategy.slug, sample_messages(strategy)))
    if problems:
        raise ImportRefused(problems)
    return ImportPreview(file_format, previews)


@transaction.atomic
def judge_import(*, owner: Any, data: bytes, filename: str, base_url: str = "") -> list[Judge]:
    """Create the judges this file describes for ``owner`` (each with its endpoint and
    strategy); ImportRefused, and nothing created, when any cannot be."""
    preview = judge_import_preview(owner=owner, data=data, filename=filename, base_url=base_url)
    created = []
    for item in preview.judges:
        judge = item.judge
        try:
            strategy_create(slug=item.slug, user=owner, note="imported", **judge.strategy)
            saved = judge_save(judge=Judge(name=judge.name), user=owner, endpoint=judge.endpoint)
        except ValidationError as error:
            raise ImportRefused(_named(judge, error.message_dict)) from None
        created.append(saved)
    return created


def _problems(judge: ImportedJudge, strategy: Strategy, owner: Any) -> list[str]:
    endpoint = Endpoint(owner=owner, name=judge.name)
    endpoint_settings_apply(endpoint, judge.endpoint)
    found = {f"endpoint.{k}": v for k, v in endpoint_problems(endpoint).items()}
    found |= {f"strategy.{k}": v for k, v in strategy_problems(strategy).items()}
    return [f"{judge.source_of(target)}: {problem}" for target, problem in found.items()]


def _named(judge: ImportedJudge, problems: dict[str, list[str]]) -> list[str]:
    """A save's problems with the file's field that caused each."""
    return [f"{judge.source_of(name)}: {' '.join(texts)}" for name, texts in problems.items()]


def _slug(owner: Any, name: str) -> str:
    """A strategy slug no strategy has yet (slugs are shared by all researchers)."""
    base = slugify(f"{getattr(owner, 'username', 'shipped')}-{name}")[:SLUG_LENGTH].strip("-")
    slug, number = base, 1
    while Strategy.objects.filter(slug=slug).exists():
        number += 1
        slug = f"{base}-{number}"
    return slug
