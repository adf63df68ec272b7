"""A recruited panel fills the groups of the comparison design in turn (Hu et al.'s 4 groups;
docs/annotation.md, "Recruiting a panel"): a group's link comes with its seats, placed in that
group by the criteria design before anyone arrives; each participant of the link takes one
and compares the pairs of its criteria."""

from __future__ import annotations

import re
import uuid
from collections import Counter

import pytest
from django.test import Client

from apps.annotation.design import groups_split
from apps.annotation.models import (
    Comparison,
    ComparisonSlot,
    CriterionAssignment,
    Panel,
    PanelSeat,
    Participant,
)
from apps.annotation.services import study_plan_build
from apps.annotation.services.panel import panel_link_open
from apps.annotation.services.participation import participant_finish
from tests.annotation.factories import study_setup
from tests.annotation.panel_calls import arrive

pytestmark = pytest.mark.django_db


def test_placed_annotators_keep_their_group_and_the_others_fill_the_smallest():
    assert groups_split([1, 2, 3, 4, 5], 2) == [[1, 3, 5], [2, 4]]  # none placed: round-robin
    assert groups_split([1, 2, 3, 4, 5], 2, {4: 0, 5: 0}) == [[4, 5, 3], [1, 2]]


def comparison_panel(per_group: int | None = 2):
    """Two groups, two aspects (two criteria), comparisons open without vetting."""
    setup = study_setup(
        perturbations=3,
        annotators=0,
        aspects=2,
        comparison_groups=2,
        comparisons_need_vetting=False,
    )
    Panel.objects.create(study=setup.study, participants_per_group=per_group)
    return setup


def test_each_groups_link_brings_its_seats_into_the_design_and_arrivals_take_them():
    setup = comparison_panel()
    study = setup.study
    links = [panel_link_open(study=study, group=g) for g in (0, 1)]
    seats = dict(PanelSeat.objects.filter(study=study).values_list("user_id", "group"))
    assert sorted(Counter(seats.values()).items()) == [(0, 2), (1, 2)]
    design = list(
        CriterionAssignment.objects.filter(study=study).values_list(
            "annotator_id", "group", "criterion_id"
        )
    )
    assert {(annotator, group) for annotator, group, _ in design} <= set(seats.items())
    for group in (0, 1):  # every criterion once in each group, split between its two seats
        criteria = [c for _, g, c in design if g == group]
        assert sorted(criteria) == sorted(c.pk for c in setup.criteria)
    slots = ComparisonSlot.objects.filter(study=study)
    assert slots.count() == 3 * 2 * 2  # pairs x criteria x groups

    for pid in ("g2-a", "g2-b"):
        assert arrive(Client(), links[1], f"PROLIFIC_PID={pid}").status_code == 302
    taken = Participant.objects.filter(study=study)
    assert {seats[p.user_id] for p in taken} == {1}  # both in group 2's seats
    for participant in taken:
        mine = slots.filter(annotator=participant.user)
        assert mine.exists() and set(mine.values_list("group", flat=True)) == {1}
    full = arrive(Client(), links[1], "PROLIFIC_PID=g2-c")
    assert full.status_code == 409 and b"full" in full.content
    first = Client()
    assert arrive(first, links[0], "PROLIFIC_PID=g1-a").status_code == 302
    assert seats[Participant.objects.get(external_id="g1-a").user_id] == 0
    page = first.get(f"/studies/{study.pk}/compare/")  # their criteria's pairs, to compare
    assert page.status_code == 200 and b'name="choice"' in page.content


def test_a_groups_link_needs_its_places_when_the_study_compares(client):
    setup = comparison_panel(per_group=None)
    with pytest.raises(ValueError, match="participants per group"):
        panel_link_open(study=setup.study, group=0)
    client.force_login(setup.study.owner)
    page = client.post(f"/studies/{setup.study.pk}/panel/links/", {"group": "1"}, follow=True)
    assert b"set the participants per group first" in page.content
    assert not PanelSeat.objects.exists() and not setup.study.panel_links.exists()


def test_the_study_wide_links_participants_stay_out_of_the_design():
    """They do pooled work: a plan built after they joined gives them no criteria."""
    setup = comparison_panel()
    study = setup.study
    panel_link_open(study=study, group=0)
    panel_link_open(study=study, group=1)
    everyone = panel_link_open(study=study)
    assert arrive(Client(), everyone, "participant=walk-in").status_code == 302
    walk_in = Participant.objects.get(external_id="walk-in").user
    study_plan_build(study=study)
    assert not CriterionAssignment.objects.filter(study=study, annotator=walk_in).exists()
    seats = set(PanelSeat.objects.filter(study=study).values_list("user_id", flat=True))
    assert set(CriterionAssignment.objects.values_list("annotator_id", flat=True)) == seats


def test_a_screened_out_participants_seat_goes_to_the_next_arrival_with_its_work():
    setup = comparison_panel(per_group=1)
    study = setup.study
    link = panel_link_open(study=study, group=0)
    panel_link_open(study=study, group=1)
    first = Client()
    assert arrive(first, link, "participant=careless").status_code == 302
    careless = Participant.objects.get(external_id="careless")
    page = first.get(f"/studies/{study.pk}/compare/")
    unit = re.search(rb"/compare/(\d+)/(\d+)/choice/", page.content)
    assert unit is not None
    answered = first.post(
        f"/studies/{study.pk}/compare/{int(unit[1])}/{int(unit[2])}/choice/",
        {"idempotency_key": uuid.uuid4(), "choice": "A", "original_first": "1"},
    )
    assert answered.status_code == 302
    criteria = set(
        CriterionAssignment.objects.filter(annotator=careless.user).values_list(
            "criterion", flat=True
        )
    )
    assert arrive(Client(), link, "participant=waiting").status_code == 409  # the seat is taken

    participant_finish(participant=careless, status=Participant.Status.SCREENED_OUT)
    seat = PanelSeat.objects.get(study=study, group=0)
    assert seat.user_id != careless.user_id
    moved = CriterionAssignment.objects.filter(annotator=seat.user)
    assert set(moved.values_list("criterion", flat=True)) == criteria
    slots = ComparisonSlot.objects.filter(study=study, group=0)
    assert set(slots.values_list("annotator", flat=True)) == {seat.user_id}
    assert not slots.filter(done_at__isnull=False).exists()  # the answered one is open again
    assert Comparison.answers.filter(annotator=careless.user).count() == 1  # theirs, kept

    assert arrive(Client(), link, "participant=next").status_code == 302
    assert Participant.objects.get(external_id="next").user_id == seat.user_id
