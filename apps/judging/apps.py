from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "apps.judging"
    label = "judging"
