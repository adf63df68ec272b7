"""Importers: read a file into records, validate all of them, then write all or nothing."""

from apps.corpus.importing.problems import ImportFailed, ImportProblem
from apps.corpus.importing.service import ImportSummary, items_import

__all__ = ["ImportFailed", "ImportProblem", "ImportSummary", "items_import"]
