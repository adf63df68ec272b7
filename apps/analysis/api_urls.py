from django.urls import path

from apps.analysis.api import RatingsImportView, ReportView
from apps.analysis.raw_data.views import RawDataView

urlpatterns = [
    path("datasets/<int:pk>/ratings/", RatingsImportView.as_view(), name="api-ratings-import"),
    path("studies/<int:pk>/reports/<slug:name>/", ReportView.as_view(), name="api-report"),
    path(
        "studies/<int:pk>/data/<slug:table>.<str:file_format>",
        RawDataView.as_view(),
        name="api-study-raw-data",
    ),
]
