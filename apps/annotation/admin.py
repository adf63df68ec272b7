from django.contrib import admin

from apps.annotation.models import Study, StudyMembership


class MembershipInline(admin.TabularInline):
    model = StudyMembership
    extra = 0


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "owner", "created_at")
    filter_horizontal = ("datasets", "kinds", "criteria")
    inlines = [MembershipInline]


@admin.register(StudyMembership)
class StudyMembershipAdmin(admin.ModelAdmin):
    list_display = ("study", "user", "role")
