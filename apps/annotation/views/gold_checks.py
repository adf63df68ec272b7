"""The gold validation page: one adversarial text, labelled good (1) or not good (2) by
keyboard, saved at once. Next, back, submit and skip are the shared work pages."""

from apps.annotation.forms import GoldCheckForm
from apps.annotation.services import GOLD_CHECK
from apps.annotation.views.work import WorkPage

PAGE = WorkPage(
    work=GOLD_CHECK,
    template="annotation/gold_check.html",
    form=GoldCheckForm,
    prefix="gold-check",
    unit="<int:perturbation_pk>/",
    submit="label",
)
