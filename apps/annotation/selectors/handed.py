"""What the hand-out of pooled work reads of the unit it hands out, as each kind declares it
(services/leases.py, `api_item` and `page_item`; apps/handout_sql.py joins them to the
hand-out's statement): the API's item, and the page's. Each is a statement of this package
(selectors/shown.py, selectors/work.py) that also runs alone, of one unit given as a
parameter."""

from __future__ import annotations

from typing import Any

from apps.annotation.models import Study
from apps.annotation.selectors import shown
from apps.annotation.selectors.work import (
    assessment_item,
    gold_check_page_item,
    vetting_brief_sql,
    vetting_page_item,
    vetting_page_sql,
)
from apps.handout_sql import Page, Shown


def _vetting_page(study: Study, person, row: Any) -> Any:
    return vetting_page_item(study, person, row, held=True)


def _assessment_page(study: Study, person, row: Any) -> Any:
    # The row starts with the unit's id (`shown.assessment_parts`).
    return assessment_item(study=study, annotator=person, unit_id=row[0], held=True, shown_row=row)


def _gold_check_page(study: Study, person, row: Any) -> Any:
    return gold_check_page_item(study, person, row, held=True)


VETTING_SHOWN = Shown(vetting_brief_sql)
VETTING_PAGE = Page(vetting_page_sql, _vetting_page)
# The API reads a text to rate, or an adversarial text, from the page's statement.
ASSESSMENT_SHOWN = Shown(shown.assessment_item_sql)
ASSESSMENT_PAGE = Page(shown.assessment_item_sql, _assessment_page)
GOLD_CHECK_SHOWN = Shown(shown.gold_check_item_sql)
GOLD_CHECK_PAGE = Page(shown.gold_check_item_sql, _gold_check_page)
