"""Users and their roles."""

from django.contrib.auth.models import AbstractUser
from django.db import models


class Role(models.TextChoices):
    ANNOTATOR = "annotator", "Annotator"
    EXPERT = "expert", "Expert"
    RESEARCHER = "researcher", "Researcher"


class User(AbstractUser):
    """A person using Discern. The role decides which pages and studies they reach."""

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)

    @property
    def is_researcher(self) -> bool:
        return self.role == Role.RESEARCHER or self.is_superuser
