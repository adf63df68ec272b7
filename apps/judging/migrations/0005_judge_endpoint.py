# An LLM judge's base URL, model, key variable, parameters and limits move to a model endpoint
# of its own (apps.endpoints), named, owned and shared like the judge.

import django.db.models.deletion
from django.conf import settings
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


def judges_to_endpoints(apps, schema_editor):
    Judge = apps.get_model("judging", "Judge")
    Endpoint = apps.get_model("endpoints", "Endpoint")
    for judge in Judge.objects.filter(kind="llm").order_by("pk"):
        endpoint = Endpoint.objects.create(
            name=judge.name,
            owner_id=judge.created_by_id,
            **{name: getattr(judge, name) for name in SETTINGS},
        )
        endpoint.shared_with.set(judge.shared_with.all())
        judge.endpoint = endpoint
        judge.save(update_fields=["endpoint"])


def endpoints_to_judges(apps, schema_editor):
    Judge = apps.get_model("judging", "Judge")
    for judge in Judge.objects.exclude(endpoint=None).select_related("endpoint"):
        for name in SETTINGS:
            setattr(judge, name, getattr(judge.endpoint, name))
        judge.save(update_fields=list(SETTINGS))


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
        migrations.RunPython(judges_to_endpoints, endpoints_to_judges),
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
