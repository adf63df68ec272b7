"""`{% work_buttons study role %}`: a button for each type of work the role does in the study
(the study page's, for annotators and experts)."""

from django import template
from django.urls import reverse

from apps.annotation import urls  # noqa: F401  (the work pages register with their routes)
from apps.annotation.views.work import work_pages

register = template.Library()


@register.inclusion_tag("annotation/_work_buttons.html")
def work_buttons(study, role: str | None) -> dict:
    buttons = [
        (page.work.action, reverse(page.start, args=[study.pk])) for page in work_pages(study, role)
    ]
    return {"buttons": buttons}
