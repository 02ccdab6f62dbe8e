"""What every tool is: ``Tool`` (name, kind, description, parameters, ``call``) and ``ToolResult``, and the one
HTTP GET the shipped tools use (``get_json``), which promises:

- one deadline, ``timeout_s``, for the whole call: connecting, the response's headers and every byte of its body
  (the request runs under ``asyncio.wait_for`` and is cancelled at the deadline; a server that is silent, or
  trickles headers or body a byte at a time, holds a tool no longer than that);
- a redirect is followed only to the same origin (scheme, host and port) and at most ``MAX_REDIRECTS`` times; one
  to another origin is refused before anything is sent there, so a key (in the URL or a header) never leaves
  the configured host;
- at most ``max_bytes`` of answer, which must be JSON; anything else is a ``ToolError`` that says what was wrong.

A tool is read-only by contract: ``call`` only reads from its service and never raises; a failure is a
``ToolResult`` with ``ok=False`` and the reason (timed out, too large, not JSON, HTTP 500, no key).
"""
from __future__ import annotations

import asyncio
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_BYTES = 200_000
TEXT_CHARS = 1500            # what the model is shown of a tool's answer at most
MAX_REDIRECTS = 3            # same-origin redirects followed in one call
DEFAULT_PORTS = {"http": 80, "https": 443}

T = TypeVar("T")


class ToolError(Exception):
    """A tool call that could not give an answer; the message says why (never a key)."""


@dataclass
class Param:
    name: str
    description: str
    required: bool = True


@dataclass
class ToolResult:
    tool: str
    ok: bool
    text: str = ""                                   # compact, for the model (at most TEXT_CHARS)
    data: Any = None                                 # the parsed answer, trimmed to what the config keeps
    sources: list[dict] = field(default_factory=list)   # [{"name", "url", "title"}], the key never in a URL
    error: str = ""
    ms: float = 0.0

    def as_dict(self) -> dict:
        return {"tool": self.tool, "ok": self.ok, "text": self.text, "sources": self.sources, "error": self.error,
                "ms": round(self.ms, 1)}


class Tool(ABC):
    """A read-only outside source. Subclasses set the fields and implement ``_call``."""

    kind = "api"                                     # "api" or "web": the router prefers APIs to the web

    def __init__(self, name: str, description: str, params: list[Param], *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 max_bytes: int = DEFAULT_MAX_BYTES, send_database_values: bool = False):
        self.name, self.description, self.params = name, description, params
        self.timeout_s, self.max_bytes = float(timeout_s), int(max_bytes)
        self.send_database_values = bool(send_database_values)

    @abstractmethod
    def _call(self, args: dict[str, str]) -> ToolResult:
        """Read from the service; raise ``ToolError`` for an answer that cannot be had."""

    def call(self, args: dict[str, str]) -> ToolResult:
        """Call the tool; every failure comes back as ``ok=False`` with the reason, none is raised."""
        missing = [p.name for p in self.params if p.required and not str(args.get(p.name) or "").strip()]
        t0 = time.perf_counter()
        if missing:
            return ToolResult(self.name, False, error=f"missing {', '.join(missing)}")
        try:
            result = self._call({k: str(v) for k, v in args.items() if v is not None})
        except ToolError as exc:
            result = ToolResult(self.name, False, error=str(exc))
        result.ms = (time.perf_counter() - t0) * 1000
        return result

    def describe(self) -> str:
        """One line for the router's prompt."""
        params = ", ".join(f"{p.name} ({p.description})" for p in self.params)
        return f"{self.name} ({self.kind}): {self.description}. Arguments: {params}"


def check_config(config: dict, keys: set[str], kind: str) -> str:
    """The ``url`` of a shipped tool's config, after its keys were checked; ValueError naming what is wrong."""
    unknown = sorted(set(config) - keys)
    if unknown:
        raise ValueError(f"tool {config.get('name')!r}: unknown key(s) {', '.join(unknown)}; "
                         f"a {kind} tool takes {', '.join(sorted(keys))}")
    url = config.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError(f"tool {config.get('name')!r}: url must be an http(s) address")
    return url


