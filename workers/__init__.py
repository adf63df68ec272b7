"""Celery workers: `celery -A workers worker`."""

from workers.celery import app

__all__ = ["app"]
