from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.judging import api

router = SimpleRouter()
router.register("judges", api.JudgeViewSet, basename="judge")
router.register("strategies", api.StrategyViewSet, basename="strategy")
router.register("judge-runs", api.JudgeRunViewSet, basename="judge-run")

urlpatterns = [path("", include(router.urls))]
