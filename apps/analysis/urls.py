from django.urls import path

from apps.analysis import (
    card_views,
    docs_views,
    improvement_views,
    panel_views,
    progress_views,
    study_views,
    threshold_views,
    views,
)
from apps.analysis.cards.ci_files import CI_FILES, ci_file_url_name
from apps.analysis.raw_data.views import raw_data_download

urlpatterns = [
    path("docs/<slug:page>/", docs_views.docs_page, name="docs-page"),
    path("studies/<int:pk>/", study_views.study_detail, name="study-detail"),
    path("studies/<int:pk>/progress/", progress_views.progress, name="study-progress"),
    path(
        "studies/<int:pk>/panel/participants/",
        panel_views.panel_participants,
        name="study-panel-participants",
    ),
    path("studies/<int:pk>/thresholds/", threshold_views.study_thresholds, name="study-thresholds"),
    path(
        "studies/<int:pk>/data/<slug:table>.<str:file_format>",
        raw_data_download,
        name="study-raw-data",
    ),
    path("studies/<int:pk>/reports/", views.report_index, name="report-index"),
    path("studies/<int:pk>/reports/all.html", views.study_report_file, name="report-file"),
    path("studies/<int:pk>/reports/<slug:name>/", views.report_page, name="report-page"),
    path(
        "studies/<int:pk>/reports/<slug:name>.<str:file_format>",
        views.report_download,
        name="report-download",
    ),
    path("audits/<int:pk>/compare/", card_views.audit_compare, name="audit-compare"),
    path(
        "audits/<int:pk>/compare.<str:file_format>",
        card_views.audit_compare_file,
        name="audit-compare-file",
    ),
    path("audits/<int:pk>/audit.json", card_views.audit_json_file, name="audit-json"),
    *[
        path(
            f"audits/<int:pk>/{ending}",
            card_views.audit_ci_file,
            {"ci_format": ending},
            ci_file_url_name(ending),
        )
        for ending in CI_FILES
    ],
    *[
        path(
            f"audits/<int:pk>/cards/<int:subject_pk>/{ending}",
            card_views.audit_card_ci_file,
            {"ci_format": ending},
            ci_file_url_name(ending, card=True),
        )
        for ending in CI_FILES
    ],
    path("audits/<int:pk>/baseline/", card_views.audit_baseline, name="audit-baseline"),
    path("audits/<int:pk>/cards/<int:subject_pk>/", card_views.audit_card, name="audit-card"),
    path(
        "audits/<int:pk>/cards/<int:subject_pk>/improve/",
        improvement_views.improvement_new,
        name="improvement-new",
    ),
    path("improvements/<int:pk>/", improvement_views.improvement_detail, name="improvement-detail"),
    path(
        "improvements/<int:pk>/improvement.json",
        improvement_views.improvement_file,
        name="improvement-file",
    ),
    path(
        "improvements/<int:pk>/<slug:action>/",
        improvement_views.improvement_action,
        name="improvement-action",
    ),
    path(
        "audits/<int:pk>/cards/<int:subject_pk>.<str:file_format>",
        card_views.audit_card_file,
        name="audit-card-file",
    ),
    path("audits/<int:pk>/shares/", card_views.audit_share_new, name="audit-share-new"),
    path(
        "audits/<int:pk>/shares/<int:share_pk>/revoke/",
        card_views.audit_share_revoke,
        name="audit-share-revoke",
    ),
]
