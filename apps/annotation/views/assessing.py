"""The direct assessment page: one text and one criterion, a rating on its scale by keyboard
(digits choose, Enter saves). Next, back, submit and skip are the shared work pages."""

from apps.annotation.forms import RatingForm
from apps.annotation.services import ASSESSMENT
from apps.annotation.views.work import WorkPage

PAGE = WorkPage(
    work=ASSESSMENT,
    template="annotation/assess.html",
    form=RatingForm,
    prefix="assess",
    unit="<int:unit_pk>/",
    submit="rating",
)
