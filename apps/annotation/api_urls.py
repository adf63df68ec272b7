from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.annotation import api

router = SimpleRouter()
router.register("studies", api.StudyViewSet, basename="study")

urlpatterns = [path("", include(router.urls))]
