"""``duckask serve``'s routes that act: your SQL (a read, or a write that waits for approval), write
decisions, kept pairs, downloads and email: each a named function on ``router``, which ``create_app`` includes; each
reads the server's ``Served`` (``server_context``). Imported by ``create_app`` alone (FastAPI is the ``server``
extra's).

- ``POST /api/sql`` ``{"sql"}``: a read runs through the safe executor as before; any other statement
  is *proposed* (``state.writes.propose``: tier, estimate, explanation, audit entry) and comes back as
  ``{"status": "pending", "write": card}`` (the card with its one-time ``approval_token``), or a 400
  ``{"error": reason, "write": card}`` when it is blocked (T3, writes off: ``duckask serve --allow-writes``
  turns them on), or a 429 when its proposer already has ``MAX_PENDING_PER_PROPOSER`` writes waiting;
- ``GET /api/writes``: the pending writes this user may see (an approver: all; others: their own), never
  their tokens;
- ``POST /api/writes/{id}`` ``{"decision": "approve" | "reject", "approval_token"}``: the only way a
  pending write runs. With users (``access``), an approver decides (four-eyes: not their own T2), anyone
  may reject their own. On an open server (no keys) a decision needs the page that proposed it: the same
  ``X-Duckask-Session``, the card's ``approval_token`` (handed out once, with the card; only its sha256 is
  kept) and a request the browser marks as the server's own page (``server_guards.same_origin_request``).
  Else a 403 with the reason; anything else is a 400, an unknown, decided or expired id a 404;
- ``POST /api/examples`` ``{"question", "sql"}``: keep a checked answer as a pair (``knowledge.keep``: the SQL must
  run and return rows; an approver or admin keeps it, a proposer's waits as a suggestion, a reader gets a 403;
  on a server without keys only from this server's own page); ``GET /api/examples/suggested``: the suggestions
  waiting (an approver: all; others: their own); ``POST /api/examples/suggested/{id}`` ``{"decision": "keep" |
  "reject"}``: an approver decides one, once;
- ``POST /api/export`` ``{"sql", "format"}``: the rows as a csv, parquet, json or xlsx download;
- ``POST /api/email`` ``{"to", "sql", "question"?, "answer"?, "format"?}``: the rows mailed (smtp_*).

These routes need ``Content-Type: application/json``: a web page of another site cannot send that
without the browser asking first (CORS), so it cannot make a visitor's browser approve a write or mail
data away (and ``server_guards`` refuses its ``Origin``). Proposals and decisions wait in the same ``Gate``
as questions. Pending cards live in this process (a restart forgets them), or with ``--state`` in the shared
Postgres state every server sees (``app.pending``): at most
``MAX_PENDING_PER_PROPOSER`` per proposer and ``MAX_PENDING`` in all (a proposal past either is refused with
a 429; nobody's card is ever pushed out), each for ``PENDING_TTL_S``: an older one is recorded in the audit
log as ``expired`` (decided by no one) and can no longer be approved.
"""
# No "from __future__ import annotations": FastAPI reads the route functions' annotations.

import logging
from types import SimpleNamespace

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException

from duckask.utils.access.roles import may_decide, may_propose, may_see, owns
from duckask.utils.api.present_sql import outcome_json
from duckask.utils.app.pending import Held
from duckask.utils.app.queue import in_thread
from duckask.utils.app.server_context import served
from duckask.utils.app.server_guards import MAX_BODY, json_error, parse_body, same_origin_request, scoped, user_of, who
from duckask.utils.config import MAX_QUESTION
from duckask.utils.delivery.export import FORMATS, ExportError, frame_bytes
from duckask.utils.delivery.mail import NO_HOST, MailError, recipients, send_result
from duckask.utils.knowledge.examples import ExampleError
from duckask.utils.knowledge.keep import KeepRefused, PairTooLarge, TooManyPairs, keep, listed
from duckask.utils.knowledge.keep import decide as decide_pair
from duckask.utils.writes.audit import AuditError
from duckask.utils.writes.tiers import is_write

router = APIRouter()
MAX_TO = 1000                    # characters of recipients
#: What a refused pair is answered with: not allowed, too large, no room, no such suggestion.
PAIR_STATUS = ((KeepRefused, 403), (PairTooLarge, 413), (TooManyPairs, 429), (LookupError, 404))
_log = logging.getLogger("duckask.serve")


def audit_failure(e: AuditError, status: int | None = None) -> JSONResponse:
    """One public message for a damaged or unreachable audit log (its path and the driver's text only in the
    server's log); ``status`` for a failure that is not the log's (409, already decided)."""
    _log.warning("%s", e)
    return json_error(e.status if e.status != 503 or status is None else status, e.public)


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
    out = await in_thread(scoped(served(request).prep, user_of(request)).run_sql, sql, export=export)
    if not out.ok:
        raise HTTPException(400, out.error or out.status)
    return out


