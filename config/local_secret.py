"""The embedded default's own secret key: made once, kept in `var/secret_key` (mode 0600).

Only used when no DATABASE_URL is set (SQLite under var/, one machine); a deployment with
DATABASE_URL must set DJANGO_SECRET_KEY itself (see docs/deployment.md)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

FILE_NAME = "secret_key"


def local_secret_key(var_dir: Path) -> str:
    """The key in var_dir/secret_key, creating it (readable by its owner only) if missing.

    Two processes starting at once (web and worker) agree: the file is created exclusively
    and the loser reads what the winner wrote."""
    path = var_dir / FILE_NAME
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read(path)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(secrets.token_urlsafe(50))
    return _read(path)


def _read(path: Path) -> str:
    key = path.read_text(encoding="ascii").strip()
    if not key:  # the other process has created the file but not written it yet
        import time

        time.sleep(0.2)
        key = path.read_text(encoding="ascii").strip()
    if not key:
        raise RuntimeError(f"{path} is empty: delete it and start again")
    return key
