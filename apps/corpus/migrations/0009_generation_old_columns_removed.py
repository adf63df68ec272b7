# A generation job's generator and destinations were copied in 0008: the old columns go.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("corpus", "0008_generation_endpoint_data"),
    ]

    operations = [
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
