from django.contrib import admin

from apps.catalog.models import Aspect, Criterion, KindPrompt, Metric, PerturbationKind, Task


class MetricInline(admin.TabularInline):
    model = Metric
    extra = 0


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "text_name")
    inlines = [MetricInline]


@admin.register(Metric)
class MetricAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "task")
    list_filter = ("task",)


@admin.register(Aspect)
class AspectAdmin(admin.ModelAdmin):
    list_display = ("slug", "name", "parent", "position")


@admin.register(Criterion)
class CriterionAdmin(admin.ModelAdmin):
    list_display = ("key", "aspect", "description_type", "scale_min", "scale_max", "source")
    list_filter = ("aspect", "description_type", "source")
    search_fields = ("key", "text")


@admin.register(PerturbationKind)
class PerturbationKindAdmin(admin.ModelAdmin):
    list_display = ("slug", "family", "level", "method", "degree", "target_aspect", "ability")
    list_filter = ("family", "level", "method", "degree", "ability", "score_invariant")
    search_fields = ("slug", "name", "description")

    @admin.display(description="Expected impact")
    def impact(self, obj: PerturbationKind) -> str:
        return ", ".join(a.name for a in obj.expected_impact())

    readonly_fields = ("impact",)


@admin.register(KindPrompt)
class KindPromptAdmin(admin.ModelAdmin):
    """Editing a prompt saves a new version; the old one stays for runs that used it."""

    list_display = ("kind", "version", "created_at", "note")
    list_filter = ("kind__family",)
    readonly_fields = ("version", "created_at")

    def save_model(self, request, obj, form, change):
        if change:
            latest = KindPrompt.objects.filter(kind=obj.kind).order_by("-version").first()
            obj.pk = None
            obj.version = (latest.version if latest else 0) + 1
        elif not obj.version:
            obj.version = 1
        super().save_model(request, obj, form, change)
