"""What every tool is: ``Tool`` (name, kind, description, parameters, ``call``) and ``ToolResult``, and the one
HTTP GET the shipped tools use (``get_json``: a wall-clock deadline, a cap on the answer's size, JSON or a
``ToolError`` that says what was wrong).

A tool is read-only by contract: ``call`` only reads from its service and never raises; a failure is a
``ToolResult`` with ``ok=False`` and the reason (timed out, too large, not JSON, HTTP 500, no key).

Run on its own to GET one URL the way a tool would::

    python -m duckask.utils.tools.base URL [--timeout 10] [--max-bytes 200000]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TIMEOUT_S = 10.0
DEFAULT_MAX_BYTES = 200_000
TEXT_CHARS = 1500            # what the model is shown of a tool's answer at most


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


def get_json(url: str, *, timeout_s: float, max_bytes: int, headers: dict | None = None, shown: str = "") -> Any:
    """GET ``url`` and parse JSON, within ``timeout_s`` in all (connecting and every byte) and ``max_bytes``.
    ``shown`` is the URL as errors may name it (with any key in it already redacted)."""
    import httpx

    shown = shown or url
    deadline = time.monotonic() + timeout_s
    body = bytearray()
    try:
        with httpx.stream("GET", url, headers=headers, timeout=timeout_s, follow_redirects=True) as r:
            if r.status_code >= 400:
                raise ToolError(f"HTTP {r.status_code} from {shown}")
            for chunk in r.iter_bytes():
                body.extend(chunk)
                if len(body) > max_bytes:
                    raise ToolError(f"the answer from {shown} is over {max_bytes:,} bytes (max_bytes)")
                if time.monotonic() > deadline:
                    raise ToolError(f"{shown} took longer than {timeout_s:g} s")
    except httpx.TimeoutException:
        raise ToolError(f"{shown} took longer than {timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise ToolError(f"could not reach {shown}: {type(exc).__name__}") from None
    try:
        return json.loads(bytes(body).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ToolError(f"the answer from {shown} was not JSON") from None


def compact(data: Any, limit: int = TEXT_CHARS) -> str:
    """The data as short JSON text for a prompt (cut at ``limit`` characters)."""
    text = json.dumps(data, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="GET one URL the way a duckask tool does (deadline, size cap, JSON).")
    ap.add_argument("url")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S)
    ap.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES)
    args = ap.parse_args(argv)
    try:
        print(compact(get_json(args.url, timeout_s=args.timeout, max_bytes=args.max_bytes)))
    except ToolError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
