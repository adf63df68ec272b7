"""The services Discern depends on being away: the database, Redis, the task broker.

Named once here for everything that waits them out (the worker tasks: workers.outages), runs
on without them (the shared limits and counts of model calls) or answers 503 meanwhile (the
pages and the API: config.errors, /healthz).
"""

from __future__ import annotations

import kombu.exceptions
import redis.exceptions
from django import db

#: Redis out of reach (restarting, network).
REDIS_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
#: Any of the three out of reach.
OUTAGES = (db.OperationalError, db.InterfaceError, kombu.exceptions.OperationalError, *REDIS_DOWN)
