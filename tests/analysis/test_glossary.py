"""Every term of the papers a page uses has a gloss that links to a heading that exists."""

import pytest
from django.test import Client

from apps.analysis.docs_views import pages, rendered
from apps.analysis.glossary import TERMS, glossed


@pytest.mark.parametrize("term", sorted(TERMS))
def test_each_term_links_to_a_heading_that_exists(term):
    page, anchor = TERMS[term].href.removeprefix("/docs/").split("/#")
    assert page in pages()
    assert f'id="{anchor}"' in rendered(page)[1]


def test_terms_are_linked_whole_and_the_rest_is_escaped():
    html = str(glossed("D_min and D <b>, DHP; R+ then R− (stored as R-)"))
    assert html.count('class="term"') == 5  # D, DHP, R+, R−, R- (not the D of D_min)
    assert "&lt;b&gt;" in html and 'title="Discernment: log base 0.05' in html


@pytest.mark.django_db
def test_docs_pages_are_served_with_links_between_them():
    response = Client().get("/docs/cards/")
    assert response.status_code == 200
    assert b'href="/docs/audit/' in response.content  # docs/audit.md became a page link
    assert Client().get("/docs/nothing-here/").status_code == 404
