"""The Celery app. Task modules live in `workers/tasks/`; each task takes ids and calls one
service (the layout is in README.md). Every module in that package is imported by the worker."""

import gc
import os
import pkgutil
import sys
from importlib import import_module
from typing import Any

from celery import Celery
from celery.signals import worker_init, worker_process_init
from django.conf import settings

import workers.tasks
from workers.recovery import Sweeps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("discern")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = tuple(
    f"workers.tasks.{module.name}" for module in pkgutil.iter_modules(workers.tasks.__path__)
)
app.steps["consumer"].add(Sweeps)


@worker_init.connect  # the main process (and, before they fork, the pool's processes)
@worker_process_init.connect  # each process of the prefork pool
def tune_process(**_: Any) -> None:
    """Settings for a worker process that keeps an asyncio loop busy beside database work.

    - the slow libraries of ``settings.DISCERN_PRELOAD`` (the openai SDK, numpy, scipy...) are
      imported now, before the first task needs them and before the pool forks
      (docs/deployment.md, Start-up);
    - ``gc.freeze()``: the objects alive after start (Django, the SDKs, every module) leave the
      collector's view, so a full collection no longer walks them all: measured in a judge run,
      two full collections of about 135 ms each stopped every call in flight.
    - a 1 ms switch interval: the event-loop thread gets the GIL back within 1 ms (not 5) while
      the task's thread saves results, so replies are read as soon as they arrive.
    - the LLM clients' TLS settings (``client.tls_context``: the certificate bundle, read once).
    """
    from apps.endpoints.client import tls_context

    for module in settings.DISCERN_PRELOAD:
        import_module(module)
    tls_context()
    gc.collect()
    gc.freeze()
    sys.setswitchinterval(0.001)
