"""A study sets its own verdict thresholds: checked first, saved all or nothing, and its
audits' cards judge by them (a looser threshold turns "misses" into "detects")."""

import pytest
from django.test import Client

from apps.analysis.cards.card import build_card
from apps.analysis.cards.snapshots import card_get
from apps.analysis.selectors import verdict_thresholds
from apps.analysis.services import ThresholdError, verdict_thresholds_save
from tests.analysis.audit_builders import scripted_audit
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _verdict(card, key):
    table = next(t for t in card.tables() if t.name == "verdict")
    rows = [dict(zip(table.columns, r, strict=True)) for r in table.rows]
    return next(r for r in rows if r["key"] == key and r["scope"] == "all kinds")


def test_a_study_threshold_changes_the_verdict(catalog):
    audit, _careful, careless = scripted_audit()
    assert _verdict(build_card(careless), "detection_failure")["verdict"] == "misses"
    assert card_get(careless) is not None  # a snapshot now exists
    verdict_thresholds_save(study=audit.study, values={"detection_failure": "0.75"})
    assert verdict_thresholds(audit.study)["detection_failure"] == 0.75
    loose = card_get(careless)  # the thresholds are part of the fingerprint: rebuilt
    line = _verdict(loose, "detection_failure")
    assert line["verdict"] == "detects" and line["threshold"] == 0.75  # 0.5 [0.31, 0.69]
    verdict_thresholds_save(study=audit.study, values={"detection_failure": ""})
    assert verdict_thresholds(audit.study)["detection_failure"] == 0.2  # back to the default


def test_bad_thresholds_are_refused_and_nothing_is_saved(catalog):
    audit, _careful, _careless = scripted_audit(n_items=2)
    with pytest.raises(ThresholdError) as error:
        verdict_thresholds_save(
            study=audit.study,
            values={"detection_failure": "0.1", "position_flip": "1.5", "D_min": "many"},
        )
    assert error.value.errors == {
        "position_flip": "a share's threshold lies between 0 and 1",
        "D_min": "a number, please",
    }
    assert verdict_thresholds(audit.study)["detection_failure"] == 0.2  # all or nothing


def test_the_owner_sets_them_on_a_page_and_nobody_else_can(catalog):
    audit, _careful, _careless = scripted_audit(n_items=2)
    page = f"/studies/{audit.study_id}/thresholds/"
    owner = Client()
    owner.force_login(audit.owner)
    shown = owner.get(page).content.decode()
    assert "Errors missed: perturbed text not scored lower than its original" in shown
    assert 'name="detection_failure"' in shown and 'value="0.2"' in shown
    saved = owner.post(page, {"detection_failure": "0.3", "D_min": "2"}, follow=True)
    assert "Thresholds saved" in saved.content.decode()
    assert verdict_thresholds(audit.study)["D_min"] == 2.0
    refused = owner.post(page, {"position_flip": "-1"})
    assert refused.status_code == 200 and "between 0 and 1" in refused.content.decode()
    other = Client()
    other.force_login(UserFactory(role="researcher"))
    assert other.get(page).status_code == 404
    assert other.post(page, {"detection_failure": "0.9"}).status_code == 404
    assert verdict_thresholds(audit.study)["detection_failure"] == 0.3
