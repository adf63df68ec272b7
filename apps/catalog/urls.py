from django.urls import path

from apps.catalog import views

urlpatterns = [
    path("catalog/", views.catalog, name="catalog"),
    path("catalog/criteria/import/", views.criteria_import_page, name="criteria-import"),
]
