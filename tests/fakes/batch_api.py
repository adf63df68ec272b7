"""The batch interface of the fake OpenAI-compatible server (``FakeOpenAIServer.batches``)::

    POST /v1/files                  upload a JSONL file (multipart, purpose "batch")
    GET  /v1/files/{id}/content     a file's bytes (input, output or error file)
    POST /v1/batches                start a batch of an uploaded file
    GET  /v1/batches/{id}           the batch; an unheld batch is answered at its first look
    GET  /v1/batches                every batch, newest first (``metadata`` included)

Scripting: ``hold`` keeps batches in progress until ``release()``; ``expire_after = n``
makes the next batches expire once ``n`` of their lines are answered (the rest unanswered,
as a provider's 24-hour window that runs out); ``line_error(body)`` may return an error
message for a line (an error-file line, HTTP 400). Every line is answered by the server's
own ``reply`` function, exactly as the live ``/chat/completions`` would answer it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from typing import Any

Answer = Callable[[dict[str, Any], int], dict[str, Any]]  # (body, index) -> chat completion


@dataclass
class FakeBatches:
    answer: Answer
    hold: bool = False
    expire_after: int | None = None
    line_error: Callable[[dict[str, Any]], str | None] | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines_answered: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def created(self) -> int:
        """Batches submitted in all."""
        with self.lock:
            return len(self.batches)

    def release(self) -> None:
        with self.lock:
            self.hold = False

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes):
        """(status, JSON or bytes) for a request under /files or /batches."""
        parts = [p for p in path.split("?")[0].split("/") if p][1:]  # without "v1"
        with self.lock:
            if method == "POST" and parts == ["files"]:
                return self._upload(headers, body)
            if method == "GET" and len(parts) == 3 and parts[0] == "files":
                content = self.files.get(parts[1])
                return (200, content) if content is not None else _missing(path)
            if method == "POST" and parts == ["batches"]:
                return self._create(json.loads(body or b"{}"))
            if method == "GET" and parts == ["batches"]:
                listed = sorted(self.batches.values(), key=lambda b: b["created_at"], reverse=True)
                data = [self._look(b["id"]) for b in listed]
                return 200, {"object": "list", "data": data, "has_more": False}
            if method == "GET" and len(parts) == 2 and parts[0] == "batches":
                return (200, self._look(parts[1])) if parts[1] in self.batches else _missing(path)
        return _missing(path)

    def _upload(self, headers: dict[str, str], body: bytes):
        head = f"Content-Type: {headers.get('content-type', '')}\r\n\r\n".encode()
        message = BytesParser().parsebytes(head + body)
        content = b""
        for part in message.walk():
            if part.get_param("name", header="content-disposition") == "file":
                content = part.get_payload(decode=True) or b""
        file_id = f"file-fake-{len(self.files):04d}"
        self.files[file_id] = content
        return 200, _file(file_id, len(content))

    def _create(self, payload: dict[str, Any]):
        if payload.get("input_file_id") not in self.files:
            return 400, {"error": {"message": "no such input file", "type": "invalid_request"}}
        batch_id = f"batch_fake_{len(self.batches):04d}"
        self.batches[batch_id] = {
            "id": batch_id,
            "object": "batch",
            "endpoint": payload.get("endpoint"),
            "input_file_id": payload["input_file_id"],
            "completion_window": payload.get("completion_window", "24h"),
            "status": "validating",
            "created_at": int(time.time() * 1000) + len(self.batches),
            "metadata": payload.get("metadata") or {},
            "output_file_id": None,
            "error_file_id": None,
            "errors": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "expire_after": self.expire_after,
        }
        return 200, self._public(self.batches[batch_id])

    def _look(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        if batch["status"] == "validating":
            lines = self.files[batch["input_file_id"]].decode().splitlines()
            batch["request_counts"]["total"] = len([line for line in lines if line.strip()])
            batch["status"] = "in_progress"
        elif batch["status"] == "in_progress" and not self.hold:
            self._work(batch)
        return self._public(batch)

    def _work(self, batch: dict[str, Any]) -> None:
        out, errors = [], []
        lines = [
            json.loads(x) for x in self.files[batch["input_file_id"]].decode().splitlines() if x
        ]
        limit = batch["expire_after"]
        for number, line in enumerate(lines):
            if limit is not None and number >= limit:
                break
            self.lines_answered += 1
            problem = self.line_error(line["body"]) if self.line_error else None
            if problem:
                response = {"status_code": 400, "body": {"error": {"message": problem}}}
                errors.append({"custom_id": line["custom_id"], "response": response})
                continue
            body = self.answer(line["body"], self.lines_answered)
            response = {"status_code": 200, "request_id": f"req_batch_{number}", "body": body}
            out.append({"custom_id": line["custom_id"], "response": response, "error": None})
        batch["request_counts"] = {
            "total": len(lines),
            "completed": len(out),
            "failed": len(errors),
        }
        for kind, rows in (("output_file_id", out), ("error_file_id", errors)):
            if rows:
                file_id = f"file-fake-{len(self.files):04d}"
                self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                batch[kind] = file_id
        batch["status"] = "expired" if limit is not None and limit < len(lines) else "completed"

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if k != "expire_after"}


def _file(file_id: str, size: int) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": f"{file_id}.jsonl",
        "purpose": "batch",
        "status": "processed",
    }


def _missing(path: str):
    return 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}
