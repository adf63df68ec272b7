from django.urls import path

from apps.judging import audit_views, search_views, views

urlpatterns = [
    path("judging/", views.run_list, name="judging-runs"),
    path("judging/runs/new/", views.run_new, name="judging-run-new"),
    path("judging/runs/<int:pk>/", views.run_detail, name="judging-run-detail"),
    path("judging/runs/<int:pk>/start/", views.run_start, name="judging-run-start"),
    path("judging/runs/<int:pk>/cancel/", views.run_cancel, name="judging-run-cancel"),
    path("judging/runs/<int:pk>/resume/", views.run_resume, name="judging-run-resume"),
    path("judging/runs/<int:pk>/again/", views.run_rerun, name="judging-run-rerun"),
    path(
        "judging/runs/<int:pk>/calls.<str:file_format>",
        views.run_export,
        name="judging-run-export",
    ),
    path("judging/searches/", search_views.search_list, name="judging-searches"),
    path("judging/searches/new/", search_views.search_new, name="judging-search-new"),
    path("judging/searches/<int:pk>/", search_views.search_detail, name="judging-search-detail"),
    path(
        "judging/searches/<int:pk>/start/",
        search_views.search_start,
        name="judging-search-start",
    ),
    path(
        "judging/searches/<int:pk>/cancel/",
        search_views.search_cancel,
        name="judging-search-cancel",
    ),
    path(
        "judging/searches/<int:pk>/resume/",
        search_views.search_resume,
        name="judging-search-resume",
    ),
    path("judging/audits/", audit_views.audit_list, name="judging-audits"),
    path("judging/audits/new/", audit_views.audit_new, name="judging-audit-new"),
    path("judging/audits/<int:pk>/", audit_views.audit_detail, name="judging-audit-detail"),
    path("judging/audits/<int:pk>/start/", audit_views.audit_start, name="judging-audit-start"),
    path("judging/audits/<int:pk>/all/", audit_views.audit_over_all, name="judging-audit-all"),
    path("judging/audits/<int:pk>/cancel/", audit_views.audit_cancel, name="judging-audit-cancel"),
    path("judging/audits/<int:pk>/resume/", audit_views.audit_resume, name="judging-audit-resume"),
    path("judging/judges/", views.judge_list, name="judging-judges"),
    path("judging/judges/new/", views.judge_edit, name="judging-judge-new"),
    path("judging/judges/import/", views.judge_import, name="judging-judge-import"),
    path("judging/judges/<int:pk>/", views.judge_edit, name="judging-judge-edit"),
    path(
        "judging/judges/offers/<int:pk>/accept/",
        views.judge_share_accept,
        name="judging-judge-offer-accept",
    ),
    path(
        "judging/judges/offers/<int:pk>/decline/",
        views.judge_share_decline,
        name="judging-judge-offer-decline",
    ),
    path("judging/strategies/", views.strategy_list, name="judging-strategies"),
    path("judging/strategies/new/", views.strategy_edit, name="judging-strategy-new"),
    path("judging/strategies/<int:pk>/", views.strategy_detail, name="judging-strategy-detail"),
    path(
        "judging/strategies/<int:pk>/revise/", views.strategy_edit, name="judging-strategy-revise"
    ),
]
