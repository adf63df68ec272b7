"""Access to every URL, generated from the URL conf and the OpenAPI schema.

Researcher "alpha" owns one object of every kind, each with the id ``FOREIGN``: so every id in
every path (``pk``, ``perturbation_pk``...) names one of alpha's objects. Each URL the URL conf
or the schema knows is requested by anonymous, an annotator, an expert and another researcher
(none of them in alpha's study), with every method the schema lists and GET and POST for the
rest. None of them may read alpha's objects (a read is a redirect to the login page, 401, 403
or 404), see alpha's data anywhere (no "alpha-private" in any answer), get a 500, or change
the database. A researcher who belongs to alpha's study (as an expert) may read its data, and
still changes nothing. A new page or endpoint is covered as soon as it is routed: nobody has to
remember to add it here. See docs/api.md, "Access".

A participant recruited into alpha's study (docs/annotation.md, "Recruiting a panel") is
held tighter: outside the pages that declare ``OpenToParticipants`` (their work and their
completion page) and the public ones, every request is refused, whatever it names, pages and
API alike.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.apps import apps
from django.db import connection
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.generators import SchemaGenerator

from apps.accounts.permissions import admits_participants
from apps.annotation.models import ControlItem, Panel, PanelLink, Participant, Study
from apps.corpus.models import GenerationJob, ImportJob
from apps.judging.models import (
    AdversarialSearch,
    Candidate,
    JudgeRun,
    SearchItem,
    SearchIteration,
    SearchJudge,
    Strategy,
)
from tests.factories import (
    CriterionFactory,
    DatasetFactory,
    KindFactory,
    MembershipFactory,
    PerturbationFactory,
    SourceItemFactory,
    StudyFactory,
    TaskFactory,
    UserFactory,
    llm_judge_create,
)

pytestmark = pytest.mark.django_db

FOREIGN = 900_001
SHARED = 900_002  # a catalog criterion: the catalog is everyone's
SECRET = "alpha-private"
#: URLs anyone may open: the login page, the health check, token exchange, invitation links
#: (their own token is the check). Still never a 500 nor alpha's data.
PUBLIC = {"/healthz", "/accounts/login/", "/accounts/logout/", "/api/v1/schema/", "/admin/login/"}
PUBLIC_PREFIXES = ("/api/v1/auth/", "/accounts/invite/", "/docs/")  # docs: the manual
PUBLIC_PREFIXES += ("/join/",)  # recruitment links: their secret is the check
#: Values of path parameters that are not ids.
VALUES = {
    "file_format": "csv",
    "format": "json",
    "name": "human-agreement",
    "slug": "summarization",
    "app_label": "corpus",
    "criterion_pk": str(SHARED),
}
#: Tables that change on any request (sessions, login times, the admin's log, throttles), and
#: caches filled by reads (a report's snapshot).
VOLATILE_APPS = {"sessions", "authtoken", "admin", "axes"}
CACHES = {"analysis_reportsnapshot", "analysis_auditreport"}
READ_STATUSES = {401, 403, 404, 405}
METHODS = ("get", "post", "put", "patch", "delete")


# --- the URLs ---------------------------------------------------------------------------------


def _fill(route: str) -> str:
    """A concrete path from a route or a regex: ids are FOREIGN, other values from VALUES."""

    def value(name: str) -> str:
        return VALUES.get(name, str(FOREIGN))

    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: value(m.group(1)), route)
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: value(m.group(1)), path)
    path = path.replace("^", "").replace("$", "").replace("/?", "/").replace("\\.", ".")
    return "/" + path.lstrip("/")


def _routes(patterns: list[Any], prefix: str = "") -> Iterator[str]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def url_conf_requests() -> set[tuple[str, str]]:
    """GET and POST on every routed path (the admin: GET, it is Django's own)."""
    found = set()
    for route in _routes(get_resolver().url_patterns):
        path = _fill(route)
        found.add(("get", path))
        if not path.startswith(("/admin/", "/accounts/logout/")):  # logging out ends the test
            found.add(("post", path))
    return found


def schema_requests() -> set[tuple[str, str]]:
    """Every operation of the OpenAPI schema, integer query parameters set to FOREIGN."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    found = set()
    for path, operations in schema["paths"].items():
        concrete = re.sub(r"\{(\w+)\}", lambda m: VALUES.get(m.group(1), str(FOREIGN)), path)
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            ints = [
                p["name"]
                for p in operation.get("parameters", [])
                if p.get("in") == "query"
                and p.get("schema", {}).get("type") == "integer"
                and p["name"] not in ("limit", "offset", "page")
            ]
            query = "&".join(f"{name}={FOREIGN}" for name in ints)
            found.add((method, concrete + (f"?{query}" if query else "")))
    return found


WORK_PAGES = ("next", "item", "submit", "skip", "recent")


def _declares_participants(policy: Any) -> bool:
    return any(getattr(p, "admits_participants", False) for p in policy)


def _named(patterns: list[Any], prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _named(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern


def participant_paths() -> set[str]:
    """The paths of the pages open to participants (declared ``OpenToParticipants``)."""
    found = set()
    for route, pattern in _named(get_resolver().url_patterns):
        if admits_participants(getattr(pattern.callback, "access_policy", ())):
            found.add(_fill(route))
    return found


def all_requests() -> list[tuple[str, str]]:
    return sorted(url_conf_requests() | schema_requests())


# --- alpha's world ----------------------------------------------------------------------------


@dataclass
class World:
    owner: Any
    others: dict[str, Any] = field(default_factory=dict)


def alpha_world() -> World:
    """One object of every kind owned by alpha, all with the id FOREIGN."""
    owner = UserFactory(username="alpha", role="researcher")
    task = TaskFactory(slug="summarization", text_name="summary")
    dataset = DatasetFactory(
        pk=FOREIGN, name=f"{SECRET} dataset", owner=owner, task=task, publisher_validated=True
    )
    item = SourceItemFactory(
        pk=FOREIGN, dataset=dataset, original=f"{SECRET} original", source=f"{SECRET} source"
    )
    kind = KindFactory(slug="alpha-kind")
    perturbation = PerturbationFactory(
        pk=FOREIGN, item=item, kind=kind, text=f"{SECRET} perturbed text"
    )
    criterion = CriterionFactory(pk=SHARED)
    study: Study = StudyFactory(pk=FOREIGN, owner=owner, name=f"{SECRET} study", slug="alpha")
    ControlItem.objects.create(
        pk=FOREIGN, study=study, work="vetting", perturbation=perturbation, expected="invalid"
    )
    study.datasets.add(dataset)
    study.kinds.add(kind)
    study.criteria.add(criterion)
    judge = llm_judge_create(
        pk=FOREIGN,
        name=f"{SECRET} judge",
        base_url=f"http://{SECRET}.invalid/v1",
        model=f"{SECRET}-model",
        api_key_env="DISCERN_KEY_ALPHA",
        created_by=owner,
    )
    strategy = Strategy.objects.create(
        pk=FOREIGN,
        slug="alpha-strategy",
        name=f"{SECRET} strategy",
        family="single",
        prompt_template=f"{SECRET}: rate {{{{text}}}}",
        parser="analysis_rating",
        created_by=owner,
    )
    JudgeRun.objects.create(
        pk=FOREIGN,
        judge=judge,
        strategy=strategy,
        dataset=dataset,
        study=study,
        label=f"{SECRET} run",
        created_by=owner,
    )
    ImportJob.objects.create(
        pk=FOREIGN,
        dataset_name=f"{SECRET} dataset",
        path="/nonexistent/upload.csv",
        original_name=f"{SECRET}.csv",
        status=ImportJob.Status.DONE,
        created_by=owner,
    )
    GenerationJob.objects.create(pk=FOREIGN, dataset=dataset, created_by=owner)
    _alpha_search(owner, dataset, item, judge, strategy)
    _alpha_audit(owner, study, judge, strategy)
    _alpha_offer(owner)
    others = {
        "annotator": UserFactory(username="ann-b", role="annotator"),
        "expert": UserFactory(username="exp-b", role="expert"),
        "other researcher": UserFactory(username="beta", role="researcher"),
        "researcher in the study": UserFactory(username="gamma", role="researcher"),
    }
    MembershipFactory(study=study, user=others["researcher in the study"], role="expert")
    others["participant"] = _alpha_participant(study)
    return World(owner=owner, others=others)


def _alpha_participant(study) -> Any:
    """A participant recruited into alpha's study through its link (both with id FOREIGN)."""
    Panel.objects.create(study=study, consent=f"{SECRET} consent", completion_code="ALPHA-CODE")
    link = PanelLink.objects.create(pk=FOREIGN, study=study, token=f"{SECRET}-token")
    user = UserFactory(username="p-foreign", role="participant")
    MembershipFactory(study=study, user=user, role="annotator")
    Participant.objects.create(
        study=study, user=user, link=link, platform="prolific", external_id="PID-ALPHA"
    )
    return user


def _alpha_search(owner, dataset, item, judge, strategy) -> None:
    """An adversarial search of alpha's, with an item, an iteration and a candidate."""
    search = AdversarialSearch.objects.create(
        pk=FOREIGN,
        label=f"{SECRET} search",
        dataset=dataset,
        generator=judge.endpoint,
        direction="R+",
        status="done",
        created_by=owner,
    )
    run = JudgeRun.objects.create(
        pk=FOREIGN + 1, judge=judge, strategy=strategy, dataset=dataset, created_by=owner
    )
    SearchJudge.objects.create(
        search=search, role="victim", judge=judge, strategy=strategy, run=run
    )
    search_item = SearchItem.objects.create(pk=FOREIGN, search=search, item=item)
    iteration = SearchIteration.objects.create(search_item=search_item, number=0)
    Candidate.objects.create(
        pk=FOREIGN,
        iteration=iteration,
        search_item=search_item,
        index=0,
        text=f"{SECRET} candidate",
        origin="initial",
    )


def _alpha_offer(owner) -> None:
    """A judge offered to alpha, not accepted yet: only alpha sees, accepts or declines it."""
    from apps.judging.models import JudgeShare

    delta = UserFactory(username="delta", role="researcher")
    offered = llm_judge_create(
        name=f"{SECRET} offered judge",
        base_url=f"http://{SECRET}-offered.invalid/v1",
        model="m",
        created_by=delta,
    )
    JudgeShare.objects.create(pk=FOREIGN, judge=offered, user=owner)


def _alpha_audit(owner, study, judge, strategy) -> None:
    """A judge audit of alpha's with one subject, a part and a share link (report cards)."""
    from apps.analysis.models import CardShare
    from apps.judging.models import AuditPart, AuditSubject, JudgeAudit

    audit = JudgeAudit.objects.create(pk=FOREIGN, owner=owner, study=study, label=f"{SECRET} audit")
    subject = AuditSubject.objects.create(
        pk=FOREIGN, audit=audit, judge=judge, strategy=strategy, label=f"{SECRET} subject"
    )
    AuditPart.objects.create(
        subject=subject, part="fbi_single", run=JudgeRun.objects.get(pk=FOREIGN)
    )
    CardShare.objects.create(pk=FOREIGN, audit=audit, created_by=owner)
    from apps.judging.models import Improvement

    Improvement.objects.create(
        pk=FOREIGN, owner=owner, subject=subject, result={"headline": f"{SECRET} result"}
    )


# --- the database, before and after -----------------------------------------------------------


def _tables() -> list[str]:
    return sorted(
        model._meta.db_table
        for model in apps.get_models(include_auto_created=True)
        if model._meta.app_label not in VOLATILE_APPS
        and model._meta.managed
        and model._meta.db_table not in CACHES
    )


def table_digests() -> dict[str, str]:
    """A digest of every row of every table (users without their last login time)."""
    digests = {}
    with connection.cursor() as cursor:
        for table in _tables():
            column = "t::text"
            if table == "accounts_user":
                column = "(t.id, t.username, t.password, t.role, t.is_staff, t.is_superuser)::text"
            if table == "annotation_participant":  # their own finishing is theirs to record
                column = "(t.id, t.study_id, t.user_id, t.external_id, t.decision, t.reason)::text"
            cursor.execute(f"SELECT string_agg({column}, '|' ORDER BY {column}) FROM \"{table}\" t")
            digests[table] = hashlib.sha256(str(cursor.fetchone()[0]).encode()).hexdigest()
    return digests


def changed_tables(before: dict[str, str]) -> list[str]:
    after = table_digests()
    return [table for table in before if before[table] != after[table]]


# --- the requests -----------------------------------------------------------------------------


def send(client: Client, method: str, path: str, body: Any = None) -> Any:
    kwargs: dict[str, Any] = {}
    if method != "get":
        kwargs = {"data": body or {}, "content_type": "application/json"}
        if not path.startswith("/api/"):
            kwargs = {"data": body or {}}
    return getattr(client, method)(path, **kwargs)


def _is_login_redirect(response: Any) -> bool:
    return response.status_code == 302 and "login" in response.get("Location", "")


def _public(path: str) -> bool:
    return path.split("?")[0] in PUBLIC or path.startswith(PUBLIC_PREFIXES)


def problem(who: str, method: str, path: str, response: Any) -> str | None:
    """Why this answer to a user who is not alpha is wrong, or None."""
    status = response.status_code
    if status >= 500:
        return f"{status}"
    if who == "participant":
        return participant_problem(path, response)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    if SECRET.encode() in body and who != "researcher in the study":
        return f"{status} showing alpha's data"
    if _public(path):
        return None
    if who == "anonymous":
        ok = _is_login_redirect(response) or status in (401, 403)
        return None if ok else f"{status} for an anonymous caller"
    names_alpha = str(FOREIGN) in path
    if who == "researcher in the study":  # may read the study's data: the database tells
        return None
    if method == "get":
        if names_alpha and not (_is_login_redirect(response) or status in READ_STATUSES):
            return f"{status} on a read of alpha's object"
        return None
    if 200 <= status < 300 and names_alpha:
        return f"{status}: a change to alpha's object was accepted"
    if status in (301, 302, 303) and not _is_login_redirect(response) and names_alpha:
        return f"{status} to {response['Location']}: a change to alpha's object went through"
    return None


def participant_problem(path: str, response: Any) -> str | None:
    """A participant of alpha's study may use their work pages (which show the study's name,
    so alpha's words) and public ones; everything else is refused, whatever it names."""
    if _public(path) or path.split("?")[0] in participant_paths():
        return None
    if _is_login_redirect(response) or response.status_code in READ_STATUSES:
        return None
    if path.startswith("/admin/") and response.status_code == 302:
        return None  # the admin's own way out (it checks staff itself)
    return f"{response.status_code} for a participant, outside their work"


@pytest.fixture
def world(db) -> World:
    return alpha_world()


def test_every_url_is_generated(world):
    """The generated list covers the pages and the API of every app (and the schema's)."""
    requests = all_requests()
    paths = {path for _, path in requests}
    for expected in (
        f"/datasets/{FOREIGN}/",
        f"/judging/runs/{FOREIGN}/",
        f"/studies/{FOREIGN}/vet/{FOREIGN}/",
        f"/api/v1/judges/{FOREIGN}/",
        f"/api/v1/datasets/{FOREIGN}/ratings/",
        f"/api/v1/studies/{FOREIGN}/reports/human-agreement/",
    ):
        assert expected in paths, expected
    assert ("patch", f"/api/v1/judges/{FOREIGN}/") in requests
    assert len(requests) > 250


def test_the_owner_reaches_their_objects(client, world):
    """The ids are real: alpha reads each of these (so a 404 for the others means something)."""
    client.force_login(world.owner)
    for path in (
        f"/datasets/{FOREIGN}/",
        f"/imports/{FOREIGN}/",
        f"/generate/{FOREIGN}/",
        f"/judging/runs/{FOREIGN}/",
        f"/judging/judges/{FOREIGN}/",
        f"/judging/strategies/{FOREIGN}/",
        f"/studies/{FOREIGN}/",
        f"/api/v1/datasets/{FOREIGN}/",
        f"/api/v1/items/{FOREIGN}/",
        f"/api/v1/perturbations/{FOREIGN}/",
        f"/api/v1/judges/{FOREIGN}/",
        f"/api/v1/judge-offers/{FOREIGN}/",
        f"/api/v1/strategies/{FOREIGN}/",
        f"/api/v1/judge-runs/{FOREIGN}/",
        f"/judging/searches/{FOREIGN}/",
        f"/api/v1/adversarial-searches/{FOREIGN}/",
        f"/api/v1/adversarial-searches/{FOREIGN}/items/",
        f"/api/v1/adversarial-searches/{FOREIGN}/trajectory/?item={FOREIGN}",
        f"/api/v1/imports/{FOREIGN}/",
        f"/api/v1/generation-jobs/{FOREIGN}/",
        f"/api/v1/studies/{FOREIGN}/",
        f"/audits/{FOREIGN}/cards/{FOREIGN}/",
        f"/audits/{FOREIGN}/compare/",
        f"/audits/{FOREIGN}/audit.json",
        f"/audits/{FOREIGN}/junit.xml",
        f"/audits/{FOREIGN}/promptfoo.json",
        f"/audits/{FOREIGN}/cards/{FOREIGN}/junit.xml",
        f"/api/v1/judge-audits/{FOREIGN}/junit.xml",
    ):
        assert client.get(path).status_code == 200, path


def test_participants_reach_only_their_work_and_completion_pages():
    """What the participant role is let into, by name: the work pages (next, one unit,
    submit, skip, their last answers) and their start and completion page."""
    names = {
        pattern.name
        for _, pattern in _named(get_resolver().url_patterns)
        if _declares_participants(getattr(pattern.callback, "access_policy", ()))
    }
    work = {name for name in names if name.rsplit("-", 1)[-1] in WORK_PAGES}
    # the vetting page's edits, and the expert survey's page (its study rule refuses them)
    assert names - work == {"participant-home", "vet-edit", "vet-preview", "survey"}
    assert {"vet-next", "vet-submit", "assess-next", "compare-next"} <= work


@pytest.mark.parametrize(
    "who",
    [
        "anonymous",
        "annotator",
        "expert",
        "other researcher",
        "researcher in the study",
        "participant",
    ],
)
def test_nobody_else_reads_or_changes_alphas_objects(world, who):
    owner_client = Client(raise_request_exception=False)
    owner_client.force_login(world.owner)
    client = Client(raise_request_exception=False)
    if who != "anonymous":
        client.force_login(world.others[who])
    before = table_digests()
    problems = []
    for method, path in all_requests():
        body = None
        if method in ("put", "patch") and path.startswith("/api/"):
            # alpha's own object sent back with a new name: what a hijack would send
            mine = owner_client.get(path)
            body = mine.json() | {"name": "hijacked"} if mine.status_code == 200 else None
        response = send(client, method, path, body)
        if why := problem(who, method, path, response):
            problems.append(f"{method.upper()} {path}: {why}")
    assert not problems, "\n".join(problems)
    assert not changed_tables(before), f"{who} changed the database"
