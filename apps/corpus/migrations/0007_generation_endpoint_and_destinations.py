# A generation job's generator is a model endpoint (that of the LLM judge it named), and the
# study whose vetting queue takes its results is a destination in ``deliver_to``: corpus no
# longer refers to judging or annotation.

import django.db.models.deletion
from django.db import migrations, models


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
        ("corpus", "0006_dataset_name_per_owner"),
        ("endpoints", "0001_initial"),
        ("judging", "0005_judge_endpoint"),
    ]

    operations = [
        migrations.AddField(
            model_name="generationjob",
            name="deliver_to",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text='Where the results go too, as {destination: id}: e.g. {"study": 3}, '
                "that study's vetting queue (see generation/destinations.py).",
            ),
        ),
        migrations.AddField(
            model_name="generationjob",
            name="generator_endpoint",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="endpoints.endpoint",
            ),
        ),
        migrations.RunPython(forwards, backwards),
        migrations.RemoveField(model_name="generationjob", name="study"),
        migrations.RemoveField(model_name="generationjob", name="generator"),
        migrations.RenameField(
            model_name="generationjob", old_name="generator_endpoint", new_name="generator"
        ),
        migrations.AlterField(
            model_name="generationjob",
            name="generator",
            field=models.ForeignKey(
                blank=True,
                help_text="The model endpoint that writes the LLM kinds (none: rule kinds only).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="endpoints.endpoint",
            ),
        ),
    ]
