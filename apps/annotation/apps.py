from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "apps.annotation"
    label = "annotation"

    def ready(self) -> None:
        from apps.annotation.generation_destination import STUDY
        from apps.corpus.generation.destinations import destination_register

        destination_register(STUDY)  # generation jobs may feed a study's vetting queue
