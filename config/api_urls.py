"""The REST API, version 1: every endpoint needs a token or a session."""

from django.urls import include, path
from rest_framework.authtoken.views import obtain_auth_token
from rest_framework.routers import DefaultRouter

from apps.annotation.api import StudyViewSet
from apps.catalog.api import (
    AspectViewSet,
    CriteriaImportView,
    CriterionViewSet,
    PerturbationKindViewSet,
    TaskViewSet,
)
from apps.corpus.api import DatasetViewSet, ImportJobViewSet, PerturbationViewSet, SourceItemViewSet

router = DefaultRouter()
router.register("tasks", TaskViewSet)
router.register("aspects", AspectViewSet)
router.register("criteria", CriterionViewSet)
router.register("kinds", PerturbationKindViewSet)
router.register("datasets", DatasetViewSet, basename="dataset")
router.register("items", SourceItemViewSet, basename="item")
router.register("perturbations", PerturbationViewSet, basename="perturbation")
router.register("imports", ImportJobViewSet, basename="import")
router.register("studies", StudyViewSet, basename="study")

urlpatterns = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("criteria/import/", CriteriaImportView.as_view(), name="api-criteria-import"),
    path("", include(router.urls)),
]
