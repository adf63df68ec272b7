from django.urls import path

from apps.analysis.api import ReportView

urlpatterns = [
    path("studies/<int:pk>/reports/<slug:name>/", ReportView.as_view(), name="api-report"),
]