def get_json(url: str, *, timeout_s: float, max_bytes: int, headers: dict | None = None, shown: str = "",
             tool: str = "") -> Any:
    """GET ``url`` and parse JSON: all of it (connecting, headers, body, same-origin redirects) within
    ``timeout_s``, at most ``max_bytes``, never a redirect to another origin. ``shown`` is the URL as errors may
    name it (with any key in it already redacted); ``tool`` is the tool's name for the deadline's error."""
    import httpx  # noqa: F401  (loaded before the clock starts: the deadline is the server's, not the import's)

    shown = shown or url
    try:
        body = within(timeout_s, lambda: _fetch(url, headers=headers, max_bytes=max_bytes, shown=shown))
    except asyncio.TimeoutError:
        raise ToolError(deadline_error(shown, timeout_s, tool)) from None
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ToolError(f"the answer from {shown} was not JSON") from None


def deadline_error(shown: str, timeout_s: float, tool: str = "") -> str:
    whose = f"the {tool} tool's timeout_s" if tool else "timeout_s"
    return f"{shown} took longer than {timeout_s:g} s ({whose}, for connecting, the headers and the whole answer)"


def within(timeout_s: float, start: Callable[[], Awaitable[T]]) -> T:
    """The result of the coroutine ``start()`` returns, or ``asyncio.TimeoutError`` once ``timeout_s`` has passed,
    when it is cancelled (a connection it holds is closed) and nothing of it is waited for. It runs on an event
    loop of its own: on this thread, or on a thread of its own when this one already runs a loop (async code, e.g.
    an MCP tool, calling a tool)."""
    def run() -> T:
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(asyncio.wait_for(start(), timeout_s))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()          # not waiting for the default executor: a hung DNS lookup finishes on its own

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    with ThreadPoolExecutor(1, thread_name_prefix="duckask-tool") as pool:
        return pool.submit(run).result()


async def _fetch(url: str, *, headers: dict | None, max_bytes: int, shown: str) -> bytes:
    """The body of a GET of ``url``, following same-origin redirects only (``next_hop``); a ``ToolError`` for an
    HTTP error, an answer over ``max_bytes`` or a server that cannot be reached. No deadline of its own: the
    caller's (``within``) covers it all; httpx's per-phase timeouts are off."""
    import httpx

    try:
        target = httpx.URL(url)
        async with httpx.AsyncClient(follow_redirects=False, timeout=None) as client:
            for _ in range(MAX_REDIRECTS + 1):
                async with client.stream("GET", target, headers=headers) as r:
                    if not r.is_redirect:
                        return await _read(r, max_bytes, shown)
                    target = next_hop(target, r.headers["location"], url, shown)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise ToolError(f"could not reach {shown}: {type(exc).__name__}") from None
    raise ToolError(f"{shown} redirected more than {MAX_REDIRECTS} times")


async def _read(r, max_bytes: int, shown: str) -> bytes:
    """The body of a final (not redirecting) response: a ``ToolError`` for any other status than 2xx, or once
    more than ``max_bytes`` (decoded) have come."""
    if r.status_code >= 300:
        raise ToolError(f"HTTP {r.status_code} from {shown}")
    body = bytearray()
    async for chunk in r.aiter_bytes():
        body.extend(chunk)
        if len(body) > max_bytes:
            raise ToolError(f"the answer from {shown} is over {max_bytes:,} bytes (max_bytes)")
    return bytes(body)


def origin(url) -> tuple[str, str, int | None]:
    """(scheme, host, port) of an ``httpx.URL``, the scheme's default port filled in: what 'the same origin' is."""
    return url.scheme, url.host.lower(), url.port or DEFAULT_PORTS.get(url.scheme)


def next_hop(current, location: str, first: str, shown: str):
    """Where a redirect from ``current`` to ``location`` goes, if that is the origin of the call's first URL;
    otherwise a ``ToolError`` naming the other origin (never its path or query), and nothing is sent there."""
    import httpx

    try:
        target = current.join(location)
    except httpx.InvalidURL:
        raise ToolError(f"{shown} redirected to something that is not a URL") from None
    if origin(target) != origin(httpx.URL(first)):
        scheme, host, port = origin(target)
        raise ToolError(f"refused a redirect from {shown} to {scheme}://{host}:{port}: a tool follows a redirect "
                        "only to its own scheme, host and port (if that address is right, make it the tool's url)")
    return target


def compact(data: Any, limit: int = TEXT_CHARS) -> str:
    """The data as short JSON text for a prompt (cut at ``limit`` characters)."""
    text = json.dumps(data, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
