"""The user documentation (docs/*.md) served as pages at /docs/<page>/, so the glosses and
"what does this mean" links of the reports lead somewhere inside the product."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.utils.text import slugify
from django.views.decorators.http import require_GET
from markdown_it import MarkdownIt

from apps.accounts.permissions import AllowAny, allow

DOCS = Path(settings.BASE_DIR) / "docs"
_LINK = re.compile(r'href="(?!https?:|/|#)([\w-]+)\.md(#[\w-]*)?"')


def _heading_ids(md: MarkdownIt) -> None:
    """Each heading gets the id its text slugifies to: "## 8. Agreement" → #8-agreement."""

    def rule(state) -> None:
        for i, token in enumerate(state.tokens):
            if token.type == "heading_open":
                token.attrSet("id", slugify(state.tokens[i + 1].content))

    md.core.ruler.push("heading_ids", rule)


@cache
def rendered(page: str) -> tuple[str, str]:
    """(title, HTML) of docs/<page>.md; links to other docs pages point at their pages."""
    path = DOCS / f"{page}.md"
    text = path.read_text(encoding="utf-8")
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    _heading_ids(md)
    html = _LINK.sub(lambda m: f'href="/docs/{m.group(1)}/{m.group(2) or ""}"', md.render(text))
    title = next((line[2:] for line in text.splitlines() if line.startswith("# ")), page)
    return title, html


def pages() -> list[str]:
    return sorted(p.stem for p in DOCS.glob("*.md"))


@allow(AllowAny)
@require_GET
def docs_page(request: HttpRequest, page: str) -> HttpResponse:
    if page not in pages():
        raise Http404("no such page")
    title, html = rendered(page)
    context = {
        "title": title,
        "html": mark_safe(html),
        "pages": pages(),
    }  # rendered with raw HTML off
    return render(request, "analysis/docs_page.html", context)
