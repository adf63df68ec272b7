from django.apps import AppConfig
from django.conf import settings


class EndpointsConfig(AppConfig):
    name = "apps.endpoints"
    label = "endpoints"
    verbose_name = "Model endpoints"

    def ready(self) -> None:
        from apps.endpoints.client import configure_transport

        configure_transport(settings.DISCERN_LLM_TRANSPORT)
