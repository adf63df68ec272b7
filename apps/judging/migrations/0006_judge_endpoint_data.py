# Each LLM judge's endpoint settings are copied to an endpoint of its own (see 0005).

from django.db import migrations

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
        ("judging", "0005_judge_endpoint"),
    ]

    operations = [
        migrations.RunPython(judges_to_endpoints, endpoints_to_judges),
    ]
