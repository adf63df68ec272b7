"""No request into the server's own network: a base URL that is, or resolves to, an inside
address is refused when a judge is saved and again when a worker connects, with a clear
error, and no connection is opened (apps/endpoints/egress.py, docs/endpoints.md)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rest_framework.authtoken.models import Token

from apps.endpoints import client as llm_client
from apps.endpoints.client import EndpointConfig, SamplingParams, close_clients, complete
from apps.endpoints.egress import EgressPolicy
from apps.endpoints.limiter import configure_limits, limits_reset
from apps.endpoints.models import Endpoint
from apps.endpoints.retry import RetryPolicy
from apps.judging.models import Judge, ParseStatus
from tests.fakes.fixtures import fake_openai_server as fake_openai_server  # the shared fixture
from tests.judging.conftest import criteria as criteria  # the judging tests' fixtures
from tests.judging.conftest import demo as demo
from tests.judging.conftest import llm_judge, work
from tests.judging.test_runs import one_text

INSIDE = [
    ("http://169.254.169.254/latest/meta-data/", "metadata"),
    ("http://metadata.google.internal/computeMetadata/v1", "metadata"),
    ("http://[fd00:ec2::254]/v1", "metadata"),
    ("http://127.0.0.1:6379/", "loopback"),
    ("http://127.0.0.1:5432/", "loopback"),
    ("http://0x7f000001/v1", "loopback"),
    ("http://2130706433/v1", "loopback"),
    ("http://localhost:8000/v1", "loopback"),
    ("http://10.0.0.8/v1", "private"),
    ("http://[::ffff:192.168.1.1]/v1", "private"),
    ("http://224.0.0.1/v1", "multicast"),
]


#: The loopback and metadata addresses in the spellings an HTTP client folds back to them:
#: ideographic, fullwidth and halfwidth full stops, enclosed letters.
UNICODE_SPELLINGS = [
    ("127。0。0。1", "loopback"),
    ("127．0．0．1", "loopback"),
    ("127｡0｡0｡1", "loopback"),
    ("169。254。169。254", "metadata"),
    ("ⓛⓞⓒⓐⓛⓗⓞⓢⓣ", "loopback"),
]
#: Hosts no client reads the same way: refused with a reason, never a 500.
UNREADABLE = ["a..b", "exa%6dple.com", "xn--a.com", "ex ample.com"]


@pytest.fixture(autouse=True, scope="module")
def local_limits() -> Iterator[None]:
    configure_limits(None)
    yield
    limits_reset()


@pytest.fixture
def closed(settings) -> None:
    """The production default: no inside address allowed."""
    settings.DISCERN_EGRESS_ALLOW = []


class Listener:
    """A socket listening on loopback that counts the connections made to it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stopping = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stopping = True
        self.thread.join()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    listening = Listener()
    yield listening
    listening.close()


def call(base_url: str):
    endpoint = EndpointConfig(
        base_url=base_url, model="m", timeout_s=2.0, retry=RetryPolicy(max_attempts=3)
    )

    async def main():
        try:
            return await complete(endpoint, "Rate this.", SamplingParams(max_tokens=8))
        finally:
            await close_clients()

    return asyncio.run(main())


# --- when a judge is saved ------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(("url", "kind"), INSIDE)
def test_an_inside_address_is_refused_when_a_judge_is_saved(closed, demo, api_client, url, kind):
    token = Token.objects.create(user=demo.owner)
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    body = {"name": "inside", "base_url": url, "model": "m"}
    response = api_client.post("/api/v1/judges/", body, format="json")
    assert response.status_code == 400
    error = response.json()["base_url"][0]
    assert "refused by the egress policy" in error and f"a {kind} address" in error
    assert "an administrator may allow it" in error and "DISCERN_EGRESS_ALLOW" in error
    assert not Judge.objects.filter(name="inside").exists()


@pytest.mark.django_db
@pytest.mark.parametrize(("host", "kind"), UNICODE_SPELLINGS)
def test_a_unicode_spelling_of_an_inside_address_is_refused_when_saved_and_tested(
    closed, demo, api_client, listener, host, kind
):
    api_client.force_authenticate(demo.owner)
    body = {"name": "spelt", "base_url": f"http://{host}:{listener.port}/v1", "model": "m"}
    saved = api_client.post("/api/v1/judges/", body, format="json")
    assert saved.status_code == 400, saved.json()
    assert f"a {kind} address" in saved.json()["base_url"][0]
    tested = api_client.post("/api/v1/judges/test-connection/", body, format="json")
    assert tested.status_code == 400 and f"a {kind} address" in tested.json()["base_url"][0]
    assert not Judge.objects.filter(name="spelt").exists() and listener.accepted == 0


