"""``duckask serve``'s request guards: one ASGI middleware (``RequestGuards``) around the whole app that
refuses a request before any route sees it, and the same-origin test a write's approval needs.

- **Host** (a server without API keys): the ``Host`` header must be one of the server's own names:
  127.0.0.1, localhost or [::1] (and the host it was started on) with the port it listens on, or a name
  given with ``--allowed-host`` (``NAME``: any port; ``NAME:PORT``: that port). Anything else is a 421: a
  page of another site that rebinds its own name to 127.0.0.1 (DNS rebinding) reaches the server with
  its own name in ``Host``. A request without ``Host`` is a 400.
- **Origin** (every server): a state-changing request (POST, PUT, PATCH, DELETE) that carries an
  ``Origin`` must come from the server's own origin (the scheme and the ``Host`` it was sent to) or a
  ``--cors-origin``; one without ``Origin`` but with ``Sec-Fetch-Site: cross-site``/``same-site`` is
  refused too. Both are 403: a page of another site cannot make a visitor's browser act here (CSRF).
- **Body size**: ``Content-Length`` over the limit is a 413 before the body is read; a chunked body (or
  one whose length was not declared) is counted as it arrives and refused with a 413 as soon as it
  passes the limit, so at most about the limit is ever held in memory.
- **API key** (a server with keys): the check ``key_check`` makes, after the others.

``same_origin_request`` is what approving a write on a server without keys asks for on top: a request
the browser marks as coming from the server's own page (``Sec-Fetch-Site: same-origin``, or, from a
client that does not send that header, an ``Origin`` equal to the server's own). Who is asking:
``user_of`` (the key's user; on a server without keys an admin named by address), ``who`` (session and
user for the audit), ``check_bind`` (a server reachable from other machines needs a key).
"""
from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping

from duckask.utils.app import wire

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORTS = {"http": 80, "https": 443}


class BodyTooLarge(Exception):
    """Raised from ``receive`` when a body passes the limit; the route's read fails with it (a 413)."""

    status_code = 413

    def __init__(self, limit: int):
        self.detail = f"request body is over the {limit}-byte limit"
        super().__init__(self.detail)


def split_host(value: str, default_port: int | None = None) -> tuple[str, int | None]:
    """(name, port) of a ``Host`` header or an origin's ``host[:port]``, lower case, IPv6 without its
    brackets; the port is ``default_port`` when none is given, and -1 when it is not a number."""
    value = value.strip().lower()
    if value.startswith("["):                          # [::1]:8000
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:                        # name:8000
        name, _, port = value.partition(":")
    else:                                              # name, or a bare IPv6 address
        name, port = value, ""
    if not port:
        return name, default_port
    return name, int(port) if port.isascii() and port.isdigit() else -1


def show_host(name: str, port: int | None) -> str:
    """``name:port`` as a ``Host`` header spells it (IPv6 in brackets)."""
    shown = f"[{name}]" if ":" in name else name
    return shown if port is None else f"{shown}:{port}"


class HostNames:
    """The names a server without keys answers to: its loopback names and bind host on its own port, and
    the ``--allowed-host`` entries (``NAME``: any port; ``NAME:PORT``: that one)."""

    def __init__(self, bind_host: str | None = None, extra: Iterable[str] = ()):
        self.own = {split_host(n)[0] for n in (*LOOPBACK_NAMES, bind_host or "127.0.0.1")}
        self.exact: set[tuple[str, int]] = set()
        self.any_port: set[str] = set()
        for entry in extra:
            name, port = split_host(entry)
            if port is None:
                self.any_port.add(name)
            elif port >= 0:
                self.exact.add((name, port))

    def allows(self, host: str, server_port: int | None) -> bool:
        name, port = split_host(host, DEFAULT_PORTS["http"])
        return (name in self.own and port == server_port) or name in self.any_port or (name, port) in self.exact

    def listed(self, server_port: int | None) -> str:
        names = [show_host(n, server_port) for n in sorted(self.own)]
        names += sorted(show_host(n, p) for n, p in self.exact) + sorted(self.any_port)
        return ", ".join(names)


