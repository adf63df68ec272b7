"""Factories for every model the tests build by hand."""

import factory
from factory.django import DjangoModelFactory

from apps.accounts.models import User
from apps.annotation.models import Study, StudyMembership
from apps.catalog.models import Aspect, Criterion, PerturbationKind, Task
from apps.corpus.models import Dataset, Origin, Perturbation, SourceItem
from apps.endpoints.models import ENDPOINT_SETTINGS, Endpoint

PASSWORD = "correct horse battery staple"


class UserFactory(DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    role = "annotator"
    password = factory.django.Password(PASSWORD)


class TaskFactory(DjangoModelFactory):
    class Meta:
        model = Task
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"task-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.title())
    text_name = "summary"


class AspectFactory(DjangoModelFactory):
    class Meta:
        model = Aspect
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"aspect-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.title())


class CriterionFactory(DjangoModelFactory):
    class Meta:
        model = Criterion

    key = factory.Sequence(lambda n: f"criterion-{n}")
    aspect = factory.SubFactory(AspectFactory)
    description_type = "default"
    text = "How good the {T} is."


class KindFactory(DjangoModelFactory):
    class Meta:
        model = PerturbationKind
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"kind-{n}")
    name = factory.LazyAttribute(lambda o: o.slug)
    family = "custom"
    method = "llm"


class DatasetFactory(DjangoModelFactory):
    class Meta:
        model = Dataset

    name = factory.Sequence(lambda n: f"dataset {n}")


class SourceItemFactory(DjangoModelFactory):
    class Meta:
        model = SourceItem

    dataset = factory.SubFactory(DatasetFactory)
    external_id = factory.Sequence(lambda n: f"item-{n}")
    original = "The council voted to close the library in March."


class PerturbationFactory(DjangoModelFactory):
    class Meta:
        model = Perturbation

    item = factory.SubFactory(SourceItemFactory)
    kind = factory.SubFactory(KindFactory)
    text = "The council voted not to close the library in March."
    origin = Origin.IMPORT


class StudyFactory(DjangoModelFactory):
    class Meta:
        model = Study

    slug = factory.Sequence(lambda n: f"study-{n}")
    name = factory.Sequence(lambda n: f"Study {n}")
    owner = factory.SubFactory(UserFactory, role="researcher")


class MembershipFactory(DjangoModelFactory):
    class Meta:
        model = StudyMembership

    study = factory.SubFactory(StudyFactory)
    user = factory.SubFactory(UserFactory)
    role = "annotator"


def _endpoint_settings(fields: dict) -> dict:
    """The endpoint settings among a judge's fields (as the judge page and API take them)."""
    return {name: fields.pop(name) for name in list(fields) if name in ENDPOINT_SETTINGS}


def llm_judge_create(*, created_by=None, **fields):
    """An LLM judge and its endpoint straight into the database (no checks: tests that need
    what a service would refuse); endpoint settings (base_url, model...) among ``fields``."""
    from apps.judging.models import Judge

    settings = _endpoint_settings(fields)
    endpoint = Endpoint.objects.create(name=fields["name"], owner=created_by, **settings)
    return Judge.objects.create(kind="llm", endpoint=endpoint, created_by=created_by, **fields)


def llm_judge_save(*, user=None, shared_with=None, **fields):
    """An LLM judge made the way the judge page and API make one (``judge_save``)."""
    from apps.judging.models import Judge
    from apps.judging.services import judge_save

    settings = _endpoint_settings(fields)
    return judge_save(judge=Judge(**fields), user=user, shared_with=shared_with, endpoint=settings)


def key_grant(variable, *users, hosts=""):
    """An administrator's grant of a key variable to these researchers (bound to ``hosts``)."""
    from apps.endpoints.models import KeyGrant

    grant = KeyGrant.objects.create(variable=variable, hosts=hosts)
    grant.users.set(users)
    return grant
