"""``duckask serve``'s routes that act: your SQL (a read, or a write that waits for approval), write
decisions, downloads and email. ``create_app`` adds them with ``add_action_routes``.

- ``POST /api/sql`` ``{"sql"}``: a read runs through the safe executor as before; any other statement
  is *proposed* (``db.writes.propose``: tier, estimate, explanation, audit entry) and comes back as
  ``{"status": "pending", "write": card}``, or a 400 ``{"error": reason, "write": card}`` when it is
  blocked (T3, writes off: ``duckask serve --allow-writes`` turns them on);
- ``GET /api/writes``: the pending writes this user may see (an approver: all; others: their own);
- ``POST /api/writes/{id}`` ``{"decision": "approve" | "reject"}``: the only way a pending write runs. With
  users (``access``), an approver decides (four-eyes: not their own T2), anyone may reject their own; on an
  open server, the session that proposed it (``X-Duckask-Session``). Else a 403 with the reason; anything
  else is a 400, an unknown or decided id a 404;
- ``POST /api/export`` ``{"sql", "format"}``: the rows as a csv, parquet, json or xlsx download;
- ``POST /api/email`` ``{"to", "sql", "question"?, "answer"?, "format"?}``: the rows mailed (smtp_*).

These routes need ``Content-Type: application/json``: a web page of another site cannot send that
without the browser asking first (CORS), so it cannot make a visitor's browser approve a write or mail
data away. Proposals and decisions wait in the same ``Gate`` as questions. Pending cards live in this
process (at most ``MAX_PENDING``; the oldest is rejected to make room), so a restart forgets them.

Run on its own (the whole server, as ``duckask serve``)::

    python -m duckask.utils.app.server_actions --db PATH [--allow-writes]
"""
# No "from __future__ import annotations": FastAPI reads the route functions' annotations (see server.py).

import threading
from collections import OrderedDict
from types import SimpleNamespace

from duckask.utils.app.queue import in_thread
from duckask.utils.app.server import MAX_BODY, _error, parse_body, scoped, user_of, who
from duckask.utils.db.tiers import is_write
from duckask.utils.db.write_card import WriteCard

MAX_PENDING = 100
MAX_TO = 1000                    # characters of recipients


class PendingWrites:
    """Cards waiting for a decision, by audit id; taking one out is the only way to decide it (once)."""

    def __init__(self, limit: int = MAX_PENDING):
        self.limit = limit
        self.cards: OrderedDict[int, WriteCard] = OrderedDict()
        self.lock = threading.Lock()

    def add(self, card: WriteCard) -> list[WriteCard]:
        """Keep ``card``; returns the oldest cards dropped to stay within the limit (to be rejected)."""
        with self.lock:
            self.cards[card.id] = card
            dropped = []
            while len(self.cards) > self.limit:
                dropped.append(self.cards.popitem(last=False)[1])
            return dropped

    def hold(self, card: WriteCard, prep, gate) -> None:
        """Keep a pending ``card`` for its decision; the oldest beyond the limit are rejected (recorded)."""
        for old in self.add(card):
            reason = f"dropped: more than {self.limit} writes were waiting for a decision on this server"
            gate.run(prep.decide, old, False, reason)

    def take(self, card_id: int) -> WriteCard | None:
        with self.lock:
            return self.cards.pop(card_id, None)


