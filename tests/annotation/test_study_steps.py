"""The new-study steps: what they say the plan will hold, posting step by step, errors, and
pickers that read as words (apps/annotation/study_steps.py, selectors/plan_preview.py)."""

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from apps.annotation.models import Study, StudyMembership
from apps.annotation.selectors.plan_preview import plan_preview
from apps.annotation.services.plan import study_plan_build
from apps.annotation.services.studies import SETUP_FIELDS, study_create
from apps.annotation.study_steps import SECTIONS, STEPS, study_preview
from tests.factories import (
    AspectFactory,
    CriterionFactory,
    DatasetFactory,
    KindFactory,
    PerturbationFactory,
    SourceItemFactory,
    StudyFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def _scripted(owner):
    """Three items; kinds a (3 texts), b (2), adversarial (1) chosen, c (1) not; another
    dataset's text of kind a; criteria: aspect x twice (default, detailed), aspect y once."""
    dataset, other = DatasetFactory(owner=owner), DatasetFactory(owner=owner)
    items = [SourceItemFactory(dataset=dataset) for _ in range(3)]
    a, b = KindFactory(name="Negation"), KindFactory(name="Swap")
    c, adversarial = KindFactory(), KindFactory(family="adversarial")
    for item in items:
        PerturbationFactory(item=item, kind=a)
    for item in items[:2]:
        PerturbationFactory(item=item, kind=b)
    PerturbationFactory(item=items[0], kind=c)
    PerturbationFactory(item=items[1], kind=adversarial)
    PerturbationFactory(item=SourceItemFactory(dataset=other), kind=a)
    x, y = AspectFactory(name="Coherence"), AspectFactory(name="Fluency")
    criteria = [
        CriterionFactory(aspect=x, description_type="default"),
        CriterionFactory(aspect=x, description_type="detailed"),
        CriterionFactory(aspect=y, description_type="default"),
    ]
    return {
        "datasets": [dataset],
        "kinds": [a, b, adversarial],
        "criteria": criteria,
        "assessment_criteria": criteria[:1],
        "vetting_overlap": 2,
        "comparison_groups": 1,
        "comparisons_need_vetting": False,
        "assessment_overlap": 2,
        "assessment_texts": "both",
        "best_worst_criteria": criteria[2:],
        "best_worst_overlap": 2,
    }


@pytest.mark.parametrize("need_vetting", [False, True])
def test_the_counts_equal_the_plan_the_study_then_gets(researcher, need_vetting):
    choices = {**_scripted(researcher), "comparisons_need_vetting": need_vetting}
    people = [UserFactory(role="annotator") for _ in range(2)]
    preview = study_preview(choices, annotators=len(people))
    assert (preview.perturbations, preview.vettings, preview.gold_checks) == (6, 12, 3)
    assert preview.comparisons == 6 * 3 * 1 and preview.ratings == (3 + 6) * 1 * 2
    assert preview.comparisons_now == (0 if need_vetting else 18)
    assert preview.per_annotator == {"vettings": 6, "comparisons": 12, "ratings": 9}
    # best-worst: items of 3 and 4 texts, one tuple each (the third item has 2 texts) x 2
    (scaled,) = preview.kinds
    assert (scaled.count, scaled.detail) == (4, "2 tuples × 1 criterion × 2 per tuple")
    study = study_create(owner=researcher, name="Scripted", annotators=people, **choices)
    summary = study_plan_build(study=study)
    assert summary.perturbations == preview.perturbations and not summary.problem
    assert {k: v for k, v in summary.slots.items() if k in preview.slots} == preview.slots


def test_without_enough_annotators_comparisons_wait_as_the_plan_says(researcher):
    choices = _scripted(researcher)
    preview = plan_preview(**choices, annotators=1)  # aspect x has two descriptions
    assert preview.problem and preview.comparisons_now == 0
    study = study_create(
        owner=researcher, name="Alone", annotators=[UserFactory(role="annotator")], **choices
    )
    assert study_plan_build(study=study).slots["comparison"] == 0


class _Form(HTMLParser):
    """What a browser would send from the page's form (its first submit button excluded)."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, list[str]] = {}
        self._text: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") != "submit":
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self.data.setdefault(name, []).append(a.get("value", "on"))
        elif tag == "textarea" and name:
            self._text = name
            self.data.setdefault(name, []).append("")
        elif tag == "select":
            self._select = name
        elif tag == "option" and self._select and "selected" in a:
            self.data.setdefault(self._select, []).append(a["value"])

    def handle_data(self, data):
        if self._text:
            self.data[self._text][-1] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._text = None
        elif tag == "select":
            self._select = None


def _fields(page) -> dict[str, list[str]]:
    form = _Form()
    form.feed(page.content.decode())
    return form.data


def _step(page) -> str:
    return page.content.decode().split('id="step-title">')[1].split("</h2>")[0]


def test_a_study_is_made_step_by_step_carrying_every_choice(client, researcher):
    choices = _scripted(researcher)
    ann, exp = UserFactory(username="ann1"), UserFactory(username="exp1")
    client.force_login(researcher)
    url = reverse("study-new")
    page = client.get(url)
    assert _step(page) == "Step 1 of 6: Data"
    fill = {
        "name": ["Stepped"],
        "datasets": [str(d.pk) for d in choices["datasets"]],
        "kinds": [str(k.pk) for k in choices["kinds"]],
        "criteria": [str(c.pk) for c in choices["criteria"]],
        "vetting_overlap": ["2"],
        "annotators": ["ann1"],
        "experts": ["exp1"],
    }
    for number, step in enumerate(STEPS[:-1], start=1):
        data = _fields(page)
        data.update({name: fill[name] for name in step.fields if name in fill})
        page = client.post(url, {**data, "go": "next"})
        assert _step(page) == f"Step {number + 1} of 6: {STEPS[number].title}"
        assert not Study.objects.exists()
    body = page.content.decode()
    counts = {"perturbations": 6, "vettings": 12, "comparisons": 18}  # before vetting: 0 now
    for key, value in counts.items():
        assert f'data-count="{key}">{value}<' in body
    assert "Negation" in body and "Coherence — detailed" in body and "ann1" in body
    back = client.post(url, {**_fields(page), "go": "1"})  # "Change" the kinds
    assert _step(back) == "Step 2 of 6: Perturbation kinds"
    done = client.post(url, {**_fields(page), "go": "create"})
    study = Study.objects.get(name="Stepped")
    assert done.status_code == 302 and done["Location"] == reverse("study-members", args=[study.pk])
    assert study.vetting_overlap == 2 and set(study.kinds.all()) == set(choices["kinds"])
    roles = dict(StudyMembership.objects.filter(study=study).values_list("user", "role"))
    assert roles == {ann.pk: "annotator", exp.pk: "expert"}


def test_a_bad_step_names_the_field_and_creates_nothing(client, researcher):
    client.force_login(researcher)
    url = reverse("study-new")
    page = client.post(url, {**_fields(client.get(url)), "name": "", "go": "next"})
    assert _step(page) == "Step 1 of 6: Data"
    assert "Name: This field is required." in page.content.decode()
    data = {**_fields(page), "name": "People", "annotators": "nobody-here"}
    page = client.post(url, {**data, "step": "5", "go": "create"})
    assert _step(page) == "Step 5 of 6: People"
    assert "Annotators (optional): No account is called nobody-here" in page.content.decode()
    assert not Study.objects.exists()


def test_study_pages_show_words_not_slugs_nor_multiple_selects(client, researcher):
    choices = _scripted(researcher)
    study = StudyFactory(owner=researcher)
    client.force_login(researcher)
    url = reverse("study-new")
    page = client.get(url)
    pages = []
    for _ in STEPS:
        pages.append(page.content.decode())
        page = client.post(url, {**_fields(page), "name": "x", "go": "next"})
    pages.append(client.get(reverse("study-edit", args=[study.pk])).content.decode())
    for body in pages:
        assert "<select multiple" not in body and "select multiple" not in body
        for criterion in choices["criteria"]:
            assert criterion.key not in body
        for kind in choices["kinds"][:2]:
            assert kind.slug not in body
    kinds, criteria, edit = pages[1], pages[2], pages[-1]
    assert "Negation" in kinds and "Custom · LLM-written" in kinds
    assert "Coherence — detailed" in criteria and "How good the text is." in criteria
    assert "<details" in edit and "Fluency — default, rated 1 to 5" in edit


def test_edit_shows_every_section_and_saves(client, researcher):
    choices = _scripted(researcher)
    study = study_create(owner=researcher, name="Edited", **choices)
    client.force_login(researcher)
    url = reverse("study-edit", args=[study.pk])
    page = client.get(url)
    body = page.content.decode()
    for section in STEPS[:4]:
        assert f'id="section-{section.slug}"' in body
    data = {**_fields(page), "criteria": [str(choices["criteria"][2].pk)], "vetting_overlap": "3"}
    assert client.post(url, data).status_code == 302
    study.refresh_from_db()
    assert study.vetting_overlap == 3 and list(study.criteria.all()) == [choices["criteria"][2]]


def test_every_set_up_field_has_its_section():
    fields = [name for section in SECTIONS for name in section.fields]
    assert sorted(fields) == sorted(SETUP_FIELDS) and len(set(fields)) == len(fields)
