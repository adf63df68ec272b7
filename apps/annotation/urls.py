from django.urls import path

from apps.annotation import views

urlpatterns = [
    path("", views.home, name="home"),
    path("studies/<int:pk>/", views.study_detail, name="study-detail"),
]