async def propose(request: Request, sql: str):
    """A write typed as SQL, proposed and held for its decision (its card with the one-time approval token)."""
    json_only(request)
    s = served(request)
    session, user = who(request)
    if (why := may_propose(user_of(request))):
        return json_error(403, why)
    await in_thread(s.pending.expire_old, s.prep)
    if (full := await in_thread(s.pending.no_room_for, user, user_of(request).id)):
        return json_error(429, full)
    try:
        card = await in_thread(s.gate.run, scoped(s.prep, user_of(request)).propose, sql, session=session, user=user)
    except AuditError as e:
        return audit_failure(e)
    except ValueError as e:
        return json_error(500, str(e))
    card.proposer_id = user_of(request).id
    if card.decision == "blocked":
        return JSONResponse({"error": card.blocked, "write": card.public()}, status_code=400)
    token = await in_thread(s.pending.hold, card, s.prep)
    return {"status": "pending", "write": {**card.public(), "approval_token": token}}


@router.post("/api/sql")
async def sql_route(request: Request):
    s = served(request)
    sql, _ = await s.read_json(request, "sql", MAX_BODY)
    if is_write(sql):
        return await propose(request, sql)
    out = await in_thread(scoped(s.prep, user_of(request)).run_sql, sql)
    if not out.ok:
        return json_error(400, out.error or out.status)
    return outcome_json(out)


@router.get("/api/writes")
async def pending_route(request: Request):
    s, user = served(request), user_of(request)
    await in_thread(s.pending.expire_old, s.prep)
    cards = await in_thread(lambda: s.pending.cards)
    return {"pending": [c.public() for c in cards.values() if may_see(user, c)]}


def open_server_refusal(held: Held, request: Request, token: object) -> str | None:
    """Why a request may not decide ``held`` on a server without keys, or None: it must come from the page
    that proposed it (its session), from the server's own origin, with the card's approval token."""
    card = held.card
    if card.session != who(request)[0]:
        return (f"write #{card.id} was proposed by another session: only the page or client that proposed it "
                "(its X-Duckask-Session) can approve or reject it")
    if not same_origin_request(request.headers):
        return (f"deciding write #{card.id} on a server without API keys takes its card on this server's own "
                "page: the request must come from that page (Sec-Fetch-Site: same-origin, or an Origin equal "
                "to this server's)")
    if not held.token_matches(token):
        return (f"deciding write #{card.id} needs the approval_token that came with its card (the page sends "
                "it when Approve or Reject is clicked); this one is missing or wrong")
    return None


def keyed_refusal(held: Held, user, decision: str, keys) -> str | None:
    """Why ``user`` may not decide ``held`` on a server with keys (their role, four-eyes), or None."""
    if decision == "reject" and owns(user, held.card):                 # anyone may withdraw their own
        return None
    return may_decide(user, held.card, keys.four_eyes)


@router.post("/api/writes/{write_id}")
async def decide_route(write_id: str, request: Request):
    json_only(request)
    s = served(request)
    shape = ('{"decision": "approve", "approval_token": "..."} or {"decision": "reject", ...}: nothing else '
             'decides a write')
    body = await body_of(request, shape)
    decision = body.get("decision")
    if not isinstance(decision, str) or decision not in ("approve", "reject"):
        raise HTTPException(400, f"send {shape}")
    await in_thread(s.pending.expire_old, s.prep)
    card_id = int(write_id) if write_id.isascii() and write_id.isdigit() else None
    held = await in_thread(s.pending.peek, card_id) if card_id is not None else None
    missing = json_error(404, f"no pending write #{write_id} (it was decided or expired, or the server restarted): "
                          "propose it again")
    if held is None:
        return missing
    user = user_of(request)
    why = open_server_refusal(held, request, body.get("approval_token")) if s.keys is None else \
        keyed_refusal(held, user, decision, s.keys)
    if why:
        return json_error(403, why)
    if card_id is None or await in_thread(s.pending.take, card_id) is None:   # decided meanwhile elsewhere
        return missing
    try:
        card = await in_thread(s.gate.run, s.prep.decide, held.card, decision == "approve", None, user.name)
    except (AuditError, ValueError) as e:
        if held.card.decision == "pending":    # nothing was recorded or run: it can be decided again
            s.pending.put_back(held)
        return audit_failure(e) if isinstance(e, AuditError) else json_error(500, str(e))
    return {"status": card.status, "write": card.public(), "answer": card.summary()}


# -- keeping a checked answer as a pair (the page's Right, and Wrong's fix): a write to the knowledge --------------
def pair_refusal(request: Request) -> str | None:
    """On a server without keys, a pair is kept only from this server's own page (as a write is decided)."""
    if served(request).keys is None and not same_origin_request(request.headers):
        return ("keeping a pair on a server without API keys takes this server's own page (its Right or Wrong "
                "buttons): the request must come from that page; or start the server with users")
    return None


