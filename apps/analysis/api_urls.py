from django.urls import path

from apps.analysis.api import RatingsImportView, ReportView

urlpatterns = [
    path("datasets/<int:pk>/ratings/", RatingsImportView.as_view(), name="api-ratings-import"),
    path("studies/<int:pk>/reports/<slug:name>/", ReportView.as_view(), name="api-report"),
]
