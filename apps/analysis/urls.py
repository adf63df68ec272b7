from django.urls import path

from apps.analysis import views

urlpatterns = [
    path("studies/<int:pk>/reports/", views.report_index, name="report-index"),
    path("studies/<int:pk>/reports/all.html", views.study_report_file, name="report-file"),
    path("studies/<int:pk>/reports/<slug:name>/", views.report_page, name="report-page"),
    path(
        "studies/<int:pk>/reports/<slug:name>.<str:file_format>",
        views.report_download,
        name="report-download",
    ),
]
