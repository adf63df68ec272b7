"""Each peer in a virtual environment of its own, made on demand under bench/peers/.venvs/
(git-ignored; never our .venv, never in CI): `ensure("inspect-ai", ["inspect-ai==0.3.285"])`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENVS = HERE / ".venvs"


def _python() -> str:
    """A Python for the peer: this one's version (the peers support 3.10 to 3.13)."""
    return shutil.which(f"python{sys.version_info.major}.{sys.version_info.minor}") or "python3"


def ensure(name: str, requirements: list[str]) -> Path:
    """The peer's venv with ``requirements`` installed (once; a marker file records them)."""
    venv = VENVS / name
    marker = venv / "bench-requirements.txt"
    wanted = "\n".join(requirements) + "\n"
    if marker.exists() and marker.read_text() == wanted:
        return venv
    print(f"installing {', '.join(requirements)} into {venv} (first run only)...", flush=True)
    if not (venv / "bin" / "python").exists():
        subprocess.run([_python(), "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", *requirements],
        check=True,
    )
    marker.write_text(wanted)
    return venv


def version(venv: Path, distribution: str) -> str:
    out = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            f"import importlib.metadata as m; print(m.version({distribution!r}))",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()
