"""The apps import one way (accounts → catalog → endpoints → corpus → annotation → judging →
analysis; workers and config at the edge): import-linter's contract in pyproject.toml holds, so
a backward import fails the suite (docs/architecture.md)."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_app_imports_an_app_above_it():
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint_imports, "import-linter is not installed (it is a dev dependency)"
    result = subprocess.run(
        [lint_imports, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
