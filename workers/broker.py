"""The Redis broker's transport: kombu's, with one repair.

When Celery's consumer loses the broker, it closes the broken connection; closing a channel
makes kombu send back the messages it holds unacknowledged, through a connection already
taken apart, and the ``AttributeError`` that follows ends the worker ("Unrecoverable error:
AttributeError('NoneType' object has no attribute 'hostname')", kombu 5.7, seen whenever a
task was running as Redis went away). No Celery setting avoids it. Here those messages are
left where they are: in the broker's table of unacknowledged messages, from which kombu
restores them after its visibility timeout; the tasks themselves run on (workers.outages),
and runs nobody works on are dispatched again (workers.recovery). So the consumer reconnects,
as Celery's broker retry settings say (config/settings.py).
"""

from __future__ import annotations

import logging
from typing import Any

from kombu.transport import redis

logger = logging.getLogger(__name__)


class QoS(redis.QoS):
    _delivered: Any  # kombu's table of the messages it holds unacknowledged

    def restore_unacked(self, client: Any = None) -> Any:
        if getattr(self.channel.connection, "client", None) is None:  # the connection is gone
            logger.warning(
                "broker lost: %d unacknowledged message(s) stay in its table",
                len(self._delivered),
            )
            self._delivered.clear()
            return None
        return super().restore_unacked(client)


class Channel(redis.Channel):
    QoS = QoS


class Transport(redis.Transport):
    Channel = Channel
