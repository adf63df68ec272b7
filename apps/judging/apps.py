from django.apps import AppConfig
from django.conf import settings


class JudgingConfig(AppConfig):
    name = "apps.judging"
    label = "judging"

    def ready(self) -> None:
        from apps.judging.llm_client import configure_transport

        configure_transport(settings.DISCERN_LLM_TRANSPORT)
