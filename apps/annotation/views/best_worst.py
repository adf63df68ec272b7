"""The best-worst page: a tuple of texts under one criterion; digits pick the best, then the
worst, and Enter saves. Next, back, submit and skip are the shared work pages."""

from apps.annotation.forms import BestWorstForm
from apps.annotation.services import BEST_WORST
from apps.annotation.views.work import WorkPage

PAGE = WorkPage(
    work=BEST_WORST,
    template="annotation/best_worst.html",
    form=BestWorstForm,
    prefix="best-worst",
    unit="<int:unit_pk>/",
    submit="choice",
)
