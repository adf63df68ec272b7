from django.contrib import admin

from apps.annotation.models import (
    Assessment,
    Comparison,
    CriterionAssignment,
    ExpertVote,
    JudgementChange,
    Study,
    StudyMembership,
    Vetting,
)


class MembershipInline(admin.TabularInline):
    model = StudyMembership
    extra = 0


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "owner", "vetting_overlap", "comparison_groups", "created_at")
    filter_horizontal = ("datasets", "kinds", "criteria")
    readonly_fields = ("plan_built_at", "plan_queued_at", "plan_problem")
    inlines = [MembershipInline]


@admin.register(StudyMembership)
class StudyMembershipAdmin(admin.ModelAdmin):
    list_display = ("study", "user", "role")


class ReadOnlyAdmin(admin.ModelAdmin):
    """Judgements change only through the pages and the API, which keep their history."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Vetting)
class VettingAdmin(ReadOnlyAdmin):
    list_display = ("study", "perturbation", "annotator", "verdict", "updated_at")
    list_filter = ("study", "verdict")
    list_select_related = (
        "study",
        "perturbation__kind",
        "perturbation__item__dataset",
        "annotator",
    )


@admin.register(Comparison)
class ComparisonAdmin(ReadOnlyAdmin):
    list_display = ("study", "perturbation", "criterion", "annotator", "choice", "outcome")
    list_filter = ("study", "outcome")
    list_select_related = (
        "study",
        "criterion",
        "annotator",
        "perturbation__kind",
        "perturbation__item__dataset",
    )


@admin.register(ExpertVote)
class ExpertVoteAdmin(ReadOnlyAdmin):
    list_display = ("study", "expert", "task", "kind", "metric")
    list_filter = ("study",)
    list_select_related = ("study", "expert", "task", "kind", "metric__task")


@admin.register(Assessment)
class AssessmentAdmin(ReadOnlyAdmin):
    list_display = ("study", "unit", "annotator", "score", "updated_at")
    list_filter = ("study",)
    list_select_related = ("study", "unit", "annotator")


@admin.register(JudgementChange)
class JudgementChangeAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "study", "user", "judgement", "idempotency_key")
    list_filter = ("study", "judgement")
    list_select_related = ("study", "user")


@admin.register(CriterionAssignment)
class CriterionAssignmentAdmin(ReadOnlyAdmin):
    list_display = ("study", "group", "annotator", "criterion")
    list_filter = ("study", "group")
    list_select_related = ("study", "annotator", "criterion")
