"""``duckask serve``'s question and page routes, each a named function on ``router`` (``server.py`` lists them all):
``/api/ask``, ``/api/ask/stream``, ``/api/thread``, ``/api/browse``, ``/api/health``, ``/api/info``, ``/api/schema``,
and the page with its script. Each reads the server's ``Served`` (``server_context``); a question becomes a turn
through ``Served.answer`` only. Imported by ``create_app`` alone (FastAPI is the ``server`` extra's)."""
# No "from __future__ import annotations": FastAPI reads the route functions' annotations.

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException

from duckask.utils.app.queue import in_thread
from duckask.utils.app.server_context import served
from duckask.utils.app.server_guards import given_key, json_error, parse_body, scoped, user_of, who
from duckask.utils.config import MAX_QUESTION  # the one limit, which every surface checks

router = APIRouter()

#: The web page: plain HTML, CSS and JavaScript, no build step; plotly.js comes from the plotly package.
PAGE = Path(__file__).resolve().parent / "static" / "index.html"
#: The page's own headers: no other site may frame it (a click on Approve is the page's own), and it runs
#: only its own scripts (plotly.js included: served from this origin, never a CDN).
PAGE_HEADERS = {"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff",
                "Content-Security-Policy": "default-src 'self'; script-src 'self' 'unsafe-inline'; "
                                           "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
                                           "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"}


def refuse_write(prep, user, text: str, pending=None) -> None:
    """Before anything runs, when ``text`` asks for a write (typed SQL or a change in words, by the router's
    rules): a 403 when ``user``'s role may not propose one, a 429 when ``user`` already has as many writes
    waiting as ``pending`` (``pending.PendingWrites``) holds for one proposer."""
    from duckask.utils.access.roles import may_propose
    from duckask.utils.dialogue.intent import asks_to_write

    why = may_propose(user)
    full = pending.no_room_for(user.name, user.id) if pending is not None else None
    if (why or full) and asks_to_write(text, prep.catalog):
        raise HTTPException(403, why) if why else HTTPException(429, full)


async def _question(request: Request) -> tuple[str, dict, bool]:
    """The question, its options and whether it joins the session's thread; a write the asker may not propose
    is refused before anything runs."""
    s = served(request)
    question, opts = await s.read_json(request, "question", MAX_QUESTION)
    refuse_write(s.prep, user_of(request), question, s.pending)
    body = parse_body(await request.body(), '{"question": "..."}')
    return question, opts, isinstance(body, dict) and body.get("thread") is True


@router.post("/api/ask")
async def ask_route(request: Request):
    question, opts, thread = await _question(request)
    return await in_thread(served(request).answer, question, opts, None, who(request), user_of(request), thread)


@router.post("/api/ask/stream")
async def ask_stream(request: Request):
    """The answer as server-sent events: ``queued``, ``node``, ``text``, then ``result`` (or ``error``)."""
    question, opts, thread = await _question(request)
    answer, asker, user = served(request).answer, who(request), user_of(request)
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


def _thread_key(request: Request) -> tuple[str, str]:
    return user_of(request).id, who(request)[0]


@router.get("/api/thread")
def thread_route(request: Request):
    """This session's thread, each turn as the page drew it (a reload draws it again)."""
    return {"turns": served(request).threads.shown(_thread_key(request))}


@router.delete("/api/thread")
def new_thread(request: Request):
    served(request).threads.clear(_thread_key(request))
    return {"turns": []}


@router.get("/api/browse")
def browse_route(request: Request):
    """Suggested questions (only kept pairs this user may run) and the semantic file's metrics, for the page's
    side panel."""
    from duckask.utils.app.browse import metrics, suggestions

    prep = served(request).prep
    return {"suggestions": suggestions(scoped(prep, user_of(request))), "metrics": metrics(prep),
            "tables": list(prep.catalog.tables)}


@router.get("/", include_in_schema=False)
def page():
    return HTMLResponse(PAGE.read_text(encoding="utf-8"), headers=PAGE_HEADERS)


@router.get("/favicon.ico", include_in_schema=False)
def favicon():        # none: an empty answer, not a 404 in the browser's console
    return Response(status_code=204)


@router.get("/static/plotly.min.js", include_in_schema=False)
def plotly_js():
    try:
        import plotly
    except ImportError:
        return json_error(404, "charts need plotly (pip install 'duckask[server]'); the page works without them")
    return FileResponse(Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
                        media_type="application/javascript")


def _details(request: Request) -> dict:
    s = served(request)
    return {"status": "ok", "db": s.prep.db, "model": s.prep.llm.name, "queued": s.gate.queued,
            "writes": bool(s.prep.settings.allow_writes)}


@router.get("/api/health")
def health(request: Request):
    """Up or not, to anyone; the details only to a request with a valid key."""
    keys = served(request).keys
    return _details(request) if keys and keys.find(given_key(request.headers)) else {"status": "ok"}


@router.get("/api/info")
def info(request: Request):
    return _details(request)


@router.get("/api/schema")
def schema(request: Request):
    from duckask.utils.schema.ddl import render_schema

    catalog = served(request).prep.catalog
    return {"tables": list(catalog.tables), "ddl": render_schema(catalog)}
