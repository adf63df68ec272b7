"""Pages of the annotation app, one module per flow. Every module is imported here, so a kind
of work's page and API (its own module, registered by `WorkPage` and `work_api`) are served
without being named in the URL confs."""

from apps.discovery import import_submodules

import_submodules(__name__, __path__)
