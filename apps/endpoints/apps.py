from django.apps import AppConfig
from django.conf import settings


class EndpointsConfig(AppConfig):
    name = "apps.endpoints"
    label = "endpoints"
    verbose_name = "Model endpoints"

    def ready(self) -> None:
        from django.core.exceptions import ImproperlyConfigured

        from apps.endpoints.egress import EgressPolicy

        try:
            EgressPolicy.parse(settings.DISCERN_EGRESS_ALLOW)
        except ValueError as exc:
            raise ImproperlyConfigured(str(exc)) from None
