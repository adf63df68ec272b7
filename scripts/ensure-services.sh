#!/usr/bin/env bash
# Make sure PostgreSQL, Redis and Chromium are here and running, for the test suite.
# Installs them from Debian's packages when missing (needs root), starts them when stopped.
set -euo pipefail
apt_updated=0
apt_install() {
  if [ "$(id -u)" != 0 ]; then echo "need root to install $*" >&2; exit 1; fi
  if [ $apt_updated = 0 ]; then apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# PostgreSQL
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "installing PostgreSQL"; apt_install postgresql
fi
if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  version=$(ls /etc/postgresql | sort -n | tail -1)
  pg_ctlcluster --skip-systemctl-redirect "$version" main start
  for _ in $(seq 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.5; done
fi
# A role for the tests, with a password so it works under trust and scram alike.
if ! PGPASSWORD=discern psql -h 127.0.0.1 -U discern -d postgres -tAc 'select 1' >/dev/null 2>&1; then
  su postgres -c "psql -q -c \"DO \\\$\\\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname='discern') THEN CREATE ROLE discern LOGIN CREATEDB PASSWORD 'discern'; ELSE ALTER ROLE discern LOGIN CREATEDB PASSWORD 'discern'; END IF; END \\\$\\\$;\""
fi

# Redis
if ! command -v redis-server >/dev/null 2>&1; then
  echo "installing Redis"; apt_install redis-server
fi
if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 30); do redis-cli ping >/dev/null 2>&1 && break; sleep 0.2; done
fi

# Chromium, for the browser tests (Playwright drives Debian's build)
if ! command -v chromium >/dev/null 2>&1; then
  echo "installing Chromium"; apt_install chromium
fi
