from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from apps.accounts.models import User


@admin.register(User)
class DiscernUserAdmin(UserAdmin):
    list_display = ("username", "email", "role", "is_staff", "is_active")
    list_filter = ("role", "is_staff", "is_active")
    fieldsets = (*(UserAdmin.fieldsets or ()), ("Discern", {"fields": ("role",)}))
    add_fieldsets = (*UserAdmin.add_fieldsets, ("Discern", {"fields": ("role",)}))
