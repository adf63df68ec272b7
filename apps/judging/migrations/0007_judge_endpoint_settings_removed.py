# The judge's endpoint settings live on its endpoint now (copied in 0006).

from django.db import migrations, models

SETTINGS = (
    "base_url",
    "api_key_env",
    "model",
    "default_params",
    "max_concurrency",
    "requests_per_minute",
    "timeout_s",
    "max_attempts",
    "max_tokens_param",
)


class Migration(migrations.Migration):

    dependencies = [
        ("judging", "0006_judge_endpoint_data"),
    ]

    operations = [
        *[migrations.RemoveField(model_name="judge", name=name) for name in SETTINGS],
        migrations.AddConstraint(
            model_name="judge",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("endpoint", None), ("kind", "metric"), ("metric__in", ["bleu", "chrf", "rougeL"])
                    ),
                    models.Q(("endpoint__isnull", False), ("kind", "llm"), ("metric", "")),
                    _connector="OR",
                ),
                name="judge_kind_fields",
            ),
        ),
    ]
