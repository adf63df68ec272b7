"""What the browser tests check on every page they photograph."""

from __future__ import annotations

from playwright.sync_api import Page


def overflow(page: Page) -> int:
    """How many pixels the page is wider than the window (0: it fits; a wide table scrolls in
    its own box instead)."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )
