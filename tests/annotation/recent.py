"""The "Your last ..." list of a work page, loaded when the person opens it (views/work.py)."""

import re

RECENT = re.compile(r'<details class="recent" hx-get="([^"]+)" hx-trigger="toggle once"')
LINK = re.compile(r'<a href="([^"]+)" hx-get="([^"]+)"')


def recent_list(client, html: str) -> str:
    """What the page's list shows once opened (the test fails if the page offers none)."""
    found = RECENT.search(html)
    assert found, "the page offers no list of the last answers"
    response = client.get(found.group(1), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    return response.content.decode()


def recent_links(client, html: str) -> list[str]:
    """The links of the page's list, in order (each with the same hx-get)."""
    pairs = LINK.findall(recent_list(client, html))
    assert all(href == get for href, get in pairs)
    return [href for href, _ in pairs]
