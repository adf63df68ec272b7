"""Importers: read a file into records, validate all of them, then write all or nothing."""

from apps.corpus.importing.items import ImportSummary, items_import
from apps.inputs.problems import ImportFailed, ImportProblem

__all__ = ["ImportFailed", "ImportProblem", "ImportSummary", "items_import"]
