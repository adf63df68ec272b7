"""A study opened to a recruited panel (docs/annotation.md, "Recruiting a panel").

`Panel` holds the study's settings for it (consent text, quotas, completion and screening
codes); a `PanelLink` is a secret link to the study (or one group of it) that the researcher
gives a recruitment platform; a `Participant` is one person who arrived through it: an
account of their own with the participant role and no password, a member of this study
alone, found again by their platform id when they come back. A `PanelSeat` is a place in a
group of the comparison design, made with its account before anyone arrives (so the criteria
design holds it from the start); a participant of that group's link takes a free one.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q

from apps.annotation.models.study import Study

TOKEN_BYTES = 18


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


class Panel(models.Model):
    """The study's settings for recruited participants (made when first saved)."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="panel")
    consent = models.TextField(
        blank=True,
        verbose_name="Consent text",
        help_text="Shown with the guidelines before a participant starts; they agree to it "
        "to begin.",
    )
    items_per_participant = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        verbose_name="Items per participant",
        help_text="Units each participant does, control items included (empty: no limit).",
    )
    participants_per_group = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        verbose_name="Participants per group",
        help_text="A group's link admits this many participants (empty: no limit).",
    )
    participants_total = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        verbose_name="Participants in all",
        help_text="The study admits this many participants through all its links (empty: no "
        "limit).",
    )
    completion_code = models.CharField(
        max_length=64,
        blank=True,
        help_text="Shown to a participant who finished, for the platform (e.g. Prolific's).",
    )
    completion_url = models.URLField(
        max_length=500,
        blank=True,
        verbose_name="Completion URL",
        help_text="Where a participant who finished is sent (the platform's completion link).",
    )
    screen_items = models.PositiveIntegerField(
        default=0,
        verbose_name="Screen within the first",
        help_text="Attention check: the control items among a participant's first this many "
        "items screen them (0: no screening).",
    )
    screen_failures = models.PositiveIntegerField(
        default=0,
        verbose_name="Failed control items allowed",
        help_text="A participant who fails more control items than this within those first "
        "items is stopped.",
    )
    screened_out_code = models.CharField(
        max_length=64,
        blank=True,
        verbose_name="Screened-out code",
        help_text="Shown to a participant stopped by the attention check.",
    )
    screened_out_url = models.URLField(
        max_length=500,
        blank=True,
        verbose_name="Screened-out URL",
        help_text="Where a screened-out participant is sent (empty: they stay on the page).",
    )
    report_screened_out = models.BooleanField(
        default=False,
        verbose_name="Count screened-out participants in reports",
        help_text="Their answers are always kept; by default no report counts them.",
    )
    same_session_required = models.BooleanField(
        default=False,
        verbose_name="Resume only in the same platform session",
        help_text="A participant coming back from another browser must bring the same "
        "session id (Prolific's SESSION_ID, MTurk's assignmentId); off: their platform id "
        "alone resumes.",
    )

    def __str__(self) -> str:
        return f"panel of {self.study}"


class PanelLink(models.Model):
    """A secret recruitment link: to the whole study (`group` empty), or to one group."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="panel_links")
    group = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The group its participants join (empty: none)."
    )
    token = models.CharField(max_length=64, unique=True, default=new_token)
    created_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "group"]
        constraints = [
            models.UniqueConstraint(
                fields=["study"], condition=Q(group__isnull=True), name="one_study_link"
            ),
            models.UniqueConstraint(
                fields=["study", "group"], condition=Q(group__isnull=False), name="one_group_link"
            ),
        ]

    def __str__(self) -> str:
        where = "study" if self.group is None else f"group {self.group + 1}"
        return f"link to {where} of {self.study_id}"

    @property
    def open(self) -> bool:
        return self.closed_at is None


class Participant(models.Model):
    """One recruited person in one study, known by their platform id."""

    class Status(models.TextChoices):
        WORKING = "working", "Working"
        COMPLETE = "complete", "Complete"
        SCREENED_OUT = "screened-out", "Screened out"

    class Decision(models.TextChoices):
        NONE = "", "Not decided"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participant"
    )
    link = models.ForeignKey(
        PanelLink, null=True, blank=True, on_delete=models.SET_NULL, related_name="participants"
    )
    group = models.PositiveSmallIntegerField(null=True, blank=True)
    platform = models.CharField(max_length=16, help_text="prolific, mturk or other.")
    external_id = models.CharField(max_length=100, help_text="Their id on the platform.")
    platform_params = models.JSONField(
        default=dict, blank=True, help_text="The platform's other parameters (study, session)."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WORKING)
    joined_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    decision = models.CharField(
        max_length=16, choices=Decision.choices, blank=True, default=Decision.NONE
    )
    reason = models.TextField(blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "joined_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "platform", "external_id"], name="participant_once"
            )
        ]
        indexes = [models.Index(fields=["study", "group"], name="participant_study_group")]

    def __str__(self) -> str:
        return f"participant {self.external_id} of {self.study_id}"

    @property
    def finished(self) -> bool:
        return self.status != self.Status.WORKING


class PanelSeat(models.Model):
    """A place in one group of the study's comparison design, for a participant of that
    group's link: its account (participant role, no password, an annotator member of the
    study) is made with the seat, so the criteria design gives it its criteria before anyone
    arrives; the first participant to take the seat becomes that account
    (services/panel.py, `participant_join`)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="panel_seats")
    group = models.PositiveSmallIntegerField()
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="panel_seat"
    )

    class Meta:
        ordering = ["study", "group", "id"]

    def __str__(self) -> str:
        return f"seat in group {self.group + 1} of {self.study}"
