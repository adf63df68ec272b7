from typing import Any

from django.contrib import admin

from apps.accounts.models import Role, User
from apps.endpoints.models import Endpoint, KeyGrant


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "model", "base_url", "api_key_env", "max_concurrency")
    search_fields = ("name", "model", "base_url")


@admin.register(KeyGrant)
class KeyGrantAdmin(admin.ModelAdmin):
    """Where an administrator grants a key variable to researchers or groups, and binds it to
    the hosts it may be sent to (docs/endpoints.md, Keys)."""

    list_display = ("variable", "granted_to", "hosts", "note")
    search_fields = ("variable", "note", "users__username", "groups__name")
    filter_horizontal = ("users", "groups")

    def formfield_for_manytomany(self, db_field: Any, request: Any, **kwargs: Any) -> Any:
        if db_field.name == "users":  # only researchers make judges
            kwargs["queryset"] = User.objects.filter(role=Role.RESEARCHER).order_by("username")
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    @admin.display(description="granted to")
    def granted_to(self, grant: KeyGrant) -> str:
        names = [u.username for u in grant.users.all()] + [g.name for g in grant.groups.all()]
        return ", ".join(names) or "nobody yet"
