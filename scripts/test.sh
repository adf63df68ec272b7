#!/usr/bin/env bash
# The whole test suite against real PostgreSQL, Redis, a Celery worker and headless Chromium;
# then the human-work and browser tests again on the embedded default (SQLite, no Redis), what
# `make demo` runs. With arguments, one pytest run on PostgreSQL with them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
scripts/ensure-services.sh
export DJANGO_SECRET_KEY=test-only-secret-key
export DJANGO_DEBUG=false
export DISCERN_EGRESS_ALLOW=${DISCERN_EGRESS_ALLOW-loopback}  # local model servers
export DISCERN_FAST_PASSWORD_HASHER=true
export DISCERN_LOAD_CATALOG=false  # tests load the catalog themselves (the `catalog` fixture)
export DISCERN_VAR_DIR=${DISCERN_VAR_DIR:-$PWD/var/test}
export DJANGO_ALLOW_ASYNC_UNSAFE=true  # Playwright's sync API runs an event loop in the test thread
postgresql() {
  DATABASE_URL=${TEST_DATABASE_URL:-postgres://discern:discern@127.0.0.1:5432/discern} \
    REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/15} \
    .venv/bin/python -m pytest "$@"
}
if [ $# -gt 0 ]; then
  postgresql "$@"
  exit
fi
postgresql
echo "--- again on the embedded default (SQLite): human work and the browser"
env -u DATABASE_URL -u REDIS_URL DISCERN_VAR_DIR="$DISCERN_VAR_DIR-sqlite" \
  .venv/bin/python -m pytest tests/annotation tests/e2e
