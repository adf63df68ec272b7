from django.urls import path

from apps.analysis.api import (
    AuditBaselineView,
    AuditCardsView,
    AuditJUnitView,
    AuditPromptfooView,
    RatingsImportView,
    ReportView,
)
from apps.analysis.improvement_views import (
    ImprovementActionView,
    ImprovementsView,
    ImprovementView,
)
from apps.analysis.progress_views import StudyProgressView, StudyWeightsView
from apps.analysis.raw_data.views import RawDataView

urlpatterns = [
    path("improvements/", ImprovementsView.as_view(), name="api-improvements"),
    path("improvements/<int:pk>/", ImprovementView.as_view(), name="api-improvement"),
    *[
        path(
            f"improvements/<int:pk>/{action}/",
            ImprovementActionView.as_view(action_name=action),
            name=f"api-improvement-{action}",
        )
        for action in ("start", "cancel", "adopt")
    ],
    path("judge-audits/<int:pk>/cards/", AuditCardsView.as_view(), name="api-audit-cards"),
    path("judge-audits/<int:pk>/junit.xml", AuditJUnitView.as_view(), name="api-audit-junit"),
    path(
        "judge-audits/<int:pk>/promptfoo.json",
        AuditPromptfooView.as_view(),
        name="api-audit-promptfoo",
    ),
    path("judge-audits/<int:pk>/baseline/", AuditBaselineView.as_view(), name="api-audit-baseline"),
    path("datasets/<int:pk>/ratings/", RatingsImportView.as_view(), name="api-ratings-import"),
    path("studies/<int:pk>/reports/<slug:name>/", ReportView.as_view(), name="api-report"),
    path("studies/<int:pk>/progress/", StudyProgressView.as_view(), name="api-study-progress"),
    path("studies/<int:pk>/weights/", StudyWeightsView.as_view(), name="api-study-weights"),
    path(
        "studies/<int:pk>/data/<slug:table>.<str:file_format>",
        RawDataView.as_view(),
        name="api-study-raw-data",
    ),
]
