from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.corpus import api

router = SimpleRouter()
router.register("datasets", api.DatasetViewSet, basename="dataset")
router.register("items", api.SourceItemViewSet, basename="item")
router.register("perturbations", api.PerturbationViewSet, basename="perturbation")
router.register("imports", api.ImportJobViewSet, basename="import")
router.register("generation-jobs", api.GenerationJobViewSet, basename="generation-job")

urlpatterns = [path("", include(router.urls))]
