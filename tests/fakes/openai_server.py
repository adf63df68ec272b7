"""A local OpenAI-compatible HTTP server for tests and benchmarks.

It speaks just enough HTTP/1.1 (keep-alive, Content-Length bodies) on an asyncio loop in a
background thread, bound to 127.0.0.1 on an ephemeral port, so thousands of concurrent calls
cost it little. It serves::

    POST /v1/chat/completions   chat.completion objects (usage, system_fingerprint, logprobs)
    POST /v1/completions        text_completion objects (legacy logprobs format)
    /v1/files, /v1/batches      the batch interface (``batches``: tests.fakes.batch_api)

Every response carries an ``x-request-id`` header. Behaviour is scriptable:

- ``reply``: a function of the request JSON returning the text (or a ``Reply`` with logprobs);
- ``latency``: seconds to wait before answering every request;
- ``enqueue(*faults)``: faults served to the next requests, one each, in order;
- ``add_rule(predicate, fault, times=None)``: a fault for requests matching a predicate.

Faults: ``Fault.rate_limit(retry_after)``, ``Fault.server_error()``, ``Fault.error(code)``,
``Fault.garbage_json()``, ``Fault.json_body(text)``, ``Fault.non_json()``, ``Fault.hang(seconds)``,
``Fault.slow(seconds)``, ``Fault.drip(seconds_per_byte)``, ``Fault.disconnect()``,
``Fault.reply(text)``.

It counts and records every request (thread-safe) and the peak number in flight.

    with FakeOpenAIServer(latency=0.1) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")
        ...
        assert server.request_count == 1

Run ``python -m tests.fakes.openai_server --latency 0.1`` to serve from a separate process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from tests.fakes.batch_api import FakeBatches

FaultKind = Literal[
    "status",
    "garbage_json",
    "json_body",
    "non_json",
    "hang",
    "slow",
    "drip",
    "disconnect",
    "reply",
]
_TOKEN = re.compile(r"\s*\S+")
_JSON = ("content-type", "application/json")
CONTROL_PREFIX = "/_fake/"  # GET /_fake/stats: counts, not recorded itself
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


@dataclass(frozen=True)
class Reply:
    """What the model "says". ``top_logprobs[i]`` are the alternatives at token i."""

    content: str
    finish_reason: str = "stop"
    top_logprobs: list[list[tuple[str, float]]] | None = None


ReplyFunction = Callable[[dict[str, Any]], "str | Reply"]


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    status: int = 500
    seconds: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()
    message: str = "fault injected by FakeOpenAIServer"
    text: str = ""

    @classmethod
    def rate_limit(cls, retry_after: str | float | None = "1") -> Fault:
        headers = () if retry_after is None else (("retry-after", str(retry_after)),)
        return cls("status", status=429, headers=headers, message="Rate limit reached")

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls("status", status=status, message="The server had an error")

    @classmethod
    def error(cls, code: int, message: str = "fault injected", **headers: str) -> Fault:
        """Any HTTP error status, e.g. ``Fault.error(400)``; headers as keywords."""
        return cls("status", status=code, headers=tuple(headers.items()), message=message)

    @classmethod
    def garbage_json(cls) -> Fault:
        """200, Content-Type application/json, but the body is not JSON."""
        return cls("garbage_json")

    @classmethod
    def json_body(cls, body: str) -> Fault:
        """200 with valid JSON that need not be a completion (``body`` is sent as it is)."""
        return cls("json_body", text=body)

    @classmethod
    def non_json(cls) -> Fault:
        """200 with an HTML page, as a misconfigured proxy would send."""
        return cls("non_json")

    @classmethod
    def hang(cls, seconds: float = 30.0) -> Fault:
        """Read the request, then say nothing for ``seconds`` and drop the connection."""
        return cls("hang", seconds=seconds)

    @classmethod
    def slow(cls, seconds: float) -> Fault:
        """A normal reply, ``seconds`` later than usual."""
        return cls("slow", seconds=seconds)

    @classmethod
    def drip(cls, seconds_per_byte: float = 0.5) -> Fault:
        """A normal reply sent one byte every ``seconds_per_byte`` (status line included)."""
        return cls("drip", seconds=seconds_per_byte)

    @classmethod
    def disconnect(cls) -> Fault:
        """Close the connection without any response."""
        return cls("disconnect")

    @classmethod
    def reply(cls, text: str) -> Fault:
        """A normal reply with this text instead of the reply function's."""
        return cls("reply", text=text)


@dataclass(frozen=True)
class RecordedRequest:
    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float

    @property
    def request_id(self) -> str:
        """The x-request-id the server answered this request with."""
        return f"req_fake_{self.index:06d}"

    @property
    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError:
            return None


