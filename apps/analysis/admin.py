from django.contrib import admin

from apps.analysis.models import HumanRating


@admin.register(HumanRating)
class HumanRatingAdmin(admin.ModelAdmin):
    list_display = ("item", "perturbation", "criterion_name", "rater", "score", "source")
    list_filter = ("criterion_name", "source")
    raw_id_fields = ("item", "perturbation")
