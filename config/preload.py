"""Start-up of a server process: do now what its first request would otherwise do.

Management commands import neither the URL conf's heavy dependencies nor the libraries in
``settings.DISCERN_PRELOAD`` (they are imported where used); a web worker calls ``preload()``
when it starts, so no request pays for them, nor for building the URL reversing tables or
compiling the templates (docs/deployment.md, Start-up).
"""

import logging
from importlib import import_module
from pathlib import Path

from django.conf import settings
from django.template import TemplateSyntaxError, engines
from django.template.utils import get_app_template_dirs
from django.urls import URLResolver, get_resolver

logger = logging.getLogger(__name__)


def preload() -> None:
    """Import the URL conf (every view and the services behind it) and the slow libraries,
    build the tables ``reverse()`` reads and compile every template."""
    _reverse_tables(get_resolver())
    for module in settings.DISCERN_PRELOAD:
        import_module(module)
    _templates()


def _reverse_tables(resolver: URLResolver) -> None:
    resolver._populate()  # what the first reverse() (every {% url %}) would build
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            _reverse_tables(pattern)


def _templates() -> None:
    """Compile each of our templates into the cached loader (with DEBUG off), tag libraries
    included (not those of the admin and the API browser: few requests use them)."""
    engine = engines["django"]
    ours = Path(settings.BASE_DIR)
    folders = [*map(Path, engine.dirs), *get_app_template_dirs("templates")]
    folders = [folder for folder in folders if folder.is_relative_to(ours)]
    for folder in folders:
        for path in sorted(folder.rglob("*.html")):
            try:
                engine.get_template(path.relative_to(folder).as_posix())
            except TemplateSyntaxError as error:  # the page that uses it will say so
                logger.warning("template %s does not compile: %s", path, error)
