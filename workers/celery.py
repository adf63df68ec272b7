"""The Celery app. Task modules live in `workers/tasks/`; each task takes ids and calls one
service (see ARCHITECTURE.md)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("discern")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = ("workers.tasks.imports", "workers.tasks.health")
