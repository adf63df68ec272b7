"""Import jobs: an uploaded file becomes a job; small ones run now, big ones in the worker."""

from __future__ import annotations

import logging
import shutil
import uuid
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from apps.corpus.importing import ImportFailed, items_import
from apps.corpus.importing.repeats import DROP
from apps.corpus.models import Dataset, ImportJob
from apps.corpus.unzipping import zip_unpack

logger = logging.getLogger(__name__)

PROGRESS_EVERY = 0.02  # save progress each time another 2% is done


def import_job_start(
    *,
    upload: UploadedFile,
    dataset_name: str,
    file_format: str,
    task: str,
    user,
    repeats: str = DROP,
) -> ImportJob:
    """Store the upload and create its job; run it now if small, else hand it to the worker."""
    folder = Path(settings.MEDIA_ROOT) / "imports" / uuid.uuid4().hex
    folder.mkdir(parents=True)
    name = Path(upload.name or "upload").name
    path = folder / name
    with path.open("wb") as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
    job = ImportJob.objects.create(
        target=ImportJob.Target.ITEMS,
        dataset_name=dataset_name,
        file_format=file_format,
        path=str(path),
        original_name=name,
        created_by=user,
        summary={"task": task, "repeats": repeats},
    )
    if (upload.size or 0) > settings.DISCERN_BACKGROUND_IMPORT_BYTES:
        from workers.tasks.imports import run_import_job

        transaction.on_commit(lambda: run_import_job.delay(job.pk))
    else:
        import_job_run(job_id=job.pk)
        job.refresh_from_db()
    return job


def import_job_run(*, job_id: int) -> None:
    """Run one import job, recording progress and the outcome. Safe to call twice.

    A job is queued once, so finding it already running means the task was delivered again
    because the worker running it died (killed, out of memory): that job is failed, not left
    running for ever.
    """
    claimed = ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.PENDING).update(
        status=ImportJob.Status.RUNNING
    )
    if not claimed:
        _fail_abandoned(job_id)
        return
    job = ImportJob.objects.get(pk=job_id)
    step = [0.0]

    def progress(done: int, total: int) -> None:
        if total and (done / total >= step[0] + PROGRESS_EVERY or done == total):
            step[0] = done / total
            ImportJob.objects.filter(pk=job_id).update(rows_done=done, rows_total=total)

    try:
        path = _unpacked(Path(job.path))
        summary = items_import(
            path=path,
            dataset_name=job.dataset_name,
            file_format=job.file_format or None,
            task=job.summary.get("task", ""),
            repeats=job.summary.get("repeats", DROP),
            owner=job.created_by,
            progress=progress,
        )
    except ImportFailed as exc:
        _finish(job_id, ImportJob.Status.FAILED, errors=exc.as_strings())
    except Exception as exc:  # anything else still ends the job, with a reason, and is logged
        logger.exception("import job %s failed", job_id)
        reason = f"{job.original_name}: the import stopped on an unexpected error "
        _finish(job_id, ImportJob.Status.FAILED, errors=[reason + f"({type(exc).__name__})"])
    else:
        _finish(job_id, ImportJob.Status.DONE, summary=summary.as_dict())
        if summary.perturbations_created:
            _diffs_later(job.created_by, job.dataset_name)
    finally:
        _remove_upload(Path(job.path))


def _diffs_later(owner, dataset_name: str) -> None:
    """The worker stores the new texts' diffs once the import is committed, so neither the
    upload nor an annotator's first look at a text waits for them (docs/annotation.md). A
    broker that cannot be reached leaves the import as it is."""
    from workers.tasks.imports import store_diffs

    dataset = Dataset.objects.filter(owner=owner, name=dataset_name).only("pk").first()
    if dataset is None:
        return

    def queue() -> None:
        try:
            store_diffs.delay(dataset.pk)
        except Exception:  # the import stands: each text's diff is then computed when shown
            logger.warning("could not queue the diffs of dataset %s", dataset.pk, exc_info=True)

    transaction.on_commit(queue)


def _fail_abandoned(job_id: int) -> None:
    job = ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.RUNNING).first()
    if job is None:
        return
    reason = (
        f"{job.original_name}: the worker running this import stopped before it finished "
        "(restarted or out of memory); nothing was imported, upload the file again"
    )
    _finish(job_id, ImportJob.Status.FAILED, errors=[reason])
    _remove_upload(Path(job.path))


def _remove_upload(path: Path) -> None:
    """Delete the job's upload folder (the file and anything unpacked from it)."""
    uploads = (Path(settings.MEDIA_ROOT) / "imports").resolve()
    folder = path.parent.resolve()
    if folder.parent == uploads:
        shutil.rmtree(folder, ignore_errors=True)


def _finish(job_id: int, status: str, errors: list[str] | None = None, summary=None) -> None:
    fields: dict[str, object] = {
        "status": status,
        "finished_at": timezone.now(),
        "errors": errors or [],
    }
    if summary is not None:
        fields["summary"] = summary
    ImportJob.objects.filter(pk=job_id).update(**fields)


def _unpacked(path: Path) -> Path:
    """A .zip (an FBI-style folder, zipped) is unpacked beside itself; other files stay."""
    if path.suffix.lower() != ".zip":
        return path
    target = path.with_suffix("")
    if target.exists():
        shutil.rmtree(target)
    target.mkdir()
    zip_unpack(path=path, target=target)
    roots = [p for p in target.iterdir() if p.is_dir() and not p.name.startswith("__")]
    # A zip of the folder itself holds one top folder; a zip of its contents holds abilities.
    if len(roots) == 1 and not list(target.glob("*/*.tsv")):
        return roots[0]
    return target


@transaction.atomic
def dataset_mark_validated(*, dataset: Dataset, validated: bool) -> Dataset:
    """Mark (or unmark) a dataset's perturbations as already validated by its publisher:
    judge runs on vetted perturbations then take them without re-vetting (docs/judging.md)."""
    Dataset.objects.filter(pk=dataset.pk).update(publisher_validated=validated)
    dataset.publisher_validated = validated
    return dataset
