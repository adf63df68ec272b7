#!/usr/bin/env bash
# The whole test suite against real PostgreSQL, Redis, a Celery worker and headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
scripts/ensure-services.sh
export DATABASE_URL=${TEST_DATABASE_URL:-postgres://discern:discern@127.0.0.1:5432/discern}
export REDIS_URL=${TEST_REDIS_URL:-redis://127.0.0.1:6379/15}
export DJANGO_SECRET_KEY=test-only-secret-key
export DJANGO_DEBUG=false
export DISCERN_EGRESS_ALLOW=${DISCERN_EGRESS_ALLOW-loopback}  # local model servers
export DISCERN_FAST_PASSWORD_HASHER=true
export DISCERN_LOAD_CATALOG=false  # tests load the catalog themselves (the `catalog` fixture)
export DISCERN_VAR_DIR=${DISCERN_VAR_DIR:-$PWD/var/test}
export DJANGO_ALLOW_ASYNC_UNSAFE=true  # Playwright's sync API runs an event loop in the test thread
exec .venv/bin/python -m pytest "$@"
