"""A judge shared with a researcher becomes an offer they accept (JudgeShare.accepted_at).

The plain many-to-many table of ``Judge.shared_with`` becomes the table of ``JudgeShare``
(same name, columns and unique constraint: only the model state changes), then gains when each
share was offered and accepted. Every share made before is kept as accepted, so nobody loses a
judge they use (their endpoints stay shared as they were).
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def accept_existing_shares(apps, schema_editor):
    JudgeShare = apps.get_model("judging", "JudgeShare")
    now = django.utils.timezone.now()
    JudgeShare.objects.filter(accepted_at=None).update(accepted_at=now)


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0011_strategy_technique_help"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="JudgeShare",
                    fields=[
                        ("id", models.AutoField(primary_key=True, serialize=False)),
                        (
                            "judge",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="shares",
                                to="judging.judge",
                            ),
                        ),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "db_table": "judging_judge_shared_with",
                        "ordering": ["id"],
                        "unique_together": {("judge", "user")},
                    },
                ),
                migrations.AlterField(
                    model_name="judge",
                    name="shared_with",
                    field=models.ManyToManyField(
                        blank=True,
                        help_text="Researchers offered this judge: once they accept, they may "
                        "use it (its key included), not change it.",
                        related_name="+",
                        through="judging.JudgeShare",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.AddField(
            model_name="judgeshare",
            name="offered_at",
            field=models.DateTimeField(
                auto_now_add=True, default=django.utils.timezone.now
            ),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="judgeshare",
            name="accepted_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterModelOptions(
            name="judgeshare",
            options={"ordering": ["offered_at", "id"]},
        ),
        migrations.RunPython(accept_existing_shares, migrations.RunPython.noop),
    ]
