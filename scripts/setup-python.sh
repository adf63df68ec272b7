#!/usr/bin/env bash
# Create .venv and install Discern with its dev tools; re-runs only when pyproject.toml changes.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.discern-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "installing Python packages into .venv (log: .venv/pip.log)"
  if ! { .venv/bin/python -m pip install --upgrade pip &&
         .venv/bin/python -m pip install -e ".[dev]"; } >.venv/pip.log 2>&1; then
    tail -n 30 .venv/pip.log >&2
    exit 1
  fi
  touch "$stamp"
fi
