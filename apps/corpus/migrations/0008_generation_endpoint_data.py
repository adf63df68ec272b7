# A generation job's generator becomes its judge's endpoint, its study a destination (see 0007).

from django.db import migrations


def forwards(apps, schema_editor):
    GenerationJob = apps.get_model("corpus", "GenerationJob")
    for job in GenerationJob.objects.exclude(generator=None).select_related("generator"):
        job.generator_endpoint_id = job.generator.endpoint_id
        job.save(update_fields=["generator_endpoint"])
    for job in GenerationJob.objects.exclude(study=None):
        job.deliver_to = {"study": job.study_id}
        job.save(update_fields=["deliver_to"])


def backwards(apps, schema_editor):
    GenerationJob = apps.get_model("corpus", "GenerationJob")
    Judge = apps.get_model("judging", "Judge")
    Study = apps.get_model("annotation", "Study")
    for job in GenerationJob.objects.exclude(generator_endpoint=None):
        job.generator = Judge.objects.filter(endpoint_id=job.generator_endpoint_id).first()
        job.save(update_fields=["generator"])
    for job in GenerationJob.objects.exclude(deliver_to={}):
        study_id = (job.deliver_to or {}).get("study")
        if study_id and Study.objects.filter(pk=study_id).exists():
            job.study_id = study_id
            job.save(update_fields=["study"])


class Migration(migrations.Migration):

    dependencies = [
        ("corpus", "0007_generation_endpoint_and_destinations"),
        ("judging", "0006_judge_endpoint_data"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]
