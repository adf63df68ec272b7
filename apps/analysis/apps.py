from typing import Any

from django.apps import AppConfig


def _imported_ratings(study: Any, dataset: Any) -> bool:
    """Whether human ratings released with the data exist for this study or dataset."""
    from apps.analysis.models import HumanRating

    if study is not None:
        return HumanRating.objects.filter(item__dataset__studies=study).exists()
    return HumanRating.objects.filter(item__dataset=dataset).exists()


class AnalysisConfig(AppConfig):
    name = "apps.analysis"
    label = "analysis"

    def ready(self) -> None:
        # a judge audit asks whether there are human ratings to agree with (docs/audit.md)
        from apps.judging.services.audits import HUMAN_RATING_SOURCES

        if _imported_ratings not in HUMAN_RATING_SOURCES:
            HUMAN_RATING_SOURCES.append(_imported_ratings)
