# A generation job's generator is a model endpoint (that of the LLM judge it named), and the
# study whose vetting queue takes its results is a destination in ``deliver_to``: corpus no
# longer refers to judging or annotation: the columns here, the copy in 0008, the old columns
# go in 0009 (PostgreSQL alters no table in the transaction that changed its rows).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("corpus", "0006_dataset_name_per_owner"),
        ("endpoints", "0001_initial"),
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
    ]
