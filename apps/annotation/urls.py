from django.urls import path

from apps.annotation.views import (
    controls,
    members,
    panel,
    participants,
    progress,
    setup,
    studies,
    survey,
    vetting,
)
from apps.annotation.views.work import work_page_urls

VET = "studies/<int:pk>/vet/<int:perturbation_pk>/"
MEMBER = "studies/<int:pk>/members/<int:member_pk>/"

urlpatterns = [
    path("", studies.home, name="home"),
    # The study's own page (its pipeline) and its progress page are in apps/analysis/urls.py:
    # they read every layer.
    path("studies/archived/", studies.archived, name="studies-archived"),
    path("studies/new/", setup.study_new, name="study-new"),
    path("studies/<int:pk>/edit/", setup.study_edit, name="study-edit"),
    path("studies/<int:pk>/archive/", setup.study_archive_toggle, name="study-archive"),
    path("studies/<int:pk>/members/", members.members, name="study-members"),
    path("studies/<int:pk>/members/add/", members.member_add, name="study-member-add"),
    path("studies/<int:pk>/members/create/", members.members_create, name="study-members-create"),
    path(f"{MEMBER}role/", members.member_role, name="study-member-role"),
    path(f"{MEMBER}remove/", members.member_remove, name="study-member-remove"),
    # Every type of work's pages (views/work.py: next, one unit, submit, skip), each made in
    # its own module.
    *work_page_urls(),
    path(f"{VET}edit/", vetting.vet_edit, name="vet-edit"),
    path(f"{VET}preview/", vetting.vet_preview, name="vet-preview"),
    path("studies/<int:pk>/survey/", survey.survey, name="survey"),
    path("studies/<int:pk>/settings/", progress.study_settings, name="study-settings"),
    path("studies/<int:pk>/plan/", progress.plan_build, name="study-plan"),
    path("studies/<int:pk>/controls/", controls.controls, name="study-controls"),
    path(
        "studies/<int:pk>/controls/settings/",
        controls.control_settings,
        name="study-control-settings",
    ),
    path("studies/<int:pk>/controls/add/", controls.control_new, name="study-control-new"),
    path("studies/<int:pk>/controls/import/", controls.control_import, name="study-control-import"),
    path(
        "studies/<int:pk>/controls/<int:control_pk>/remove/",
        controls.control_delete,
        name="study-control-delete",
    ),
    # A study's recruited panel (views/panel.py, views/participants.py).
    path("join/<str:token>/", participants.join, name="panel-join"),
    path("studies/<int:pk>/participant/", participants.participant_home, name="participant-home"),
    path("studies/<int:pk>/panel/", panel.panel, name="study-panel"),
    path("studies/<int:pk>/panel/settings/", panel.panel_settings, name="study-panel-settings"),
    path("studies/<int:pk>/panel/links/", panel.panel_link_new, name="study-panel-link-new"),
    # The review of the participants, with its figures, is in apps/analysis/urls.py.
    path(
        "studies/<int:pk>/panel/participants/<int:participant_pk>/decide/",
        panel.participant_decision,
        name="study-panel-decide",
    ),
    path(
        "studies/<int:pk>/panel/decisions.csv", panel.panel_decisions, name="study-panel-decisions"
    ),
    *[
        path(
            f"studies/<int:pk>/panel/links/<int:link_pk>/{action}/",
            panel.panel_link_change,
            {"action": action},
            name=f"study-panel-link-{action}",
        )
        for action in ("rotate", "close")
    ],
]
