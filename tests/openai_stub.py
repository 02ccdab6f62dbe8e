"""A tiny scriptable OpenAI-compatible chat-completions server for tests (stdlib only).

It listens on 127.0.0.1 on a free port and answers ``POST /v1/chat/completions`` with a proper
``chat.completion`` object. Every request body is recorded in ``requests`` (with its arrival time and
headers) and every answer in ``responses`` (status, body), so tests can assert on what the client
sent (model, temperature, messages, stop) and on what the server returned (usage).

What it answers, per request: the next item of the queue (``push``), else ``responder(body)`` when
one is set, else a 400 "no scripted response" (a client error, which the client does not retry). An
item is one of

- ``"text"``: a 200 completion whose message content is the text;
- ``(status, body)``: that status and JSON body as they are (``body=None``: an OpenAI-style error);
- ``{"content": ..., "model": ..., "usage": {...}, "finish_reason": ..., "delay": seconds}``: a 200
  completion with those fields overridden; ``delay`` sleeps before answering (to provoke timeouts);
- a callable ``(body) -> item``.

Like a real server it honours ``stop``: the content is cut at the first stop sequence (which is not
returned). Usage is deterministic: prompt tokens = words in the messages + 3 per message, completion
tokens = words in the returned content + 1.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 422: "invalid_request_error", 429: "rate_limit_exceeded"}


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error object."""
    kind = _ERROR_TYPES.get(status, "server_error")
    return {"error": {"message": message or f"stub says {status} ({kind})", "type": kind, "param": None,
                      "code": kind}}


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    return sum(len(str(m.get("content") or "").split()) + 3 for m in messages)


def completion_tokens(content: str) -> int:
    return len(content.split()) + 1


def apply_stop(content: str, stop: Any) -> tuple[str, bool]:
    """Cut ``content`` at the first of the stop sequences, like a real server does."""
    if not stop:
        return content, False
    seqs = [stop] if isinstance(stop, str) else list(stop)
    cuts = [content.find(s) for s in seqs if s and s in content]
    if not cuts:
        return content, False
    return content[: min(cuts)], True


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (closed again at once)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StubOpenAI:
    def __init__(self, responder: Callable[[dict], Any] | None = None):
        self.responder = responder
        self.queue: deque = deque()
        self.requests: list[dict[str, Any]] = []     # {"path", "body", "headers", "time"}
        self.responses: list[dict[str, Any]] = []    # {"status", "body"}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0

    # ------------------------------------------------------------------ scripting
    def push(self, *items: Any) -> StubOpenAI:
        with self._lock:
            self.queue.extend(items)
        return self

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> StubOpenAI:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"   # one request per connection: nothing lingers at shutdown

            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                status, payload, delay = stub._answer(self.path, body, dict(self.headers))
                if delay:
                    time.sleep(delay)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def do_GET(self):
                status, payload = 404, error_body(404, f"no route GET {self.path}")
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="openai-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving and close the socket, waiting at most ``timeout`` seconds."""
        server, thread = self._server, self._thread
        if server is None:
            return
        stopper = threading.Thread(target=server.shutdown, daemon=True)
        stopper.start()
        stopper.join(timeout)
        if thread is not None:
            thread.join(timeout)
        server.server_close()
        self._server = None

    def __enter__(self) -> StubOpenAI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ answering
    def _answer(self, path: str, body: dict, headers: dict) -> tuple[int, dict, float]:
        with self._lock:
            self.requests.append({"path": path, "body": body, "headers": {k.lower(): v for k, v in headers.items()},
                                  "time": time.monotonic()})
            item = self.queue.popleft() if self.queue else None
            self._counter += 1
            n = self._counter
        if path.rstrip("/") != CHAT_PATH:
            status, payload, delay = 404, error_body(404, f"no route POST {path}"), 0.0
        else:
            if item is None:
                item = self.responder if self.responder is not None else (
                    400, error_body(400, "stub: no scripted response left"))
            status, payload, delay = self._render(item, body, n)
        with self._lock:
            self.responses.append({"status": status, "body": payload})
        return status, payload, delay

    def _render(self, item: Any, body: dict, n: int) -> tuple[int, dict, float]:
        while callable(item):
            item = item(body)
        if isinstance(item, tuple):
            status, payload = item
            return int(status), (payload if payload is not None else error_body(int(status))), 0.0
        spec = {"content": item} if isinstance(item, str) else dict(item)
        content, _ = apply_stop(str(spec.get("content", "")), body.get("stop"))
        messages = body.get("messages") or []
        usage = {"prompt_tokens": prompt_tokens(messages), "completion_tokens": completion_tokens(content)}
        usage.update(spec.get("usage") or {})
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        payload = {
            "id": f"chatcmpl-stub{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": spec.get("model") or body.get("model") or "stub",
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": spec.get("finish_reason") or "stop",
            }],
            "usage": usage,
            "system_fingerprint": "fp_stub",
        }
        return 200, payload, float(spec.get("delay") or 0.0)
