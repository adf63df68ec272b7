# Judge prices per million tokens, as providers list them (they were per 1,000).

from decimal import Decimal

from django.db import migrations, models

FIELDS = ("price_per_million_prompt_tokens", "price_per_million_completion_tokens")


def scaled(factor: Decimal):
    def scale(apps, schema_editor):
        Judge = apps.get_model("judging", "Judge")
        for judge in Judge.objects.exclude(**{f: None for f in FIELDS}):
            for field in FIELDS:
                if getattr(judge, field) is not None:
                    setattr(judge, field, getattr(judge, field) * factor)
            judge.save(update_fields=FIELDS)

    return scale


class Migration(migrations.Migration):
    dependencies = [("judging", "0012_judge_shares_are_offers")]

    operations = [
        migrations.RenameField("judge", "price_per_1k_prompt_tokens", FIELDS[0]),
        migrations.RenameField("judge", "price_per_1k_completion_tokens", FIELDS[1]),
        migrations.AlterField(
            model_name="judge",
            name=FIELDS[0],
            field=models.DecimalField(
                blank=True,
                decimal_places=6,
                help_text="As providers list it: the price of a million prompt (input) tokens.",
                max_digits=16,
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="judge",
            name=FIELDS[1],
            field=models.DecimalField(
                blank=True,
                decimal_places=6,
                help_text="The price of a million completion (output) tokens.",
                max_digits=16,
                null=True,
            ),
        ),
        migrations.RunPython(scaled(Decimal(1000)), scaled(Decimal("0.001"))),
    ]
