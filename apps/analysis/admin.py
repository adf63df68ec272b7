from django.contrib import admin

from apps.analysis.models import HumanRating, ReportSnapshot


@admin.register(HumanRating)
class HumanRatingAdmin(admin.ModelAdmin):
    list_display = ("item", "perturbation", "criterion_name", "rater", "score", "source")
    list_filter = ("criterion_name", "source")
    raw_id_fields = ("item", "perturbation")


@admin.register(ReportSnapshot)
class ReportSnapshotAdmin(admin.ModelAdmin):
    list_display = ("name", "study", "run", "status", "seconds", "updated_at")
    list_filter = ("name", "status")
    readonly_fields = ("payload",)