@pytest.mark.django_db
@pytest.mark.parametrize("host", UNREADABLE)
def test_a_host_no_client_reads_the_same_way_is_refused_with_the_reason(demo, api_client, host):
    api_client.force_authenticate(demo.owner)
    body = {"name": "odd", "base_url": f"http://{host}/v1", "model": "m"}
    for path in ("/api/v1/judges/", "/api/v1/judges/test-connection/"):
        answer = api_client.post(path, body, format="json")
        assert answer.status_code == 400, answer.content
        assert "cannot be read as a name" in answer.json()["base_url"][0]
    assert not Judge.objects.filter(name="odd").exists()


@pytest.mark.django_db
def test_an_allowed_host_is_saved_as_the_clients_read_it(settings, demo, api_client):
    """Where loopback is allowed, a Unicode spelling of it is kept in its plain form, the one
    the judge list shows and every check reads."""
    settings.DISCERN_EGRESS_ALLOW = ["loopback"]
    api_client.force_authenticate(demo.owner)
    body = {"name": "local", "base_url": "http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ:8080/v1", "model": "m"}
    assert api_client.post("/api/v1/judges/", body, format="json").status_code == 201
    assert Endpoint.objects.get(judges__name="local").base_url == "http://localhost:8080/v1"


@pytest.mark.django_db
def test_the_judge_page_says_why_an_address_is_refused(closed, demo, client):
    client.force_login(demo.owner)
    page = client.post(
        "/judging/judges/new/",
        {"name": "inside", "kind": "llm", "base_url": "http://127.0.0.1:6379/", "model": "m"},
    )
    assert page.status_code == 200
    assert "127.0.0.1 is a loopback address" in page.content.decode()
    assert not Judge.objects.filter(name="inside").exists()


@pytest.mark.django_db
def test_credentials_in_an_address_are_refused(demo, api_client):
    api_client.force_authenticate(demo.owner)
    body = {"name": "creds", "base_url": "https://user:pass@api.example.com/v1", "model": "m"}
    response = api_client.post("/api/v1/judges/", body, format="json")
    assert response.status_code == 400
    assert "no user name or password in the address" in response.json()["base_url"][0]


@pytest.mark.django_db
def test_an_allowed_kind_passes_and_metadata_stays_refused(settings, demo, api_client):
    settings.DISCERN_EGRESS_ALLOW = ["loopback", "link-local"]
    api_client.force_authenticate(demo.owner)
    local = {"name": "local", "base_url": "http://127.0.0.1:8080/v1", "model": "m"}
    assert api_client.post("/api/v1/judges/", local, format="json").status_code == 201
    cloud = {"name": "cloud", "base_url": "http://169.254.169.254/v1", "model": "m"}
    response = api_client.post("/api/v1/judges/", cloud, format="json")
    assert response.status_code == 400 and "metadata address" in response.json()["base_url"][0]
    settings.DISCERN_EGRESS_ALLOW = ["169.254.169.254/32"]  # only its own address lets it by
    assert api_client.post("/api/v1/judges/", cloud, format="json").status_code == 201


def test_a_policy_entry_that_is_neither_a_kind_nor_a_network_is_an_error() -> None:
    with pytest.raises(ValueError, match="'intranet' is neither a kind"):
        EgressPolicy.parse(["loopback", "intranet"])
    policy = EgressPolicy.parse(["loopback", "10.1.2.0/24", ""])
    assert policy.url_problem("http://10.1.2.3/v1") is None
    assert "private" in (policy.url_problem("http://10.1.3.3/v1") or "")
    assert policy.url_problem("https://api.openai.com/v1") is None


# --- when a worker connects -----------------------------------------------------------------


def test_the_client_opens_no_connection_to_a_refused_address(closed, listener) -> None:
    outcome = call(f"http://127.0.0.1:{listener.port}/v1")
    assert not outcome.ok and outcome.error_kind == "config" and outcome.attempts == 0
    assert "127.0.0.1 is a loopback address" in (outcome.error_message or "")
    assert listener.accepted == 0


