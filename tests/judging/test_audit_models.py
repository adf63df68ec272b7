"""The audit models: one study or one dataset, and progress summed over the parts' runs."""

import pytest
from django.db import IntegrityError, transaction

from apps.judging.models import AuditPart, AuditStatus, AuditSubject, JudgeAudit, PartKind
from tests.factories import DatasetFactory, StudyFactory
from tests.judging.conftest import new_run


@pytest.mark.django_db
def test_an_audit_covers_a_study_or_a_dataset_never_both_nor_neither(researcher):
    study, dataset = StudyFactory(owner=researcher), DatasetFactory()
    with transaction.atomic(), pytest.raises(IntegrityError):
        JudgeAudit.objects.create(owner=researcher, study=study, dataset=dataset)
    with transaction.atomic(), pytest.raises(IntegrityError):
        JudgeAudit.objects.create(owner=researcher)
    audit = JudgeAudit.objects.create(owner=researcher, dataset=dataset)
    assert audit.status == AuditStatus.PENDING
    assert audit.progress() == dict.fromkeys(
        ("total", "done", "failed", "cached", "unscored", "http_requests"), 0
    )


def test_progress_sums_the_runs_of_its_parts(demo):
    from apps.judging.models import Judge

    metric = Judge.objects.get(metric="bleu")
    audit = JudgeAudit.objects.create(owner=demo.owner, study=demo)
    subject = AuditSubject.objects.create(audit=audit, judge=metric)
    first, second = new_run(demo, metric), new_run(demo, metric)
    type(first).objects.filter(pk=first.pk).update(total=10, done=4, cached=2)
    type(second).objects.filter(pk=second.pk).update(total=5, done=5, failed=0, http_requests=3)
    AuditPart.objects.create(subject=subject, part=PartKind.DISCERNMENT, run=first)
    AuditPart.objects.create(subject=subject, part=PartKind.FBI_SINGLE, run=second)
    AuditPart.objects.create(
        subject=subject, part=PartKind.FBI_PAIRWISE, skipped_reason="metric judges have no pairs"
    )
    progress = audit.progress()
    assert (progress["total"], progress["done"], progress["cached"]) == (15, 9, 2)
    assert progress["http_requests"] == 3
