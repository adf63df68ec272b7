"""pytest fixtures for the fake OpenAI-compatible server.

Not a conftest: import what you need, e.g. in ``tests/conftest.py``::

    from tests.fakes.fixtures import fake_openai_server  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def fake_openai_server() -> Iterator[FakeOpenAIServer]:
    """A fresh server per test: no latency, default replies, nothing queued."""
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def fake_openai_base_url(fake_openai_server: FakeOpenAIServer) -> str:
    """``http://127.0.0.1:<port>/v1`` of ``fake_openai_server``."""
    return fake_openai_server.base_url