def add_action_routes(app, prep, gate, read_json, *, keys=None) -> PendingWrites:
    """Add ``/api/sql``, ``/api/writes`` (GET: the pending ones this user may see), ``/api/writes/{id}``,
    ``/api/export`` and ``/api/email`` to ``app``; ``keys``: the server's ``access.Users`` (None: open)."""
    from fastapi import Request
    from fastapi.responses import JSONResponse, Response
    from starlette.exceptions import HTTPException

    from duckask.utils.app.present_sql import outcome_json
    from duckask.utils.db.access import may_decide, may_propose, may_see
    from duckask.utils.db.audit import AuditError
    from duckask.utils.delivery.export import FORMATS, ExportError, frame_bytes
    from duckask.utils.delivery.mail import NO_HOST, MailError, recipients, send_result

    pending = PendingWrites()

    def json_only(request: Request) -> None:
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            raise HTTPException(415, "send the body as JSON with Content-Type: application/json")

    async def body_of(request: Request, shape: str = "a JSON object") -> dict:
        body = parse_body(await request.body(), shape)
        if not isinstance(body, dict):
            raise HTTPException(400, f"send {shape}")
        return body

    def format_of(body: dict) -> str:
        fmt = body.get("format") or "csv"
        if not isinstance(fmt, str) or fmt.lower() not in FORMATS:
            raise HTTPException(400, f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
        return fmt.lower()

    async def read_rows(request: Request, sql: str, export: bool = False):
        out = await in_thread(scoped(prep, user_of(request)).run_sql, sql, export=export)
        if not out.ok:
            raise HTTPException(400, out.error or out.status)
        return out

    async def propose(request: Request, sql: str):
        json_only(request)
        session, user = who(request)
        if (why := may_propose(user_of(request))):
            return _error(403, why)
        try:
            card = await in_thread(gate.run, prep.propose, sql, session=session, user=user)
        except (AuditError, ValueError) as e:
            return _error(500, str(e))
        if card.decision == "blocked":
            return JSONResponse({"error": card.blocked, "write": card.public()}, status_code=400)
        await in_thread(pending.hold, card, prep, gate)
        return {"status": "pending", "write": card.public()}

    @app.post("/api/sql")
    async def sql_route(request: Request):
        sql, _ = await read_json(request, "sql", MAX_BODY)
        if is_write(sql):
            return await propose(request, sql)
        out = await in_thread(scoped(prep, user_of(request)).run_sql, sql)
        if not out.ok:
            return _error(400, out.error or out.status)
        return outcome_json(out)

    @app.get("/api/writes")
    async def pending_route(request: Request):
        user = user_of(request)
        return {"pending": [c.public() for c in list(pending.cards.values()) if may_see(user, c)]}

    @app.post("/api/writes/{write_id}")
    async def decide_route(write_id: str, request: Request):
        json_only(request)
        shape = '{"decision": "approve"} or {"decision": "reject"}: nothing else decides a write'
        decision = (await body_of(request, shape)).get("decision")
        if not isinstance(decision, str) or decision not in ("approve", "reject"):
            raise HTTPException(400, f"send {shape}")
        card = pending.take(int(write_id)) if write_id.isascii() and write_id.isdigit() else None
        if card is None:
            return _error(404, f"no pending write #{write_id} (it was decided, or the server restarted): "
                               "propose it again")
        user = user_of(request)
        if keys is None and card.session != who(request)[0]:   # open server: only the page that proposed it
            pending.add(card)
            return _error(403, f"write #{write_id} was proposed by another session: only the page or client that "
                               "proposed it (its X-Duckask-Session) can approve or reject it")
        own_reject = decision == "reject" and card.user == user.name        # anyone may withdraw their own
        why = None if keys is None or own_reject else may_decide(user, card, keys.four_eyes)
        if why:
            pending.add(card)
            return _error(403, why)
        try:
            card = await in_thread(gate.run, prep.decide, card, decision == "approve", None, user.name)
        except AuditError as e:
            if card.decision == "pending":    # nothing was recorded or run: it can be decided again
                pending.add(card)
            return _error(500, str(e))
        return {"status": card.status, "write": card.public(), "answer": card.summary()}

    @app.post("/api/export")
    async def export_route(request: Request):
        json_only(request)
        sql, _ = await read_json(request, "sql", MAX_BODY)
        fmt = format_of(await body_of(request))
        out = await read_rows(request, sql, export=True)     # a download holds every row
        try:
            data, media_type = await in_thread(frame_bytes, out.df, fmt)
        except ExportError as e:
            return _error(400, str(e))
        return Response(data, media_type=media_type,
                        headers={"Content-Disposition": f'attachment; filename="duckask-result.{fmt}"',
                                 "X-Duckask-Rows": str(len(out.df)),
                                 "X-Duckask-Truncated": "true" if out.truncated else "false"})

    @app.post("/api/email")
    async def email_route(request: Request):
        json_only(request)
        sql, _ = await read_json(request, "sql", MAX_BODY)
        body = await body_of(request)
        fmt, to = format_of(body), body.get("to")
        if isinstance(to, list) and all(isinstance(t, str) for t in to):
            to = ", ".join(to)
        if not isinstance(to, str) or not to.strip() or len(to) > MAX_TO:
            raise HTTPException(400, 'send "to": the addresses, like "name@example.com" (several: comma-separated)')
        if not prep.settings.smtp_host:
            return _error(400, str(MailError(NO_HOST)))
        try:
            to_list = recipients(to)
        except MailError as e:
            return _error(400, str(e))
        out = await read_rows(request, sql)
        text = {k: body[k] if isinstance(body.get(k), str) and body[k].strip() else None
                for k in ("question", "answer")}
        result = SimpleNamespace(question=text["question"] or sql, df=out.df, sql=out.sql, db=prep.db,
                                 answer=text["answer"] or f"The query returned {len(out.df)} row(s).")
        try:
            await in_thread(send_result, result, to_list, prep.settings, attachment_format=fmt)
        except ExportError as e:
            return _error(400, str(e))
        except MailError as e:
            return _error(502, str(e))
        return {"status": "sent", "to": to_list, "rows": len(out.df), "truncated": out.truncated}

    app.state.pending_writes = pending
    return pending


def main(argv: list[str] | None = None) -> int:
    """The whole server (these routes included), as ``python -m duckask.utils.app.server``."""
    from duckask.utils.app.server import main as server_main

    return server_main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
