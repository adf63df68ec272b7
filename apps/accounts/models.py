"""Users and their roles."""

from django.contrib.auth.models import AbstractUser
from django.db import models


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    EXPERT = "expert", "Expert"
    RESEARCHER = "researcher", "Researcher"
    #: Someone recruited through a study's link (Prolific, MTurk...): an identity of one
    #: study alone, with no password (apps/annotation/models/panel.py).
    PARTICIPANT = "participant", "Participant"


class User(AbstractUser):
    """A person using Discern. The role decides which pages and studies they reach."""

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)

    @property
    def is_researcher(self) -> bool:
        return self.role == Role.RESEARCHER or self.is_superuser

    @property
    def is_participant(self) -> bool:
        return self.role == Role.PARTICIPANT and not self.is_superuser
