from django.urls import include, path
from rest_framework.routers import SimpleRouter

from apps.judging import api, audit_api, search_api

router = SimpleRouter()
router.register("judges", api.JudgeViewSet, basename="judge")
router.register("judge-offers", api.JudgeOfferViewSet, basename="judge-offer")
router.register("strategies", api.StrategyViewSet, basename="strategy")
router.register("judge-runs", api.JudgeRunViewSet, basename="judge-run")
router.register(
    "adversarial-searches", search_api.AdversarialSearchViewSet, basename="adversarial-search"
)
router.register("judge-audits", audit_api.JudgeAuditViewSet, basename="judge-audit")

urlpatterns = [path("", include(router.urls))]
