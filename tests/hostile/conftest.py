"""Shared steps of the hostile-file tests: the three ways in, and 'nothing changed'."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from apps.analysis.models import HumanRating
from apps.catalog.models import Criterion
from apps.corpus.importing import items_import
from apps.corpus.models import Dataset, ImportJob, Perturbation, PerturbationVersion, SourceItem
from tests.hostile.cases import Case


def database_state() -> tuple[int, ...]:
    return tuple(
        model.objects.count()
        for model in (
            Dataset,
            SourceItem,
            Perturbation,
            PerturbationVersion,
            Criterion,
            HumanRating,
        )
    )


@pytest.fixture
def earlier(catalog, tmp_path):
    """One good import first, so 'unchanged' means more than 'still empty'."""
    path = tmp_path / "earlier.jsonl"
    path.write_text(json.dumps({"id": "e1", "original": "Earlier text."}) + "\n")
    items_import(path=path, dataset_name="earlier")


def command_error(command: str, case: Case, folder: Path, *args: str) -> str:
    path = folder / case.name
    path.write_bytes(case.data)
    with pytest.raises(CommandError) as failure:
        call_command(command, str(path), *args)
    return str(failure.value)


def upload(case: Case) -> SimpleUploadedFile:
    return SimpleUploadedFile(case.name, case.data)


def page_text(response) -> str:
    assert response.status_code == 200, response.status_code
    return html.unescape(response.content.decode())


def no_job_left_behind() -> None:
    """Every job ended, and its upload folder (the file, anything unzipped) is gone."""
    for job in ImportJob.objects.all():
        assert job.status in ("done", "failed"), job.status
        assert job.finished_at is not None
        assert not Path(job.path).parent.exists(), "the upload must be removed once imported"
