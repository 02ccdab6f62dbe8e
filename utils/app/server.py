"""``duckask serve``: the HTTP API, on the same graph, safe executor and ``Result`` (extra ``server``).

Routes (the OpenAPI description at ``/openapi.json``; the web page at ``/``, ``static/index.html``; no
``/docs`` or ``/redoc``: FastAPI's load their script from a CDN, and nothing from another site runs on the
origin where the page keeps its key):
- ``GET  /api/health``: ``{"status": "ok"}`` (no key needed); with a valid key, also the database, model,
  queue length and whether writes are on;
- ``GET  /api/info``: those details (the page's header), with a key like every other route;
- ``GET  /api/schema``: the schema text the model sees, and the table names;
- ``POST /api/ask`` ``{"question", "options", "thread"?}``: the JSON of ``duckask ask --json``; with
  ``"thread": true`` the turn joins this session's thread (a follow-up is resolved against it; ``state.threads``:
  in memory, or in the shared state so any server behind a balancer continues it);
- ``GET /api/thread``: this session's thread as the page drew it; ``DELETE /api/thread``: a new thread;
- ``GET /api/browse``: suggested questions, the semantic file's metrics and the tables (``browse``);
- ``POST /api/ask/stream``: the same as server-sent events: ``queued`` (position) while waiting,
  ``node`` as each node starts, ``text`` as the answer sentence is written, then ``result`` (or ``error``);
- ``POST /api/sql`` ``{"sql"}``: the user's own SQL through the safe executor, the JSON of
  ``duckask sql --json``; a refusal or DuckDB error is a 400 with the reason. Any other statement is a
  proposed write: ``{"status": "pending", "write": card}``, or a 400 with the card when it is blocked;
- ``POST /api/writes/{id}`` ``{"decision": "approve" | "reject", "approval_token"}``: runs or drops a
  pending write (``--allow-writes``; nothing else runs one); ``{"status": "written"|"rolled_back"|"error"|
  "rejected"}``. Without API keys it needs the card's one-time ``approval_token`` from the page's own origin;
- ``POST /api/export`` ``{"sql", "format"}``: the rows as a csv, parquet, json or xlsx download;
- ``POST /api/email`` ``{"to", "sql", "question"?, "answer"?, "format"?}``: the rows mailed (smtp_*).
- ``POST /api/examples`` ``{"question", "sql"}``: keep a checked answer as a pair (Right, or Wrong's fix; by role);
  ``GET /api/examples/suggested`` and ``POST /api/examples/suggested/{id}``: a proposer's suggestions, decided.

The embedded model answers one question at a time: requests queue (their position is reported in
the stream) instead of loading the model twice; an endpoint backend runs ``max_concurrent`` at once.
Access: with an API key every route but health needs ``Authorization: Bearer KEY`` (or
``X-API-Key``); ``duckask serve`` refuses a non-loopback host without one. Without keys, only the server's
own names pass the ``Host`` check (DNS rebinding); on every server a state-changing request from another
site's page is a 403 (``server_guards.py``). Bodies over ``MAX_BODY`` bytes (counted as they arrive, chunked
or not) and questions over ``MAX_QUESTION`` characters are refused; every error is ``{"error": ...}``.

Each route is a named function: the question and page routes in ``server_routes.py``, ``/api/sql`` and the routes
listed after it in ``server_actions.py``; what they share (the prepared database, the queue, the held writes, the
threads, and ``Served.answer``, the one request-to-turn path) in ``server_context.py``; request bodies, errors and
scopes in ``server_guards.py``, below them all. Started by ``duckask serve --db PATH [--host 127.0.0.1] [--port 8000]
[--allow-writes] [--allowed-host NAME]`` (``serve_command``; the CLI imports this module, never the reverse).
"""
# No "from __future__ import annotations": FastAPI reads annotations (the routes' modules say more).

import logging
from typing import Any

from duckask.utils.app.server_guards import MAX_BODY, check_bind, json_error, key_check

__all__ = ["MAX_BODY", "create_app", "serve_command"]

_log = logging.getLogger("duckask.serve")


