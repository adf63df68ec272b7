from django.urls import path

from apps.corpus import views

urlpatterns = [
    path("datasets/", views.dataset_list, name="dataset-list"),
    path("datasets/<int:pk>/", views.dataset_detail, name="dataset-detail"),
    path("datasets/<int:pk>/validated/", views.dataset_validated, name="dataset-validated"),
    path("datasets/<int:pk>/export.<str:file_format>", views.dataset_export, name="dataset-export"),
    path("imports/new/", views.import_new, name="import-new"),
    path("imports/<int:pk>/", views.import_detail, name="import-detail"),
    path("generate/", views.generation_new, name="generation-new"),
    path("generate/<int:pk>/", views.generation_detail, name="generation-detail"),
    path("generate/<int:pk>/start/", views.generation_start, name="generation-start"),
]
