from django.urls import path

from apps.annotation.views import comparing, members, progress, setup, studies, survey, vetting

VET = "studies/<int:pk>/vet/<int:perturbation_pk>/"
MEMBER = "studies/<int:pk>/members/<int:member_pk>/"
COMPARE = "studies/<int:pk>/compare/<int:perturbation_pk>/<int:criterion_pk>/"

urlpatterns = [
    path("", studies.home, name="home"),
    # The study's own page (its pipeline) is in apps/analysis/urls.py: it reads every layer.
    path("studies/archived/", studies.archived, name="studies-archived"),
    path("studies/new/", setup.study_new, name="study-new"),
    path("studies/<int:pk>/edit/", setup.study_edit, name="study-edit"),
    path("studies/<int:pk>/archive/", setup.study_archive_toggle, name="study-archive"),
    path("studies/<int:pk>/members/", members.members, name="study-members"),
    path("studies/<int:pk>/members/add/", members.member_add, name="study-member-add"),
    path("studies/<int:pk>/members/create/", members.members_create, name="study-members-create"),
    path(f"{MEMBER}role/", members.member_role, name="study-member-role"),
    path(f"{MEMBER}remove/", members.member_remove, name="study-member-remove"),
    path("studies/<int:pk>/vet/", vetting.vet_next, name="vet-next"),
    path(VET, vetting.vet_item, name="vet-item"),
    path(f"{VET}verdict/", vetting.vet_submit, name="vet-submit"),
    path(f"{VET}skip/", vetting.vet_skip, name="vet-skip"),
    path(f"{VET}edit/", vetting.vet_edit, name="vet-edit"),
    path(f"{VET}preview/", vetting.vet_preview, name="vet-preview"),
    path("studies/<int:pk>/compare/", comparing.compare_next, name="compare-next"),
    path(COMPARE, comparing.compare_item, name="compare-item"),
    path(f"{COMPARE}choice/", comparing.compare_submit, name="compare-submit"),
    path(f"{COMPARE}skip/", comparing.compare_skip, name="compare-skip"),
    path("studies/<int:pk>/survey/", survey.survey, name="survey"),
    path("studies/<int:pk>/survey/vote/", survey.survey_vote, name="survey-vote"),
    path("studies/<int:pk>/progress/", progress.progress, name="study-progress"),
    path("studies/<int:pk>/settings/", progress.study_settings, name="study-settings"),
    path("studies/<int:pk>/plan/", progress.plan_build, name="study-plan"),
]