def create_app(db: str | None = None, *, llm=None, settings=None, api_key: str | None = None,
               max_concurrent: int = 4, cors_origins: tuple[str, ...] = (), allow_writes: bool | None = None,
               users=None, bind_host: str | None = None, allowed_hosts: tuple[str, ...] = (), **options: Any):
    """The FastAPI app for one named database (``duckask serve`` without ``--db`` names the demo); ``allow_writes``
    (None: the settings') lets a write run after its approval on ``/api/writes/{id}``; ``users`` (``access.Users``):
    API keys with roles (the shared ``api_key`` is one admin user). Without keys, the ``Host`` header must
    name the server: a loopback name or ``bind_host`` on its port, or one of ``allowed_hosts``."""
    from fastapi import FastAPI

    from duckask.utils.access.roles import shared_key_users
    from duckask.utils.api import need_db, prepare
    from duckask.utils.app import server_actions, server_routes
    from duckask.utils.app.pending import PendingWrites
    from duckask.utils.app.queue import Gate
    from duckask.utils.app.server_context import Served
    from duckask.utils.app.server_guards import HostNames, RequestGuards
    from duckask.utils.state import card_store, thread_store

    prep = prepare(need_db(db, "create_app()"), llm=llm, settings=settings, allow_writes=allow_writes, **options)
    keys = users or (shared_key_users(api_key) if api_key else None)
    app = FastAPI(title="duckask", description="Plain-English questions about a DuckDB database.",
                  docs_url=None, redoc_url=None)     # their pages load a CDN's script: /openapi.json only
    if cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "X-API-Key", "Content-Type", "X-Duckask-Session"])
    # outermost (added last): Host, Origin, body size and key are checked before anything else runs
    app.add_middleware(RequestGuards, max_body=MAX_BODY, cors_origins=cors_origins,
                       names=None if keys else HostNames(bind_host, allowed_hosts),
                       authorize=key_check(keys) if keys else None)
    add_error_handlers(app)
    app.state.served = Served(prep=prep, gate=Gate(max_concurrent if prep.llm.is_endpoint else 1), keys=keys,
                              pending=PendingWrites(store=card_store(prep.settings), database=prep.database),
                              threads=thread_store(prep.settings, prep.database.identity))  # the file, not its name
    app.include_router(server_routes.router)
    app.include_router(server_actions.router)
    app.state.prepared = prep    # the server's settings, database and catalog (tests and embedders read them)
    app.state.pending_writes = app.state.served.pending
    return app


def add_error_handlers(app) -> None:
    """Every error as ``{"error": ...}`` with its status: a body over the limit (413), a request FastAPI cannot
    read (422, naming the field), the shared state, the audit log or the kept pairs' store out of reach (503, the
    public text and not the path or the driver's), an HTTP error, and a fault of duckask's own (500, the details in
    the server's log)."""
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException

    from duckask.utils.app.server_guards import BodyTooLarge
    from duckask.utils.knowledge.examples import ExampleError
    from duckask.utils.state.postgres import StateError
    from duckask.utils.writes.audit import AuditError

    async def too_large(_request, exc):
        return json_error(413, exc.detail)

    async def bad_request(_request, exc):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(x) for x in first.get("loc", [])[1:]) or "body"
        return json_error(422, f"bad request: {where}: {first.get('msg', 'invalid')}")

    async def state_down(_request, exc):        # every keyed user (readers too) gets this: the setting, not its value
        _log.warning("%s", exc)
        return json_error(503, StateError.PUBLIC)

    async def audit_down(_request, exc):        # a write typed to /api/ask while the audit log is damaged, ...
        _log.warning("%s", exc)
        return json_error(exc.status, exc.public)

    async def store_down(_request, exc):        # the kept pairs' store out of reach (its public text), else the 400
        if exc.public:
            _log.warning("%s", exc)
            return json_error(503, exc.public)
        return json_error(400, str(exc))

    async def http_error(_request, exc):
        return json_error(exc.status_code, str(exc.detail))

    async def crashed(_request, exc):
        return json_error(500, f"internal error ({type(exc).__name__}); the server's log has the details")

    for kind, handler in ((BodyTooLarge, too_large), (RequestValidationError, bad_request),
                          (StateError, state_down), (AuditError, audit_down), (ExampleError, store_down),
                          (HTTPException, http_error), (Exception, crashed)):
        app.add_exception_handler(kind, handler)


def serve_command(args, db: str) -> int:
    """``duckask serve``: check the bind, build the app, run uvicorn; exit codes as the CLI's."""
    import os
    import sys

    try:
        import uvicorn
    except ImportError as e:
        print(f"duckask serve: the server extra is missing ({e.name}): pip install 'duckask[server]'", file=sys.stderr)
        return 1
    from duckask.utils.access.roles import AccessError, load_users

    key = args.api_key or os.environ.get("DUCKASK_SERVER_KEY")
    users_file = getattr(args, "users", None) or os.environ.get("DUCKASK_USERS_FILE")
    try:
        users = load_users(users_file, key) if users_file else None
        check_bind(args.host, key or (users_file if users and users.users else None))
    except (ValueError, AccessError) as e:
        print(f"duckask serve: {e}", file=sys.stderr)
        return 2
    app = create_app(db, config=args.config, api_key=key, max_concurrent=args.max_concurrent, users=users,
                     cors_origins=tuple(args.cors_origin), allow_writes=getattr(args, "allow_writes", None) or None,
                     bind_host=args.host, allowed_hosts=tuple(getattr(args, "allowed_host", None) or ()),
                     **({"state": args.state} if getattr(args, "state", None) else {}))
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0