async def pair_outcome(call, *args, **kw):
    """``call`` (``keep`` or ``decide``) in a thread: its ``Kept`` as JSON, or the error with its status."""
    try:
        return (await in_thread(call, *args, **kw)).as_dict()
    except (KeepRefused, PairTooLarge, TooManyPairs, LookupError) as e:
        return json_error(next(code for kind, code in PAIR_STATUS if isinstance(e, kind)), str(e))
    except ExampleError as e:
        if e.public:                          # the store is out of reach: the setting, not its value
            _log.warning("%s", e)
            return json_error(503, e.public)
        return json_error(400, str(e))
    except AuditError as e:
        return audit_failure(e)


@router.post("/api/examples")
async def keep_route(request: Request):
    json_only(request)
    shape = '{"question": "...", "sql": "..."}'
    body = await body_of(request, shape)
    question, sql = body.get("question"), body.get("sql")
    if not (isinstance(question, str) and question.strip() and isinstance(sql, str) and sql.strip()):
        raise HTTPException(422, f"send {shape}: the question and the SQL that answers it right")
    if len(question) > MAX_QUESTION or len(sql) > MAX_BODY:
        raise HTTPException(422, f"the question is limited to {MAX_QUESTION} characters, the SQL to {MAX_BODY}")
    if (why := pair_refusal(request)):
        return json_error(403, why)
    prep, user = served(request).prep, user_of(request)
    return await pair_outcome(keep, scoped(prep, user).database, prep.settings, question, sql, user=user,
                              session=who(request)[0])


@router.get("/api/examples/suggested")
async def suggested_route(request: Request):
    prep, user = served(request).prep, user_of(request)
    try:
        return {"suggested": await in_thread(listed, scoped(prep, user).database, prep.settings, user)}
    except AuditError as e:
        return audit_failure(e)


@router.post("/api/examples/suggested/{entry_id}")
async def decide_pair_route(entry_id: str, request: Request):
    json_only(request)
    body = await body_of(request, '{"decision": "keep"} or {"decision": "reject"}')
    if body.get("decision") not in ("keep", "reject") or not (entry_id.isascii() and entry_id.isdigit()):
        raise HTTPException(400, 'send {"decision": "keep"} or {"decision": "reject"} to '
                                 '/api/examples/suggested/ID')
    if (why := pair_refusal(request)):
        return json_error(403, why)
    prep, user = served(request).prep, user_of(request)
    return await pair_outcome(decide_pair, scoped(prep, user).database, prep.settings, int(entry_id),
                              body["decision"], user=user)


@router.post("/api/export")
async def export_route(request: Request):
    json_only(request)
    sql, _ = await served(request).read_json(request, "sql", MAX_BODY)
    fmt = format_of(await body_of(request))
    out = await read_rows(request, sql, export=True)     # a download holds every row
    try:
        data, media_type = await in_thread(frame_bytes, out.df, fmt)
    except ExportError as e:
        return json_error(400, str(e))
    return Response(data, media_type=media_type,
                    headers={"Content-Disposition": f'attachment; filename="duckask-result.{fmt}"',
                             "X-Duckask-Rows": str(len(out.df)),
                             "X-Duckask-Truncated": "true" if out.truncated else "false"})


@router.post("/api/email")
async def email_route(request: Request):
    json_only(request)
    prep = served(request).prep
    sql, _ = await served(request).read_json(request, "sql", MAX_BODY)
    body = await body_of(request)
    fmt, to = format_of(body), body.get("to")
    if isinstance(to, list) and all(isinstance(t, str) for t in to):
        to = ", ".join(to)
    if not isinstance(to, str) or not to.strip() or len(to) > MAX_TO:
        raise HTTPException(400, 'send "to": the addresses, like "name@example.com" (several: comma-separated)')
    if not prep.settings.smtp_host:
        return json_error(400, str(MailError(NO_HOST)))
    try:
        to_list = recipients(to)
    except MailError as e:
        return json_error(400, str(e))
    out = await read_rows(request, sql)
    text = {k: body[k] if isinstance(body.get(k), str) and body[k].strip() else None
            for k in ("question", "answer")}
    result = SimpleNamespace(question=text["question"] or sql, df=out.df, sql=out.sql, db=prep.db,
                             answer=text["answer"] or f"The query returned {len(out.df)} row(s).")
    try:
        await in_thread(send_result, result, to_list, prep.settings, attachment_format=fmt)
    except ExportError as e:
        return json_error(400, str(e))
    except MailError as e:
        return json_error(502, str(e))
    return {"status": "sent", "to": to_list, "rows": len(out.df), "truncated": out.truncated}
