"""Unpacking an uploaded .zip safely: limits are checked before and while writing.

Only the `<ability>/<kind>.tsv` members an FBI-style import reads are written, one at a time and
streamed; the number of members, each member's compression ratio and the total uncompressed size
are capped (settings `DISCERN_ZIP_*`, docs/formats.md). A bomb is refused having written at most
the cap. Messages name the zip and its members, never a path on the server.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path, PurePosixPath

from django.conf import settings

from apps.inputs.problems import ImportFailed, ImportProblem

CHUNK = 1 << 20
RATIO_FROM_BYTES = 1 << 20  # tiny members may compress very well; only bigger ones are checked


def zip_unpack(*, path: Path, target: Path) -> None:
    """Write the zip's `.tsv` members under target; raise ImportFailed for anything unsafe."""
    name = path.name
    try:
        with zipfile.ZipFile(path) as archive:
            members = _checked_members(name, archive.infolist())
            budget = [settings.DISCERN_ZIP_MAX_BYTES]
            for member in members:
                _write_member(name, archive, member, target, budget)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError) as exc:
        raise _failed(name, "not a readable zip file") from exc
    except (NotImplementedError, RuntimeError) as exc:  # encrypted, unknown compression
        raise _failed(name, "uses encryption or a compression this server cannot read") from exc


def _failed(name: str, message: str) -> ImportFailed:
    return ImportFailed([ImportProblem(name, message)])


def _checked_members(name: str, infos: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
    if len(infos) > settings.DISCERN_ZIP_MAX_MEMBERS:
        raise _failed(
            name, f"{len(infos):,} members, over the limit of {settings.DISCERN_ZIP_MAX_MEMBERS:,}"
        )
    wanted = []
    for info in infos:
        parts = PurePosixPath(info.filename).parts
        if info.filename.startswith(("/", "\\")) or ".." in parts or "\\" in info.filename:
            raise _failed(name, f"unsafe member name '{info.filename}'")
        if not info.is_dir() and info.filename.endswith(".tsv") and 2 <= len(parts) <= 3:
            wanted.append(info)
    declared = sum(i.file_size for i in wanted)
    if declared > settings.DISCERN_ZIP_MAX_BYTES:
        raise _failed(name, _too_big(declared))
    for info in wanted:
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > RATIO_FROM_BYTES and ratio > settings.DISCERN_ZIP_MAX_RATIO:
            raise _failed(
                name,
                f"member '{info.filename}' expands {ratio:,.0f} times, over the limit of "
                f"{settings.DISCERN_ZIP_MAX_RATIO} (a zip bomb?)",
            )
    return wanted


def _too_big(size: int) -> str:
    cap = settings.DISCERN_ZIP_MAX_BYTES
    return f"unpacks to more than {cap:,} bytes ({size:,} or more), over the limit"


def _write_member(name, archive, info: zipfile.ZipInfo, target: Path, budget: list[int]) -> None:
    """Stream one member to disk, counting the bytes really written (sizes may lie)."""
    destination = target.joinpath(*PurePosixPath(info.filename).parts)
    destination.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with archive.open(info) as source, destination.open("wb") as out:
        while chunk := source.read(CHUNK):
            written += len(chunk)
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise _failed(name, _too_big(settings.DISCERN_ZIP_MAX_BYTES - budget[0]))
            if written > RATIO_FROM_BYTES and written / max(info.compress_size, 1) > (
                settings.DISCERN_ZIP_MAX_RATIO
            ):
                raise _failed(name, f"member '{info.filename}' expands too much (a zip bomb?)")
            out.write(chunk)
