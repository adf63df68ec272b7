from django.urls import path

from apps.analysis import progress_views, study_views, views
from apps.analysis.raw_data.views import raw_data_download

urlpatterns = [
    path("studies/<int:pk>/", study_views.study_detail, name="study-detail"),
    path("studies/<int:pk>/progress/", progress_views.progress, name="study-progress"),
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
]