def host_refusal(host: str | None, names: HostNames, server_port: int | None) -> tuple[int, str] | None:
    """(status, why) when ``host`` is not one of ``names`` (a server without keys), else None."""
    if not host:
        return 400, "the request has no Host header: send the name you reached this server by"
    if names.allows(host, server_port):
        return None
    return 421, (f"this duckask server answers only to {names.listed(server_port)}, not Host {host!r}: a page "
                 "that reaches it under another name (DNS rebinding) is refused. To serve it under that name, "
                 "start it with --allowed-host NAME")


def same_origin(origin: str, host: str | None) -> bool:
    """Whether ``origin`` (``scheme://host[:port]``) is the origin of a request sent to ``host``."""
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in DEFAULT_PORTS or not host or "/" in rest:
        return False                                   # "null", a file:// page, a malformed origin
    default = DEFAULT_PORTS[scheme]
    return split_host(rest, default) == split_host(host, default)


def origin_refusal(method: str, headers: dict[str, str], cors_origins: Iterable[str]) -> str | None:
    """Why a state-changing request from another site is refused (a 403), or None: its ``Origin`` is not the
    server's own (nor a ``--cors-origin``), or, without ``Origin``, the browser says it is cross-site."""
    if method.upper() in SAFE_METHODS:
        return None
    origin, site = headers.get("origin"), headers.get("sec-fetch-site", "").lower()
    if origin is None:
        if site in ("cross-site", "same-site"):
            return f"a {site} request cannot change anything here: only this server's own page can"
        return None
    if origin in set(cors_origins) or same_origin(origin, headers.get("host")):
        return None
    return (f"requests from {origin} may not change anything on this server (only its own page, or an origin "
            "given with --cors-origin, may)")


def same_origin_request(headers: Mapping[str, str]) -> bool:
    """Whether the browser marks this request as sent by a page of the server's own origin: ``Sec-Fetch-Site:
    same-origin``, or (a client without Fetch Metadata) an ``Origin`` equal to the server's own."""
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site.lower() == "same-origin"
    origin = headers.get("origin")
    return origin is not None and same_origin(origin, headers.get("host"))


def declared_length(headers: dict[str, str]) -> int | None:
    """The ``Content-Length`` as a number (None when absent); ValueError when it is not one."""
    value = headers.get("content-length")
    if value is None:
        return None
    if not (value.strip().isascii() and value.strip().isdigit()):
        raise ValueError(value)
    return int(value)


def _headers(scope) -> dict[str, str]:
    """The request's headers by lower-case name (the last of a repeated one; ``Host`` is never repeated)."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


async def send_error(send, status: int, message: str) -> None:
    """A ``{"error": message}`` JSON response, sent straight from the middleware."""
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class RequestGuards:
    """ASGI middleware: the Host check (``names``: None on a server with keys, which skips it), the Origin
    check on state-changing requests, ``max_body`` enforced while the body is read, and ``authorize(scope,
    headers)`` (the API-key check: (status, why) or None) last. Plain ASGI, not Starlette's
    ``BaseHTTPMiddleware``, so a route's body read fails with ``BodyTooLarge`` itself (a 413)."""

    def __init__(self, app, *, max_body: int, names: HostNames | None, cors_origins: Iterable[str] = (),
                 authorize=None):
        self.app, self.max_body, self.names, self.cors_origins = app, max_body, names, tuple(cors_origins)
        self.authorize = authorize

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        refusal = self.refusal(scope, _headers(scope))
        if refusal:
            return await send_error(send, *refusal)
        started = False

        async def watched_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, self.limited(receive), watched_send)
        except BodyTooLarge as e:        # read outside a route (else its handler answered already)
            if started:
                raise
            await send_error(send, 413, e.detail)

    def refusal(self, scope, headers: dict[str, str]) -> tuple[int, str] | None:
        """(status, why) of the first check the request fails, or None."""
        if self.names is not None:
            server = scope.get("server") or (None, None)
            if (bad := host_refusal(headers.get("host"), self.names, server[1])):
                return bad
        if (why := origin_refusal(scope["method"], headers, self.cors_origins)):
            return 403, why
        try:
            size = declared_length(headers)
        except ValueError:
            return 400, "the Content-Length header is not a number"
        if size is not None and size > self.max_body:
            return 413, f"request body of {size} bytes is over the {self.max_body}-byte limit"
        return self.authorize(scope, headers) if self.authorize else None

    def limited(self, receive):
        """``receive`` that counts the body's bytes as they arrive and raises ``BodyTooLarge`` past the limit."""
        seen = 0

        async def receive_limited():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise BodyTooLarge(self.max_body)
            return message

        return receive_limited


