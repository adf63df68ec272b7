from django.contrib import admin

from apps.corpus.models import (
    Dataset,
    GenerationJob,
    ImportJob,
    Perturbation,
    PerturbationVersion,
    SourceItem,
)


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ("name", "task", "owner", "created_at")


@admin.register(SourceItem)
class SourceItemAdmin(admin.ModelAdmin):
    list_display = ("external_id", "dataset", "task")
    list_filter = ("dataset", "task")
    search_fields = ("external_id", "original", "source")


class VersionInline(admin.TabularInline):
    model = PerturbationVersion
    extra = 0
    readonly_fields = ("number", "text", "explanation", "author", "note", "created_at")


@admin.register(Perturbation)
class PerturbationAdmin(admin.ModelAdmin):
    list_display = ("id", "item", "kind", "origin", "external_id", "created_at")
    list_filter = ("kind__family", "origin", "kind")
    search_fields = ("external_id", "text")
    raw_id_fields = ("item",)
    inlines = [VersionInline]


@admin.register(PerturbationVersion)
class PerturbationVersionAdmin(admin.ModelAdmin):
    list_display = ("perturbation", "number", "author", "created_at")
    raw_id_fields = ("perturbation",)


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("id", "target", "original_name", "status", "rows_done", "rows_total")


@admin.register(GenerationJob)
class GenerationJobAdmin(admin.ModelAdmin):
    list_display = ("id", "dataset", "status", "done", "total", "generator", "created_at")
    list_filter = ("status",)
    filter_horizontal = ("kinds",)
