"""Judges brought as researchers already run them (docs/import.md): a promptfoo config's
model-graded assertions, or an Inspect AI scorer described in a small YAML/JSON file, mapped to
the endpoint, strategy and judge they describe. Nothing here touches the database: the
service (``apps.judging.services.imports``) checks the result and saves it.
"""

from apps.judging.importing.mapping import ImportedJudge, ImportRefused, MappedField
from apps.judging.importing.reading import FORMATS, MAX_BYTES, judges_in

__all__ = ["FORMATS", "MAX_BYTES", "ImportRefused", "ImportedJudge", "MappedField", "judges_in"]
