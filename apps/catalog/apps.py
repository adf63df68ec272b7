from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_migrate


class CatalogConfig(AppConfig):
    name = "apps.catalog"
    label = "catalog"

    def ready(self) -> None:
        post_migrate.connect(_load_shipped_catalog, sender=self)


def _load_shipped_catalog(
    sender: AppConfig, verbosity: int = 1, stdout: Any = None, **kwargs: Any
) -> None:
    """After every `migrate`, the shipped catalog is in the database (idempotent: a second
    migrate updates nothing). DISCERN_LOAD_CATALOG=false turns it off (the test suite)."""
    if not settings.DISCERN_LOAD_CATALOG:
        return
    from apps.catalog.loading import catalog_load

    counts = catalog_load()
    if verbosity >= 1 and stdout is not None:
        loaded = ", ".join(f"{n} {what}" for what, n in counts.items())
        stdout.write(f"Shipped catalog loaded: {loaded}")
