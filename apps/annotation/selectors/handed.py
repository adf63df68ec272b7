"""What the hand-out of pooled work reads of the unit it hands out, as each kind declares it
(services/leases.py, `api_item` and `page_item`; apps/handout_sql.py joins them to the
hand-out's statement): the API's item, and the page's. The statements are this package's
(selectors/shown.py, selectors/work.py)."""

from __future__ import annotations

from typing import Any

from apps.annotation.models import Study
from apps.annotation.selectors import shown
from apps.annotation.selectors.work import (
    assessment_item,
    gold_check_page_item,
    vetting_brief_parts,
    vetting_page_item,
    vetting_page_sql,
)
from apps.handout_sql import Page, Shown


def _vetting_shown() -> tuple[str, str]:
    select, tables = vetting_brief_parts()
    return select, f"{tables} WHERE p.id = got.perturbation_id"


def _vetting_page(study: Study, person, row: Any) -> Any:
    return vetting_page_item(study, person, row, held=True)


def _assessment_page(study: Study, person, row: Any) -> Any:
    # The row starts with the unit's id (`shown.assessment_parts`).
    return assessment_item(study=study, annotator=person, unit_id=row[0], held=True, shown_row=row)


def _gold_check_page(study: Study, person, row: Any) -> Any:
    return gold_check_page_item(study, person, row, held=True)


VETTING_SHOWN = Shown(_vetting_shown)
VETTING_PAGE = Page(vetting_page_sql, _vetting_page)
ASSESSMENT_SHOWN = Shown(shown.assessment_shown_sql)
ASSESSMENT_PAGE = Page(shown.assessment_item_sql, _assessment_page)
GOLD_CHECK_SHOWN = Shown(shown.gold_check_shown_sql)
GOLD_CHECK_PAGE = Page(shown.gold_check_item_sql, _gold_check_page)
