from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("judging", "0016_improvements")]

    operations = [
        migrations.AddField(
            model_name="strategy",
            name="grade_pattern",
            field=models.CharField(
                blank=True,
                help_text="Letter grades: the regular expression whose first group is the "
                "letter (empty: Inspect AI's GRADE: C/P/I).",
                max_length=300,
            ),
        ),
        migrations.AlterField(
            model_name="strategy",
            name="parser",
            field=models.CharField(
                choices=[
                    ("analysis_rating", 'Analysis, then "Rating: n" (Hu et al.)'),
                    (
                        "grade_letter",
                        'A letter grade: "GRADE: C/P/I" (Inspect AI) or a last "Y"/"N" '
                        "(promptfoo)",
                    ),
                    (
                        "json_pass_score",
                        'JSON {"reason", "pass", "score"} (promptfoo llm-rubric, g-eval)',
                    ),
                    ("pairwise", 'A verdict between two texts: "A", "B" or "tie"'),
                    ("prometheus", 'Feedback, then "[RESULT] n" (Prometheus)'),
                    ("score_0_100", "A score from 0 to 100 (AdvEval)"),
                    ("score_only", "A score alone (vanilla, G-Eval)"),
                ],
                max_length=32,
            ),
        ),
    ]
