from django.contrib import admin

from apps.endpoints.models import Endpoint


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "model", "base_url", "api_key_env", "max_concurrency")
    search_fields = ("name", "model", "base_url")
