from django.contrib import admin

from apps.judging.models import Judge, JudgeCall, JudgeRun, Strategy


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "endpoint", "metric", "created_by")
    list_filter = ("kind",)
    raw_id_fields = ("endpoint",)


@admin.register(Strategy)
class StrategyAdmin(admin.ModelAdmin):
    """Read-only here: strategies are checked and versioned by the services (use the
    Strategies page or the API)."""

    list_display = ("slug", "version", "name", "family", "parser", "samples")
    list_filter = ("family", "parser")

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = ("id", "judge", "strategy", "status", "total", "done", "failed", "created_by")
    list_filter = ("status", "judge")
    raw_id_fields = ("study", "dataset")


@admin.register(JudgeCall)
class JudgeCallAdmin(admin.ModelAdmin):
    list_display = ("id", "run", "identity", "parse_status", "score", "verdict", "cached")
    list_filter = ("parse_status", "cached")
    raw_id_fields = ("run", "item", "perturbation", "cached_from")
    search_fields = ("identity", "request_id", "cache_key")
