#!/usr/bin/env bash
# The embedded default: SQLite and a filesystem broker under var/, demo data, web + worker.
# Ctrl-C, `kill` or closing the terminal (SIGHUP) stops both the web server and the worker.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-python.sh
export DISCERN_EGRESS_ALLOW=${DISCERN_EGRESS_ALLOW-loopback}  # local model servers
PORT=${PORT:-8000}
VAR=${DISCERN_VAR_DIR:-var}
mkdir -p "$VAR"
py=.venv/bin/python
$py manage.py migrate --no-input -v0  # also loads the shipped catalog
$py manage.py load_demo
$py manage.py load_judging
$py manage.py collectstatic --no-input -v0

# The worker runs in its own session: a hangup of the terminal reaches only this script, which
# stops the worker with SIGTERM (a Celery worker given SIGHUP restarts itself instead).
detach=$(command -v setsid || true)
$detach .venv/bin/celery -A workers worker --loglevel=WARNING --concurrency=2 >"$VAR/worker.log" 2>&1 &
worker=$!
# metric judges' runs: a queue and a worker of their own, never behind LLM runs
$detach .venv/bin/celery -A workers worker -Q "${DISCERN_QUEUE:-discern}-metrics" -n metrics@%h \
  --loglevel=WARNING --concurrency=1 >"$VAR/metrics-worker.log" 2>&1 &
metrics_worker=$!
# the scripted model server playing "demo judge" (docs/improve.md, "In the demo")
MODEL_PORT=${DISCERN_DEMO_MODEL_PORT:-8765}
$detach $py manage.py demo_model_server --port "$MODEL_PORT" >"$VAR/model-server.log" 2>&1 &
model_server=$!
$py manage.py runserver "127.0.0.1:$PORT" --noreload &
server=$!
stopping=0
stop() {
  [ "$stopping" = 1 ] && return
  stopping=1
  kill -TERM "$server" "$worker" "$metrics_worker" "$model_server" 2>/dev/null || true
  # A worker first finishes what it is doing (warm shutdown); one still there after
  # DISCERN_STOP_GRACE seconds is stopped at once, with its pool (tasks it had not finished
  # are delivered again when a worker starts: they are acknowledged late).
  (
    trap 'kill "$nap" 2>/dev/null; exit 0' TERM  # everything stopped in time: no timer left
    sleep "${DISCERN_STOP_GRACE:-20}" &
    nap=$!
    wait "$nap"
    kill -KILL -- "-$worker" "-$metrics_worker" "$worker" "$metrics_worker" "$model_server" 2>/dev/null
  ) &
  local reaper=$!
  wait "$server" "$worker" "$metrics_worker" "$model_server" 2>/dev/null || true
  kill "$reaper" 2>/dev/null || true
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap 'stop; exit 129' HUP
trap stop EXIT

# The banner once the server answers /healthz, so the address printed is already served.
until $py -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$PORT/healthz', timeout=2)" 2>/dev/null; do
  if ! kill -0 "$server" 2>/dev/null; then
    echo "The web server did not start (see the messages above)." >&2
    exit 1
  fi
  sleep 0.5
done
cat <<TXT

  Discern is up at http://127.0.0.1:$PORT/  (worker log: $VAR/worker.log)
  Logins (password discern-demo): researcher, annotator, expert
  A scripted LLM judge, "demo judge", answers at http://127.0.0.1:$MODEL_PORT/v1 (no model, no key)
  API: http://127.0.0.1:$PORT/api/v1/   docs: http://127.0.0.1:$PORT/api/v1/docs/
  Stop with Ctrl-C.

TXT
wait "$server"
