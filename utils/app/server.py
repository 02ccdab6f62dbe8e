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

``/api/sql`` and the routes listed after it live in ``server_actions.py``; request bodies, errors and scopes in
``server_guards.py``, below both. Started by ``duckask serve --db PATH [--host 127.0.0.1] [--port 8000]
[--allow-writes] [--allowed-host NAME]`` (``serve_command``; the CLI imports this module, never the reverse).
"""
# No "from __future__ import annotations": FastAPI reads the route functions' annotations, and
# Request is imported inside create_app (the extra is optional), where a string annotation would not resolve.

import asyncio
import dataclasses
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from duckask.utils.app.server_guards import (
    MAX_BODY,
    check_bind,
    given_key,
    json_error,
    key_check,
    parse_body,
    scoped,
    user_of,
    who,
)
from duckask.utils.config import MAX_QUESTION  # the one limit, which every surface checks

_log = logging.getLogger("duckask.serve")

#: The web page: plain HTML, CSS and JavaScript, no build step; plotly.js comes from the plotly package.
PAGE = Path(__file__).resolve().parent / "static" / "index.html"
#: What a request may set in ``options``: graph behaviour only, never the backend, paths or limits.
REQUEST_OPTIONS = {"resample_drafts", "max_fix_retries", "max_grader_rounds", "grader", "analyzer", "clarify",
                   "column_pruning", "dialect_notes", "router", "follow_ups", "time_budget_s"}
#: The page's own headers: no other site may frame it (a click on Approve is the page's own), and it runs
#: only its own scripts (plotly.js included: served from this origin, never a CDN).
PAGE_HEADERS = {"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": "default-src 'self'; script-src 'self' 'unsafe-inline'; "
                                           "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
                                           "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"}


def create_app(db: str | None = None, *, llm=None, settings=None, api_key: str | None = None,
               max_concurrent: int = 4, cors_origins: tuple[str, ...] = (), allow_writes: bool | None = None,
               users=None, bind_host: str | None = None, allowed_hosts: tuple[str, ...] = (), **options: Any):
    """The FastAPI app for one database (the Lahman demo by default); ``allow_writes`` (None: the
    settings') lets a write run after its approval on ``/api/writes/{id}``; ``users`` (``access.Users``):
    API keys with roles (the shared ``api_key`` is one admin user). Without keys, the ``Host`` header must
    name the server: a loopback name or ``bind_host`` on its port, or one of ``allowed_hosts``."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import FileResponse, HTMLResponse, Response, StreamingResponse
    from starlette.exceptions import HTTPException

    from duckask.utils.api import new_shared, prepare, run_turn
    from duckask.utils.app.browse import metrics, suggestions
    from duckask.utils.app.conversation import HISTORY_TURNS, turn_record
    from duckask.utils.app.queue import Gate, in_thread
    from duckask.utils.app.server_actions import add_action_routes
    from duckask.utils.app.server_guards import BodyTooLarge, HostNames, RequestGuards
    from duckask.utils.config import SettingError, check_settings, with_options
    from duckask.utils.db.access import shared_key_users
    from duckask.utils.schema.ddl import render_schema
    from duckask.utils.state import thread_store
    from duckask.utils.state.postgres import StateError
    from duckask.utils.state.threads import ThreadsFull

    prep = prepare(db, llm=llm, settings=settings, allow_writes=allow_writes, **options)
    keys = users or (shared_key_users(api_key) if api_key else None)
    gate = Gate(max_concurrent if prep.llm.is_endpoint else 1)
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

    @app.exception_handler(BodyTooLarge)
    async def too_large(_request, exc):
        return json_error(413, exc.detail)

    @app.exception_handler(RequestValidationError)
    async def bad_request(_request, exc):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(x) for x in first.get("loc", [])[1:]) or "body"
        return json_error(422, f"bad request: {where}: {first.get('msg', 'invalid')}")

    @app.exception_handler(StateError)
    async def state_down(_request, exc):        # every keyed user (readers too) gets this: the setting, not its value
        _log.warning("%s", exc)
        return json_error(503, StateError.PUBLIC)

    @app.exception_handler(HTTPException)
    async def httpjson_error(_request, exc):
        return json_error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def crashed(_request, exc):           # a fault of duckask's own: JSON that says so, the details logged
        return json_error(500, f"internal error ({type(exc).__name__}); the server's log has the details")

    async def read_json(request: Request, key: str, limit: int) -> tuple[str, dict]:
        body = parse_body(await request.body(), f'{{"{key}": "..."}}')
        if not isinstance(body, dict) or not isinstance(body.get(key), str) or not body[key].strip():
            raise HTTPException(422, f"send a JSON object with a non-empty string \"{key}\"")
        if len(body[key]) > limit:
            raise HTTPException(422, f"\"{key}\" is {len(body[key])} characters; the limit is {limit}")
        opts = body.get("options") or {}
        if not isinstance(opts, dict) or set(opts) - REQUEST_OPTIONS:
            raise HTTPException(422, f"options may set only: {', '.join(sorted(REQUEST_OPTIONS))}")
        try:
            return body[key], check_settings(opts)
        except SettingError as e:
            raise HTTPException(400, f"bad option: {e}") from e

    pending = add_action_routes(app, prep, gate, read_json, keys=keys)

    threads = thread_store(prep.settings, prep.database.identity)   # the file itself, not its name

    def answer(question: str, opts: dict, events=None, asker: tuple[str, str] = ("http", "http"), user=None,
               thread: bool = False) -> dict:
        last = [0]

        def waiting(n: int) -> None:  # reported when the position changes, not on every wake-up
            if events and n != last[0]:
                last[0] = n
                events("queued", {"position": n})

        p = dataclasses.replace(prep, settings=with_options(prep.settings, **opts)) if opts else prep
        p = scoped(p, user) if user else p
        key = (user.id if user else asker[1], asker[0])   # the key (not the name), then the page's session
        history = threads.history(key, last=HISTORY_TURNS) if thread else None
        r = gate.run(run_turn, p, new_shared(question, history=history), on_wait=waiting, session=asker[0],
                     user=asker[1],
                     on_node=(lambda n: events("node", {"node": n})) if events else None,
                     on_text=(lambda t: events("text", {"text": t})) if events else None)
        out = r.to_dict(max_rows=prep.settings.row_cap)
        if r.status == "pending" and r.write:   # a write typed into the question box: decided on /api/writes/{id}
            r.write.proposer_id = user.id if user else ""
            out["write"] = {**out["write"], "approval_token": pending.hold(r.write, prep)}
        if thread:
            try:
                threads.add(key, turn_record(r, question), out)
            except StateError as e:         # the answer stands; the page is told its thread did not keep it
                _log.warning("%s", e)
                out["thread_error"] = StateError.PUBLIC
            except ThreadsFull as e:
                out["thread_error"] = str(e)
        return out

    def thread_key(request: Request) -> tuple[str, str]:
        return user_of(request).id, who(request)[0]

    def wants_thread(raw: bytes) -> bool:
        body = parse_body(raw, '{"question": "..."}')
        return isinstance(body, dict) and body.get("thread") is True

    @app.get("/api/thread")
    def thread_route(request: Request):
        """This session's thread, each turn as the page drew it (a reload draws it again)."""
        return {"turns": threads.shown(thread_key(request))}

    @app.delete("/api/thread")
    def new_thread(request: Request):
        threads.clear(thread_key(request))
        return {"turns": []}

    @app.get("/api/browse")
    def browse_route(request: Request):
        """Suggested questions (only kept pairs this user may run) and the semantic file's metrics, for the page's
        side panel."""
        return {"suggestions": suggestions(scoped(prep, user_of(request))), "metrics": metrics(prep),
                "tables": list(prep.catalog.tables)}

    @app.get("/", include_in_schema=False)
    def page():
        return HTMLResponse(PAGE.read_text(encoding="utf-8"), headers=PAGE_HEADERS)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon():        # none: an empty answer, not a 404 in the browser's console
        return Response(status_code=204)

    @app.get("/static/plotly.min.js", include_in_schema=False)
    def plotly_js():
        try:
            import plotly
        except ImportError:
            return json_error(404, "charts need plotly (pip install 'duckask[server]'); the page works without them")
        return FileResponse(Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
                            media_type="application/javascript")

    def details() -> dict:
        return {"status": "ok", "db": prep.db, "model": prep.llm.name, "queued": gate.queued,
                "writes": bool(prep.settings.allow_writes)}

    @app.get("/api/health")
    def health(request: Request):
        """Up or not, to anyone; the details only to a request with a valid key."""
        return details() if keys and keys.find(given_key(request.headers)) else {"status": "ok"}

    @app.get("/api/info")
    def info():
        return details()

    @app.get("/api/schema")
    def schema():
        return {"tables": list(prep.catalog.tables), "ddl": render_schema(prep.catalog)}

    @app.post("/api/ask")
    async def ask_route(request: Request):
        question, opts = await read_json(request, "question", MAX_QUESTION)
        refuse_write(prep, user_of(request), question, pending)
        thread = wants_thread(await request.body())
        return await in_thread(answer, question, opts, None, who(request), user_of(request), thread)

    @app.post("/api/ask/stream")
    async def ask_stream(request: Request):
        question, opts = await read_json(request, "question", MAX_QUESTION)
        refuse_write(prep, user_of(request), question, pending)
        asker, user, thread = who(request), user_of(request), wants_thread(await request.body())
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()

        def emit(kind: str, data: dict) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, data))

        def work() -> None:
            try:
                emit("result", answer(question, opts, emit, asker, user, thread))
            except HTTPException as e:   # a write the proposer has no room for: said as the routes say it
                emit("error", {"error": str(e.detail)})
            except Exception as e:  # the stream ends with the error instead of a dropped connection
                emit("error", {"error": f"{type(e).__name__}: {e}"})

        async def events() -> AsyncIterator[str]:
            task = asyncio.create_task(in_thread(work))
            while True:
                kind, data = await queue.get()
                yield f"event: {kind}\ndata: {json.dumps(data, default=str)}\n\n"
                if kind in ("result", "error"):
                    break
            await task

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    app.state.prepared = prep    # the server's settings, database and catalog (tests and embedders read them)
    return app


def refuse_write(prep, user, text: str, pending=None) -> None:
    """Before anything runs, when ``text`` asks for a write (typed SQL or a change in words, by the router's
    rules): a 403 when ``user``'s role may not propose one, a 429 when ``user`` already has as many writes
    waiting as ``pending`` (``server_actions.PendingWrites``) holds for one proposer."""
    from starlette.exceptions import HTTPException

    from duckask.utils.db.access import may_propose
    from duckask.utils.dialogue.intent import asks_to_write

    why = may_propose(user)
    full = pending.no_room_for(user.name, user.id) if pending is not None else None
    if (why or full) and asks_to_write(text, prep.catalog):
        raise HTTPException(403, why) if why else HTTPException(429, full)


def serve_command(args, db: str) -> int:
    """``duckask serve``: check the bind, build the app, run uvicorn; exit codes as the CLI's."""
    import os
    import sys

    try:
        import uvicorn
    except ImportError as e:
        print(f"duckask serve: the server extra is missing ({e.name}): pip install 'duckask[server]'", file=sys.stderr)
        return 1
    from duckask.utils.db.access import AccessError, load_users

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
