from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.annotation import api
from apps.annotation.api.controls import ControlDetailView, ControlImportView, ControlListView
from apps.annotation.api.work import work_api_urls
from apps.annotation.views import vetting  # the package makes every kind's page and API

router = SimpleRouter()
router.register("studies", api.StudyViewSet, basename="study")

urlpatterns = [
    path("", include(router.urls)),
    path(
        "studies/<int:pk>/perturbations/<int:perturbation_pk>/edit/",
        vetting.PerturbationEditView.as_view(),
        name="api-perturbation-edit",
    ),
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
    # Every type of work's API, made in its page module (views/<kind>.py).
    *work_api_urls(),
]