@pytest.mark.parametrize(("host", "kind"), UNICODE_SPELLINGS)
def test_a_unicode_spelling_gets_no_connection(closed, listener, host, kind) -> None:
    """Past the save check (an endpoint saved before it knew these spellings): the client
    refuses before connecting, and the listener on loopback sees nothing."""
    outcome = call(f"http://{host}:{listener.port}/v1")
    assert not outcome.ok and outcome.error_kind == "config" and outcome.attempts == 0
    assert f"a {kind} address" in (outcome.error_message or "")
    assert listener.accepted == 0


def test_each_request_is_checked_where_the_client_connects(closed, listener) -> None:
    """The guards themselves, with the check before the call left out: an IP literal, which
    aiohttp connects to without asking its resolver, is refused by the session's middleware,
    for model calls and for the SDK client of the batch interface alike."""
    base_url = f"http://127。0。0。1:{listener.port}/v1"

    async def main():
        errors = []
        client = llm_client.client_for(EndpointConfig(base_url=base_url, model="m"), "k")
        for send in (
            lambda: client.chat.completions.create(model="m", messages=[]),
            lambda: llm_client._session().post(f"{base_url}/chat/completions", json={}),
        ):
            try:
                await send()
            except Exception as error:
                errors.append(error)
        await close_clients()
        return errors

    errors = asyncio.run(main())
    assert len(errors) == 2
    for error in errors:
        assert "refused by the egress policy" in repr(error.__cause__ or error)
    assert listener.accepted == 0


def inside_name() -> str:
    """A host name (not an address) that resolves to an inside address on this machine."""
    name = socket.gethostname()
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(name, 80, type=socket.SOCK_STREAM)}
    except OSError:
        pytest.skip(f"this machine's name {name!r} does not resolve")
    policy = EgressPolicy()
    if not all(policy.url_problem(f"http://{a}/") for a in addresses if ":" not in a):
        pytest.skip(f"{name} resolves to a public address here")
    return name


def test_a_name_that_resolves_inside_is_refused_at_connection(closed, listener) -> None:
    """The URL names no address: the check is on what the name resolves to, when connecting."""
    name = inside_name()
    assert EgressPolicy().url_problem(f"http://{name}:{listener.port}/v1") is None
    outcome = call(f"http://{name}:{listener.port}/v1")
    assert not outcome.ok and outcome.error_kind == "config"
    assert f"{name} resolves to" in (outcome.error_message or "")
    assert outcome.attempts == 1  # refused at once, not retried
    assert listener.accepted == 0


class NotAModelServer(BaseHTTPRequestHandler):
    """A service inside (a search engine, say) answering in JSON of its own."""

    def do_POST(self) -> None:
        body = json.dumps({"cluster_name": "internal-secret-cluster", "status": 404}).encode()
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_the_reply_of_a_server_that_is_not_a_model_server_is_not_echoed(settings) -> None:
    settings.DISCERN_EGRESS_ALLOW = ["loopback"]
    server = ThreadingHTTPServer(("127.0.0.1", 0), NotAModelServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        outcome = call(f"http://127.0.0.1:{server.server_address[1]}/v1")
    finally:
        server.shutdown()
        server.server_close()
    assert not outcome.ok and outcome.status_code == 404
    assert "internal-secret-cluster" not in (outcome.error_message or "")
    assert "not an OpenAI-compatible error" in (outcome.error_message or "")


# --- the worker -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_judge_saved_before_the_policy_closed_sends_nothing(
    settings, demo, criteria, listener, fake_openai_server
) -> None:
    """A judge saved while loopback was allowed, run after it no longer is: its calls fail
    with the reason, the run ends, and the address gets no connection."""
    item = demo.datasets.get().items.order_by("id").first()
    settings.DISCERN_EGRESS_ALLOW = ["loopback"]
    judge = llm_judge(fake_openai_server)
    settings.DISCERN_EGRESS_ALLOW = []
    Endpoint.objects.filter(judges=judge).update(base_url=f"http://127.0.0.1:{listener.port}/v1")
    judge.refresh_from_db()
    run = work(one_text(demo, judge, "fbi-single-vanilla", criteria("overall"), item))
    call = run.calls.get()
    assert call.parse_status == ParseStatus.ERROR
    assert "refused by the egress policy" in call.error
    assert listener.accepted == 0 and fake_openai_server.request_count == 0