@dataclass
class _Rule:
    predicate: Callable[[RecordedRequest], bool]
    fault: Fault
    times: int | None


def default_reply(request: dict[str, Any]) -> str:
    """An analyze-then-rate answer; the rating is 1-5, derived from the prompt's length."""
    prompt = _prompt_text(request)
    return f"Analysis: a plausible text.\nRating: {len(prompt) % 5 + 1}"


def _prompt_text(request: dict[str, Any]) -> str:
    if "messages" in request:
        return "\n".join(str(m.get("content") or "") for m in request["messages"])
    prompt = request.get("prompt", "")
    return prompt if isinstance(prompt, str) else "\n".join(map(str, prompt))


def _count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


@dataclass
class _Stats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[RecordedRequest] = field(default_factory=list)
    in_flight: int = 0
    max_in_flight: int = 0


class FakeOpenAIServer:
    def __init__(
        self,
        *,
        reply: ReplyFunction = default_reply,
        latency: float = 0.0,
        api_key: str | None = None,
        system_fingerprint: str = "fp_fake_0001",
        host: str = "127.0.0.1",
        port: int = 0,
        record_bodies: bool = True,
    ) -> None:
        self.reply = reply
        self.latency = latency
        self.api_key = api_key
        self.system_fingerprint = system_fingerprint
        self.record_bodies = record_bodies
        self._host = host
        self._port = port
        self._stats = _Stats()
        self._faults: deque[Fault] = deque()
        self._rules: list[_Rule] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._startup_error: BaseException | None = None
        self.batches = FakeBatches(answer=lambda body, n: self._chat_completion(body, None, n))

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        if self._thread is not None:
            raise RuntimeError("server already started")
        self._thread = threading.Thread(target=self._run, name="fake-openai-server", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._startup_error is not None:
            raise RuntimeError("fake server failed to start") from self._startup_error
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self._port}/v1"

    # -- scripting ---------------------------------------------------------------------------

    def enqueue(self, *faults: Fault) -> None:
        with self._stats.lock:
            self._faults.extend(faults)

    def add_rule(
        self,
        predicate: Callable[[RecordedRequest], bool],
        fault: Fault,
        times: int | None = None,
    ) -> None:
        with self._stats.lock:
            self._rules.append(_Rule(predicate, fault, times))

    def reset(self) -> None:
        """Forget recorded requests, queued faults and rules (not reply/latency)."""
        with self._stats.lock:
            self._stats.requests.clear()
            self._stats.max_in_flight = self._stats.in_flight
            self._faults.clear()
            self._rules.clear()

    # -- observations ------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._stats.lock:
            return list(self._stats.requests)

    @property
    def request_count(self) -> int:
        with self._stats.lock:
            return len(self._stats.requests)

    @property
    def in_flight(self) -> int:
        with self._stats.lock:
            return self._stats.in_flight

    @property
    def max_in_flight(self) -> int:
        with self._stats.lock:
            return self._stats.max_in_flight

    # -- the server loop ---------------------------------------------------------------------

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            server = loop.run_until_complete(
                asyncio.start_server(
                    self._serve_connection, self._host, self._port, backlog=2048, limit=2**22
                )
            )
        except BaseException as exc:  # surfaced by start()
            self._startup_error = exc
            self._ready.set()
            loop.close()
            return
        self._port = server.sockets[0].getsockname()[1]
        self._loop = loop
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            loop.run_until_complete(asyncio.gather(*self._tasks, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    break
                if request.path.startswith(CONTROL_PREFIX):
                    body = json.dumps(self.stats()).encode()
                    writer.write(self._head(200, [_JSON], body, "-") + body)
                    keep_open = True
                else:
                    keep_open = await self._answer(self._record(request), writer)
                if not keep_open or request.headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        body = await reader.readexactly(length) if length else b""
        return RecordedRequest(-1, method, path, headers, body, time.monotonic())

    def _record(self, request: RecordedRequest) -> RecordedRequest:
        """Number, store and count a request as in flight; returns it numbered."""
        with self._stats.lock:
            numbered = replace(request, index=len(self._stats.requests))
            stored = numbered if self.record_bodies else replace(numbered, body=b"")
            self._stats.requests.append(stored)
            self._stats.in_flight += 1
            self._stats.max_in_flight = max(self._stats.max_in_flight, self._stats.in_flight)
        return numbered

    def stats(self) -> dict[str, int]:
        with self._stats.lock:
            return {
                "request_count": len(self._stats.requests),
                "in_flight": self._stats.in_flight,
                "max_in_flight": self._stats.max_in_flight,
            }

    def _next_fault(self, request: RecordedRequest) -> Fault | None:
        with self._stats.lock:
            if self._faults:
                return self._faults.popleft()
            for rule in self._rules:
                if rule.times != 0 and rule.predicate(request):
                    if rule.times is not None:
                        rule.times -= 1
                    return rule.fault
        return None

    async def _answer(self, request: RecordedRequest, writer: asyncio.StreamWriter) -> bool:
        """Write one response; False when the connection must be closed."""
        try:
            fault = self._next_fault(request)
            if fault is not None and fault.kind == "disconnect":
                return False
            if fault is not None and fault.kind == "hang":
                await asyncio.sleep(fault.seconds)
                return False
            dripping = fault is not None and fault.kind == "drip"
            delay = self.latency + (fault.seconds if fault is not None and not dripping else 0.0)
            if delay > 0:
                await asyncio.sleep(delay)
            status, headers, body = self._respond(request, fault)
            data = self._head(status, headers, body, request.request_id) + body
            if dripping:
                assert fault is not None
                for offset in range(len(data)):
                    writer.write(data[offset : offset + 1])
                    await writer.drain()
                    await asyncio.sleep(fault.seconds)
                return True
            writer.write(data)
            await writer.drain()
            return True
        finally:
            with self._stats.lock:
                self._stats.in_flight -= 1

    def _head(
        self, status: int, headers: list[tuple[str, str]], body: bytes, request_id: str
    ) -> bytes:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
        lines += [f"{name}: {value}" for name, value in headers]
        lines += [
            f"content-length: {len(body)}",
            f"x-request-id: {request_id}",
            "connection: keep-alive",
        ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _respond(
        self, request: RecordedRequest, fault: Fault | None
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        json_type = _JSON
        if fault is not None and fault.kind == "status":
            return fault.status, [json_type, *fault.headers], _error_body(fault.message, fault)
        if fault is not None and fault.kind == "garbage_json":
            return 200, [json_type], b'{"id": "chatcmpl-broken", "choices": [{"mess'
        if fault is not None and fault.kind == "json_body":
            return 200, [json_type], fault.text.encode()
        if fault is not None and fault.kind == "non_json":
            page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
            return 200, [("content-type", "text/html")], page
        authorization = request.headers.get("authorization")
        if self.api_key is not None and authorization != f"Bearer {self.api_key}":
            fault = Fault.error(401, "Incorrect API key provided")
            return 401, [json_type], _error_body(fault.message, fault)
        if re.search(r"/v1/(files|batches)", request.path):
            status, answer = self.batches.handle(
                request.method, request.path, request.headers, request.body
            )
            if isinstance(answer, bytes):
                return status, [("content-type", "application/octet-stream")], answer
            return status, [json_type], json.dumps(answer).encode()
        payload = request.json
        if request.method != "POST" or not isinstance(payload, dict):
            return 400, [json_type], _error_body("expected a JSON POST", Fault.error(400))
        override = fault.text if fault is not None and fault.kind == "reply" else None
        if request.path.endswith("/chat/completions"):
            body = self._chat_completion(payload, override, request.index)
        elif request.path.endswith("/completions"):
            body = self._text_completion(payload, override, request.index)
        else:
            return 404, [json_type], _error_body(f"no route {request.path}", Fault.error(404))
        return 200, [json_type], json.dumps(body).encode()

    def _make_reply(self, payload: dict[str, Any], override: str | None) -> Reply:
        answer = override if override is not None else self.reply(payload)
        reply = answer if isinstance(answer, Reply) else Reply(str(answer))
        limit = payload.get("max_completion_tokens") or payload.get("max_tokens")
        tokens = _TOKEN.findall(reply.content)
        if isinstance(limit, int) and len(tokens) > limit:
            return Reply("".join(tokens[:limit]), "length", reply.top_logprobs)
        return reply

    def _envelope(self, payload: dict[str, Any], kind: str, index: int) -> dict[str, Any]:
        prefix = "chatcmpl" if kind == "chat.completion" else "cmpl"
        return {
            "id": f"{prefix}-fake-{index:06d}",
            "object": kind,
            "created": int(time.time()),
            "model": payload.get("model", "fake-model"),
            "system_fingerprint": self.system_fingerprint,
        }

    def _chat_completion(
        self, payload: dict[str, Any], override: str | None, index: int
    ) -> dict[str, Any]:
        choices: list[dict[str, Any]] = []
        for choice in range(int(payload.get("n") or 1)):
            reply = self._make_reply(payload, override)
            logprobs = None
            if payload.get("logprobs"):
                top_n = int(payload.get("top_logprobs") or 0)
                logprobs = {"content": _chat_logprobs(reply, top_n), "refusal": None}
            choices.append(
                {
                    "index": choice,
                    "message": {"role": "assistant", "content": reply.content, "refusal": None},
                    "logprobs": logprobs,
                    "finish_reason": reply.finish_reason,
                }
            )
        body = self._envelope(payload, "chat.completion", index)
        body["choices"] = choices
        body["usage"] = _usage(_prompt_text(payload), [c["message"]["content"] for c in choices])
        return body

    def _text_completion(
        self, payload: dict[str, Any], override: str | None, index: int
    ) -> dict[str, Any]:
        reply = self._make_reply(payload, override)
        logprobs = None
        if payload.get("logprobs") is not None:
            logprobs = _legacy_logprobs(reply, int(payload["logprobs"]))
        body = self._envelope(payload, "text_completion", index)
        body["choices"] = [
            {
                "index": 0,
                "text": reply.content,
                "logprobs": logprobs,
                "finish_reason": reply.finish_reason,
            }
        ]
        body["usage"] = _usage(_prompt_text(payload), [reply.content])
        return body


def _error_body(message: str, fault: Fault) -> bytes:
    kinds = {429: "rate_limit_exceeded", 401: "invalid_api_key", 404: "not_found"}
    error = {
        "message": message,
        "type": "server_error" if fault.status >= 500 else "invalid_request_error",
        "param": None,
        "code": kinds.get(fault.status),
    }
    return json.dumps({"error": error}).encode()


def _usage(prompt: str, completions: list[str]) -> dict[str, int]:
    prompt_tokens = _count_tokens(prompt)
    completion_tokens = sum(_count_tokens(c) for c in completions)
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _alternatives(reply: Reply, position: int, token: str, top_n: int) -> list[tuple[str, float]]:
    """Scripted alternatives, else the token itself (logprob -0.1) and made-up lower ones."""
    if reply.top_logprobs is not None and position < len(reply.top_logprobs):
        return reply.top_logprobs[position][: max(top_n, 1)]
    alternatives = [(token, -0.1)]
    stripped = token.strip()
    if stripped.isdigit():
        near = [str(int(stripped) + d) for d in (-1, 1, -2, 2)]
        alternatives += [(n, -2.5 - i) for i, n in enumerate(near) if int(n) >= 0]
    alternatives += [(f"<alt{i}>", -8.0 - i) for i in range(20)]
    return alternatives[: max(top_n, 1)]


def _chat_logprobs(reply: Reply, top_n: int) -> list[dict[str, Any]]:
    content = []
    for position, token in enumerate(_TOKEN.findall(reply.content)):
        alternatives = _alternatives(reply, position, token, top_n)
        chosen = next((lp for t, lp in alternatives if t == token), alternatives[0][1])
        content.append(
            {
                "token": token,
                "logprob": chosen,
                "bytes": list(token.encode()),
                "top_logprobs": [
                    {"token": t, "logprob": lp, "bytes": list(t.encode())}
                    for t, lp in alternatives[:top_n]
                ],
            }
        )
    return content


def _legacy_logprobs(reply: Reply, top_n: int) -> dict[str, Any]:
    tokens = _TOKEN.findall(reply.content)
    offsets, offset = [], 0
    for token in tokens:
        offsets.append(offset)
        offset += len(token)
    tops = [_alternatives(reply, i, t, top_n) for i, t in enumerate(tokens)]
    return {
        "tokens": tokens,
        "token_logprobs": [
            next((lp for t, lp in alt if t == tok), alt[0][1])
            for tok, alt in zip(tokens, tops, strict=True)
        ],
        "top_logprobs": [dict(alt[:top_n]) for alt in tops] if top_n else None,
        "text_offset": offsets,
    }


@contextlib.contextmanager
def fake_openai_server(**options: Any) -> Iterator[FakeOpenAIServer]:
    """``with fake_openai_server(latency=0.1) as server:`` — same as the class, as a function."""
    with FakeOpenAIServer(**options) as server:
        yield server


@dataclass(frozen=True)
class SpawnedFakeServer:
    """A fake server in a child process (its own interpreter, so no shared GIL)."""

    base_url: str
    process: subprocess.Popen[str]

    def stats(self) -> dict[str, int]:
        with urllib.request.urlopen(self.base_url.rsplit("/v1", 1)[0] + "/_fake/stats") as reply:
            data: dict[str, int] = json.loads(reply.read())
            return data


@contextlib.contextmanager
def spawn_fake_server(*, latency: float = 0.0) -> Iterator[SpawnedFakeServer]:
    """Serve default replies from a separate process, e.g. for throughput benchmarks."""
    command = [sys.executable, "-m", "tests.fakes.openai_server", "--latency", str(latency)]
    root = str(Path(__file__).resolve().parents[2])
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        if not base_url.startswith("http://"):
            raise RuntimeError("fake server process did not start")
        yield SpawnedFakeServer(base_url, process)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI-compatible API.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    arguments = parser.parse_args()
    with FakeOpenAIServer(
        latency=arguments.latency, port=arguments.port, record_bodies=False
    ) as server:
        print(server.base_url, flush=True)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
