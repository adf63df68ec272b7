"""What the browser tests check on every page they photograph."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.factories import PASSWORD


def overflow(page: Page) -> int:
    """How many pixels the page is wider than the window (0: it fits; a wide table scrolls in
    its own box instead)."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )


def log_in(page: Page, base: str, username: str, password: str = PASSWORD) -> None:
    """Log in through the login page, as a person does."""
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


def press(page: Page, key: str) -> None:
    """A key, once the page has settled after showing new work."""
    page.wait_for_selector('body[data-settled="1"]', state="attached")
    page.keyboard.press(key)
