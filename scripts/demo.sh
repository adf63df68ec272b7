#!/usr/bin/env bash
# The embedded default: SQLite and a filesystem broker under var/, demo data, web + worker.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
export DJANGO_DEBUG=${DJANGO_DEBUG:-true}
PORT=${PORT:-8000}
py=.venv/bin/python
$py manage.py migrate --no-input -v0
$py manage.py load_catalog
$py manage.py load_demo
$py manage.py load_judging
$py manage.py collectstatic --no-input -v0
.venv/bin/celery -A workers worker --loglevel=WARNING --concurrency=2 >var/worker.log 2>&1 &
worker=$!
trap 'kill $worker 2>/dev/null || true' EXIT INT TERM
cat <<TXT

  Discern is up at http://127.0.0.1:$PORT/  (worker log: var/worker.log)
  Logins (password discern-demo): researcher, annotator, expert
  API: http://127.0.0.1:$PORT/api/v1/   schema: http://127.0.0.1:$PORT/api/v1/schema/
  Stop with Ctrl-C.

TXT
$py manage.py runserver "127.0.0.1:$PORT" --noreload