# -- who is asking ----------------------------------------------------------------------------------------
_SESSION = re.compile(r"[^A-Za-z0-9._:-]")


def who(request, _api_key: str | None = None) -> tuple[str, str]:
    """(session, user) of a request for the audit log: the page's ``X-Duckask-Session`` (else "http"), and
    the user its key belongs to (``access``), or the client's address on an open server."""
    session = _SESSION.sub("", request.headers.get("x-duckask-session", ""))[:64] or "http"
    return session, user_of(request).name


def user_of(request):
    """The request's ``access.User`` (set by the key check); on an open server (no keys) everyone is an admin
    named by their address, as before users existed."""
    from duckask.utils.access.roles import User

    user = getattr(request.state, "user", None)
    return user or User(f"http {request.client.host if request.client else 'unknown'}", "admin")


def given_key(headers) -> str:
    """The API key in a request's ``headers`` (``X-API-Key``, else ``Authorization: Bearer``), or ""."""
    given = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
    return given.strip()


def key_check(keys):
    """The API-key check of ``RequestGuards`` for a server with ``keys``: every ``/api/`` route but health
    needs a known key (a 401 otherwise); the key's user is kept in the request's state for ``user_of``."""
    def check(scope, headers: dict[str, str]) -> tuple[int, str] | None:
        path = scope["path"]
        if not path.startswith("/api/") or path == "/api/health":
            return None
        user = keys.find(given_key(headers))
        if user is None:
            return 401, "missing or wrong API key: send Authorization: Bearer KEY or X-API-Key: KEY"
        scope.setdefault("state", {})["user"] = user
        return None

    return check


def check_bind(host: str, api_key: str | None) -> None:
    """A server reachable from other machines needs a key: ValueError saying so."""
    if host not in LOOPBACK_NAMES and not api_key:
        raise ValueError(f"listening on {host} makes duckask reachable from other machines: give --api-key KEY "
                         "(or DUCKASK_SERVER_KEY), or keep the default --host 127.0.0.1")


# -- request bodies, errors and scopes (the routes of server.py and server_actions.py) --------------------------
MAX_BODY = 64 * 1024


def parse_body(raw: bytes, shape: str):
    """The request body parsed as JSON; a 413 past ``MAX_BODY``, a 400 naming ``shape`` when it is not UTF-8
    text or not JSON."""
    from starlette.exceptions import HTTPException

    if len(raw) > MAX_BODY:
        raise HTTPException(413, f"request body is over the {MAX_BODY}-byte limit")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise HTTPException(400, f"the body is not UTF-8 JSON (byte {e.start} is not UTF-8); send {shape} "
                                 "encoded as UTF-8") from e
    try:
        return wire.loads(text or "null")
    except wire.TooDeep as e:
        raise HTTPException(400, f"the body is not accepted: {e}; send {shape}") from None
    except json.JSONDecodeError as e:
        raise HTTPException(400, f"the body is not JSON ({e.msg} at {e.pos}); send {shape}") from e


def json_error(status: int, message: str):
    """A JSON ``{"error": message}`` response with ``status``."""
    from fastapi.responses import JSONResponse

    return JSONResponse({"error": message}, status_code=status)


def scoped(prep, user):
    """``prep`` as ``user`` may use it: reads limited to their role's tables, when it has an allowlist."""
    from duckask.utils.access.roles import ScopedDatabase

    return dataclasses.replace(prep, database=ScopedDatabase(prep.database, user)) if user.tables is not None else prep
