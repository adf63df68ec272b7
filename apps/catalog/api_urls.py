from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.catalog import api

router = SimpleRouter()
router.register("tasks", api.TaskViewSet)
router.register("aspects", api.AspectViewSet)
router.register("criteria", api.CriterionViewSet)
router.register("kinds", api.PerturbationKindViewSet)

urlpatterns = [
    path("criteria/import/", api.CriteriaImportView.as_view(), name="api-criteria-import"),
    path("", include(router.urls)),
]
