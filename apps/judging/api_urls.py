from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.judging import api, search_api

router = SimpleRouter()
router.register("judges", api.JudgeViewSet, basename="judge")
router.register("strategies", api.StrategyViewSet, basename="strategy")
router.register("judge-runs", api.JudgeRunViewSet, basename="judge-run")
router.register(
    "adversarial-searches", search_api.AdversarialSearchViewSet, basename="adversarial-search"
)

urlpatterns = [path("", include(router.urls))]
