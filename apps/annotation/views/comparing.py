"""The comparison page (methods §2): source, two texts in recorded random order, one criterion,
keys A-D. Next, back, submit and skip are the shared work pages (views/work.py)."""

from apps.annotation.forms import ChoiceForm
from apps.annotation.services import COMPARISON
from apps.annotation.views.work import WorkPage

PAGE = WorkPage(
    work=COMPARISON,
    template="annotation/compare.html",
    form=ChoiceForm,
    prefix="compare",
    unit="<int:perturbation_pk>/<int:criterion_pk>/",
    submit="choice",
)
