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
  ``(status, body, headers)`` also sends those headers (``{"Retry-After": "2"}``);
- ``RESET``: the connection is closed without an answer (the client sees a connection error);
- ``GARBAGE``: a 200 whose body is not JSON;
- ``{"content": ..., "model": ..., "usage": {...}, "finish_reason": ..., "delay": seconds}``: a 200
  completion with those fields overridden; ``delay`` sleeps before answering (to provoke timeouts);
  ``"contents": [...]`` answers with one choice per text (a request for ``n`` choices);
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


RESET = "<stub: reset the connection>"
GARBAGE = "<stub: a body that is not JSON>"


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


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (closed again at once), never one this process handed out
    before: the kernel may give the same free port to two calls in a row, and two servers started on it (the
    scale-out benchmark's pair) would have the second one exit."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


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
                status, payload, delay, headers = stub._answer(self.path, body, dict(self.headers))
                if delay:
                    time.sleep(delay)
                if payload is RESET:
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                data = b"<html>502 oops" if payload is GARBAGE else json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
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
    def _answer(self, path: str, body: dict, headers: dict) -> tuple[int, Any, float, dict]:
        with self._lock:
            self.requests.append({"path": path, "body": body, "headers": {k.lower(): v for k, v in headers.items()},
                                  "time": time.monotonic()})
            item = self.queue.popleft() if self.queue else None
            self._counter += 1
            n = self._counter
        if path.rstrip("/") != CHAT_PATH:
            status, payload, delay, extra = 404, error_body(404, f"no route POST {path}"), 0.0, {}
        else:
            if item is None:
                item = self.responder if self.responder is not None else (
                    400, error_body(400, "stub: no scripted response left"))
            status, payload, delay, extra = self._render(item, body, n)
        with self._lock:
            self.responses.append({"status": "reset" if payload is RESET else status, "body": payload})
        return status, payload, delay, extra

    def _render(self, item: Any, body: dict, n: int) -> tuple[int, Any, float, dict]:
        while callable(item):
            item = item(body)
        if item is RESET or item is GARBAGE:
            return 200, item, 0.0, {}
        if isinstance(item, tuple):
            status, payload, *headers = item
            return (int(status), (payload if payload is not None else error_body(int(status))), 0.0,
                    headers[0] if headers else {})
        spec = {"content": item} if isinstance(item, str) else dict(item)
        contents = [apply_stop(str(c), body.get("stop"))[0] for c in spec.get("contents") or []]
        content, _ = apply_stop(str(spec.get("content", "")), body.get("stop"))
        contents = contents or [content]
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
                "index": i,
                "message": {"role": "assistant", "content": c},
                "logprobs": None,
                "finish_reason": spec.get("finish_reason") or "stop",
            } for i, c in enumerate(contents)],
            "usage": usage,
            "system_fingerprint": "fp_stub",
        }
        return 200, payload, float(spec.get("delay") or 0.0), {}


# ---------------------------------------------------------------------- fault injection
def repetition(body: dict) -> dict:
    """A model stuck in a loop: the same words until max_tokens, cut off there."""
    n = int(body.get("max_tokens") or 256)
    return {"content": " ".join(["SELECT"] * n), "finish_reason": "length"}


#: What a misbehaving endpoint does, by name: an item for ``StubOpenAI`` (see the module docstring),
#: or a callable (good reply, request body) -> item. ``slow`` answers after ``Faults.slow_s``.
FAULT_KINDS: dict[str, Any] = {
    "429": (429, None, {"Retry-After": "0.05"}),
    "500": (500, None),
    "503": (503, None, {"Retry-After": "0"}),
    "reset": RESET,
    "garbage": GARBAGE,
    "slow": None,   # filled in by Faults (it needs the delay)
    "empty": "",
    "nonsense": "I am sorry, as an AI I cannot help with databases. 🦆 <|im_end|> ###",
    "bad_yaml": "verdict: [pass\ncritique: {unclosed: 'yes",
    "prose_sql": lambda good, body: "Sure! Here is what you asked for. " + good + " I hope this helps!",
    "truncated": lambda good, body: good[: max(1, len(good) // 2)],
    "repetition": lambda good, body: repetition(body),
}


def attempts_per_call(requests: list[dict]) -> list[int]:
    """HTTP attempts of each logical call: requests grouped by the client's ``Idempotency-Key`` (the
    same on every retry of one call)."""
    counts: dict[str, int] = {}
    for r in requests:
        key = r["headers"].get("idempotency-key") or f"(no key) {id(r)}"
        counts[key] = counts.get(key, 0) + 1
    return list(counts.values())


class Faults:
    """A responder for ``StubOpenAI``: each request is, with probability ``rate``, answered by one of
    the ``kinds`` of fault (drawn at random, seeded), else by ``good(body)``. ``injected`` counts them."""

    def __init__(self, good: Callable[[dict], Any], rate: float, kinds: list[str] | None = None, seed: int = 0,
                 slow_s: float = 1.0):
        import random

        self.good, self.rate, self.slow_s = good, rate, slow_s
        self.kinds = list(kinds or FAULT_KINDS)
        self.rng = random.Random(seed)
        self.injected: dict[str, int] = {}
        self.served = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict) -> Any:
        with self._lock:
            self.served += 1
            kind = self.rng.choice(self.kinds) if self.rng.random() < self.rate else None
            if kind:
                self.injected[kind] = self.injected.get(kind, 0) + 1
        good = self.good(body)
        if kind is None:
            return good
        if kind == "slow":
            return {"content": good if isinstance(good, str) else "", "delay": self.slow_s}
        fault = FAULT_KINDS[kind]
        return fault(good if isinstance(good, str) else "", body) if callable(fault) else fault


# ---------------------------------------------------------------------- a cooperative model
#: A one-table database, the question asked of it, and what a cooperative model answers.
QUESTION = "What is the population of each city in France?"
SQL = "SELECT name, population FROM cities WHERE country = 'France' ORDER BY population DESC"
ROWS = [["Paris", 2100000], ["Lyon", 520000]]
ANSWER = "Paris is the most populous city in France with 2,100,000 people, followed by Lyon with 520,000."


def make_cities_db(path):
    import duckdb

    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE cities (name VARCHAR, country VARCHAR, population BIGINT)")
        con.execute("INSERT INTO cities VALUES ('Paris', 'France', 2100000), ('Lyon', 'France', 520000), "
                    "('Berlin', 'Germany', 3600000)")
    return path


CHANGE_SQL = "DELETE FROM cities WHERE country = 'France'"


def smart_responder(body: dict):
    """Answer like a cooperative model, from what the request asks for."""
    msgs = body["messages"]
    system = " ".join(m["content"] for m in msgs if m["role"] == "system")
    prompt = msgs[-1]["content"]
    if "DuckDB SQL" in system:
        return f"```sql\n{SQL}\n```"
    if "You maintain a DuckDB database" in prompt:        # ProposeWrite: a change asked in words
        return f"```sql\n{CHANGE_SQL}\n```\nExplanation: Removes the French cities."
    if "Answer the question" in prompt:
        return ANSWER
    if "verdict" in prompt:
        return 'verdict: pass\ncritique: ""'
    return (400, error_body(400, "stub: unexpected request"))


def node_of(body: dict) -> str:
    msgs = body["messages"]
    if any("DuckDB SQL" in m["content"] for m in msgs if m["role"] == "system"):
        return "SQLGenerator"
    if "You maintain a DuckDB database" in msgs[-1]["content"]:
        return "ProposeWrite"
    return "DataAnalyzer" if "Answer the question" in msgs[-1]["content"] else "ResponseGrader"
