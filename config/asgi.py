"""ASGI entry point; each server process preloads what its first request would import."""

import os

from django.core.asgi import get_asgi_application

from config.preload import preload

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_asgi_application()
preload()
