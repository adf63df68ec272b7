from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.annotation import api
from apps.annotation.api.controls import ControlDetailView, ControlImportView, ControlListView
from apps.annotation.api.work import work_urls

router = SimpleRouter()
router.register("studies", api.StudyViewSet, basename="study")

urlpatterns = [
    path("", include(router.urls)),
    *work_urls(api.VettingAPI, answers="vettings", next="vetting/next", skip="vetting/skip"),
    path(
        "studies/<int:pk>/perturbations/<int:perturbation_pk>/edit/",
        api.PerturbationEditView.as_view(),
        name="api-perturbation-edit",
    ),
    *work_urls(
        api.ComparisonAPI,
        answers="comparisons",
        next="comparisons/next",
        skip="comparisons/skip",
    ),
    *work_urls(api.SurveyAPI, answers="expert-votes"),
    path("studies/<int:pk>/controls/", ControlListView.as_view(), name="api-controls"),
    path(
        "studies/<int:pk>/controls/import/",
        ControlImportView.as_view(),
        name="api-controls-import",
    ),
    path(
        "studies/<int:pk>/controls/<int:control_pk>/",
        ControlDetailView.as_view(),
        name="api-control",
    ),
    *work_urls(
        api.AssessmentAPI,
        answers="assessments",
        next="assessments/next",
        skip="assessments/skip",
    ),
    *work_urls(
        api.BestWorstAPI,
        answers="best-worst",
        next="best-worst/next",
        skip="best-worst/skip",
    ),
    *work_urls(
        api.GoldCheckAPI,
        answers="gold-checks",
        next="gold-checks/next",
        skip="gold-checks/skip",
    ),
]
