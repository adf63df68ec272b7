"""A task that proves the worker is alive and reaches the database."""

from celery import shared_task
from django.db import connection


@shared_task(name="workers.ping")
def ping() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "pong"
