"""Where each kind of human work plugs into the analysis: modules named after its slug in the
annotation registry (apps/annotation/kinds.py), found here and imported, each registering what
it adds when imported.

- ``apps/analysis/<slug>.py``: its raw-data tables (`raw_data.table_register`) and its stage of
  the study's pipeline (`pipeline.stage_register`). Loaded with the URL conf, so it imports no
  numpy (docs/deployment.md, Start-up).
- ``apps/analysis/reports/<slug>.py``: its sections of the reports
  (`reports.sections.section_register`), imported when a report is built.
- ``apps/analysis/definitions/<name>.py``: what its figures mean (every module there is read).

These are the analysis app's own modules, so loading them by name hides no import between apps
from the layers contract (docs/architecture.md).
"""

from __future__ import annotations

import functools
from importlib import import_module
from importlib.util import find_spec
from types import ModuleType

from apps.annotation.services import work_types  # the package registers every type of work


@functools.cache
def kind_modules(package: str) -> tuple[ModuleType, ...]:
    """The modules of `package` named after a type of work, imported, in the pipeline's order."""
    names = (f"{package}.{work.slug}" for work in work_types())
    return tuple(import_module(name) for name in names if find_spec(name) is not None)
