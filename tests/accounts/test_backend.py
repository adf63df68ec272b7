"""The signed-in user of a page, read by one plain statement (apps/accounts/backends.py): the
same person Django's ModelBackend finds, and nobody for an unknown, malformed or inactive id."""

import pytest
from django.contrib.auth.backends import ModelBackend

from apps.accounts.backends import UserBackend
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_signed_in_user_is_the_one_model_backend_finds_with_every_field():
    user = UserFactory(first_name="Ada", email="ada@example.org")
    found = UserBackend().get_user(str(user.pk))  # the session keeps the id as a string
    expected = ModelBackend().get_user(user.pk)
    assert found == expected
    assert {f.attname: getattr(found, f.attname) for f in user._meta.concrete_fields} == {
        f.attname: getattr(expected, f.attname) for f in user._meta.concrete_fields
    }
    assert found.check_password("wrong") is False
    found.first_name = "Grace"
    found.save()  # an instance that saves as the ORM's would
    assert type(user).objects.get(pk=user.pk).first_name == "Grace"


@pytest.mark.parametrize("user_id", ["999999", "not-a-number", None])
def test_an_unknown_or_malformed_id_is_nobody(user_id):
    UserFactory()
    assert UserBackend().get_user(user_id) is None


def test_a_deactivated_account_is_nobody_on_its_next_page(client):
    user = UserFactory()
    client.force_login(user)
    assert client.get("/").status_code == 200
    type(user).objects.filter(pk=user.pk).update(is_active=False)
    assert UserBackend().get_user(user.pk) is None
    assert client.get("/").status_code == 302
