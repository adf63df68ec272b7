"""The Celery app. Task modules live in `workers/tasks/`; each task takes ids and calls one
service (see ARCHITECTURE.md). Every module in that package is imported by the worker."""

import os
import pkgutil

from celery import Celery

import workers.tasks

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("discern")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = tuple(
    f"workers.tasks.{module.name}" for module in pkgutil.iter_modules(workers.tasks.__path__)
)
