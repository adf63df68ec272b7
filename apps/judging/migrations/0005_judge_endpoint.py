# An LLM judge's base URL, model, key variable, parameters and limits move to a model endpoint
# of its own (apps.endpoints), named, owned and shared like the judge: the column here, the
# copy in 0006, the old columns go in 0007 (PostgreSQL alters no table in the transaction
# that changed its rows).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("endpoints", "0001_initial"),
        ("judging", "0004_judge_ownership_and_key_allow_list"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="judge",
            name="judge_kind_fields",
        ),
        migrations.RemoveConstraint(
            model_name="judge",
            name="judge_concurrency",
        ),
        migrations.AddField(
            model_name="judge",
            name="endpoint",
            field=models.ForeignKey(
                blank=True,
                help_text="LLM judges: the model endpoint they call (made with the judge).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="judges",
                to="endpoints.endpoint",
            ),
        ),
    ]
