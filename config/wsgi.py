"""WSGI entry point; each web worker preloads what its first request would import."""

import os

from django.core.wsgi import get_wsgi_application

from config.preload import preload

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
preload()
