"""Keeping a pair is a write to the knowledge (issue 45): who may keep, who may only suggest, and the audit of both.

``keep(database, settings, question, sql, user=...)`` verifies the pair (it runs through the safe executor, as the
one asking, and returns rows) and then, by the asker's role (``access.roles``):

- no users (the CLI, a notebook, an open server) or an approver or admin: the pair is kept (the knowledge store,
  local or the shared state: every server on that state answers from it at its next question) and the audit log
  gets an entry ``kind: example``, ``decision: approved``, ``outcome: committed`` naming who kept it;
- a proposer: a suggestion, an audit entry ``decision: pending`` that an approver keeps or rejects
  (``decide``); nothing is kept until then;
- a reader: refused (``KeepRefused``), nothing written.

``suggestions(database, settings)`` lists the pending ones; ``decide(database, settings, entry_id, "keep" |
"reject", user=...)`` closes one, once (the audit's update is written only over ``pending``, on either store).

Bound like cards and threads (issue 52): every entry names its proposer by identity (``user_id``: the key's, not
the name, so another server's "paul" with another key is another person) and its database by identity (``db_id``:
``store.owner_identity``), the name shown beside it. A pair or suggestion whose question is a kept pair's (any
case) says which pair it replaces, in the suggestion list and in the audit.

Caps (docs/security.md), the same on every surface since every surface keeps through here (the page, ``POST
/api/examples``, MCP ``teach``, ``duckask teach``, ``r.fix``, ``/fix``): a pair's SQL at most ``MAX_PAIR_SQL``
characters and its question ``MAX_PAIR_QUESTION`` (``PairTooLarge``, HTTP 413); at most ``MAX_WAITING_PER_PROPOSER``
suggestions waiting from one proposer and ``MAX_WAITING`` in all on a database, and ``MAX_PAIRS`` kept pairs a
database (``TooManyPairs``, HTTP 429), each counted again and recorded under one lock (``_ROOM``), so concurrent
requests to one server stay within them. A pair in an examples file over the size cap is refused like one that does
not run.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from duckask.utils.knowledge.examples import Example, ExampleError, verify

KIND = "example"
MAX_PAIR_SQL = 8_000              # characters of a kept pair's SQL (a few-shot example is in every similar prompt)
MAX_PAIR_QUESTION = 400           # characters of a kept pair's question (matched against every question)
MAX_WAITING_PER_PROPOSER = 20     # suggestions one proposer may have waiting for an approver
MAX_WAITING = 200                 # suggestions waiting on one database, from everyone
#: Held while a keep or a suggestion counts the room left and records itself (in this process: a server's threads).
_ROOM = threading.RLock()
MAX_PAIRS = 5_000                 # kept pairs a database may hold (a question's matching is bounded per pair)


class PairTooLarge(ExampleError):
    """A pair's SQL or question is over its cap (HTTP 413)."""


class TooManyPairs(ExampleError):
    """Too many suggestions waiting, or pairs kept (HTTP 429)."""


def check_size(question: str, sql: str) -> None:
    """``PairTooLarge`` when the pair is over a cap (checked before anything runs)."""
    if len(sql or "") > MAX_PAIR_SQL:
        raise PairTooLarge(f"the SQL of a kept pair is limited to {MAX_PAIR_SQL:,} characters (this one has "
                           f"{len(sql):,}); keep a shorter query")
    if len(" ".join((question or "").split())) > MAX_PAIR_QUESTION:
        raise PairTooLarge(f"the question of a kept pair is limited to {MAX_PAIR_QUESTION} characters; keep it as a "
                           "user would ask it")


class KeepRefused(PermissionError):
    """The asker's role does not allow this (the message names the role needed)."""


@dataclass
class Kept:
    status: str                 # kept | suggested | rejected
    question: str
    sql: str
    audit_id: int
    example: Example | None = None   # the stored pair (with its id) once kept
    replaces: str | None = None      # the kept pair of the same question it replaces (or would, once kept)

    def as_dict(self) -> dict:
        return {"status": self.status, "question": self.question, "sql": self.sql, "audit_id": self.audit_id,
                "example_id": self.example.id if self.example else None, "replaces": self.replaces}


def _who(user) -> str:
    from duckask.utils.writes.audit import os_user

    return user.name if user is not None else os_user()


def _who_id(user) -> str:
    """The asker's identity (``access.User.id``: the key's; a local user's name)."""
    return user.id if user is not None else f"name:{_who(None)}"


def _log(settings):
    from duckask.utils.state import audit_log

    return audit_log(settings)


def pairs_of(database, settings) -> list[Example]:
    """The pairs kept for ``database`` in the knowledge store (local or shared), by its path and identity."""
    from duckask.utils.knowledge.shared import knowledge_store
    from duckask.utils.knowledge.store import database_identity, owner_identity

    return knowledge_store(settings).list(database_identity(database.source), owner_identity(database))


def replaced(database, settings, question: str) -> str | None:
    """The id of the kept pair a pair of ``question`` would replace (the same question, any case), or None."""
    folded = " ".join(question.split()).lower()
    return next((ex.id for ex in pairs_of(database, settings) if ex.question.lower() == folded), None)


def _store(database, settings, ex: Example) -> Example:
    from duckask.utils.knowledge.shared import knowledge_store
    from duckask.utils.knowledge.store import database_identity, owner_identity

    ex.id = str(knowledge_store(settings).add(database_identity(database.source), ex, owner_identity(database)))
    return ex


def _room(database, settings, user, suggesting: bool, replaces: str | None) -> None:
    """``TooManyPairs`` when the database has no room for one more suggestion or pair."""
    if suggesting:
        waiting = suggestions(database, settings)
        mine = [e for e in waiting if e.get("user_id") == _who_id(user)]
        if len(mine) >= MAX_WAITING_PER_PROPOSER:
            raise TooManyPairs(f"{_who(user)} has {len(mine)} suggestions waiting, the most one proposer may have "
                               f"({MAX_WAITING_PER_PROPOSER}): wait for an approver to decide them")
        if len(waiting) >= MAX_WAITING:
            raise TooManyPairs(f"{len(waiting)} suggestions wait for an approver on this database, the most there may "
                               f"be ({MAX_WAITING}): wait for them to be decided")
    elif replaces is None and len(pairs_of(database, settings)) >= MAX_PAIRS:
        raise TooManyPairs(f"this database holds {MAX_PAIRS:,} kept pairs, the most it may: remove some "
                           "(`duckask examples --remove ID`) before keeping more")


def keep(database, settings, question: str, sql: str, *, user=None, session: str | None = None) -> Kept:
    """Keep (or, for a proposer, suggest) a verified pair; ``ExampleError`` when it does not run or finds nothing
    (``PairTooLarge``, ``TooManyPairs`` over a cap), ``KeepRefused`` for a reader. ``database`` runs the SQL (a
    user's scoped database checks their tables)."""
    from duckask.utils.knowledge.store import owner_identity
    from duckask.utils.writes.audit import _now, database_key

    if user is not None and not user.at_least("proposer"):
        raise KeepRefused(f"{user.name} is a {user.role}: keeping an answer needs proposer (to suggest it) or "
                          "approver (to keep it)")
    check_size(question, sql)
    keeps = user is None or user.at_least("approver")
    _room(database, settings, user, not keeps, replaced(database, settings, question))    # before the SQL runs
    ex = verify(database, question, sql)
    with _ROOM:               # the room counted again and the pair recorded in one step: concurrent keeps stay within
        replaces = replaced(database, settings, question)
        _room(database, settings, user, not keeps, replaces)
        fields = {"db": database_key(database.source), "kind": KIND, "sql": ex.sql, "request": ex.question,
                  "user": _who(user), "session": session or "local", "proposed_by": "user", "tier": 0,
                  "user_id": _who_id(user), "db_id": owner_identity(database),
                  "detail": f"replaces pair #{replaces}" if replaces else None}
        log = _log(settings)
        if not keeps:
            return Kept("suggested", ex.question, ex.sql, log.record(**fields, decision="pending"), replaces=replaces)
        entry = log.record(**fields, decision="approved", decided_at=_now(), decided_by=_who(user))
        ex = _store(database, settings, ex)
    log.update(entry, outcome="committed", finished_at=_now(), detail=_kept_detail(ex.id, replaces))
    return Kept("kept", ex.question, ex.sql, entry, ex, replaces)


def _kept_detail(pair_id, replaces: str | None) -> str:
    return f"kept as pair #{pair_id}" + (f", replacing pair #{replaces}'s SQL" if replaces else "")


def kept_by(database, settings, pair_id: str) -> str | None:
    """Who kept pair ``pair_id`` of ``database`` (its audit entry's approver); None for a pair of a file
    (``file.yaml:3``: its id says where it was taught) or when no entry says (a pair kept before the audit)."""
    from duckask.utils.writes.audit import AuditError, database_key

    if ":" in pair_id:
        return None
    said = re.compile(rf"kept as pair #{re.escape(pair_id)}(,|$)")
    try:
        entries = _log(settings).entries(database_key(database.source))
    except AuditError:
        return None
    return next((e.get("decided_by") or e.get("user") for e in entries
                 if e["kind"] == KIND and e.get("outcome") == "committed" and said.match(e.get("detail") or "")), None)


def suggestions(database, settings) -> list[dict]:
    """The pairs proposers suggested for this database (by identity: not another file at the same path) that wait
    for an approver, newest first (audit entries)."""
    from duckask.utils.knowledge.store import owner_identity
    from duckask.utils.writes.audit import database_key

    me = owner_identity(database)
    return [e for e in _log(settings).entries(database_key(database.source))
            if e["kind"] == KIND and e["decision"] == "pending" and e.get("db_id") in (None, "", me)]


def listed(database, settings, user=None) -> list[dict]:
    """The waiting suggestions ``user`` may see, as the server lists them: an approver sees those whose SQL she may
    run (``database`` is hers: a scoped one refuses the others), a proposer his own (by identity, not name); each
    with the pair it would replace."""
    kept = {ex.question.lower(): ex.id for ex in pairs_of(database, settings)}
    out = []
    for e in suggestions(database, settings):
        mine = e.get("user_id") == _who_id(user) if e.get("user_id") else (user is None or e["user"] == user.name)
        if not (mine or user is None or user.at_least("approver")) or database.refusal(e["sql"]):
            continue
        out.append({"id": e["id"], "question": e["request"], "sql": e["sql"], "by": e["user"],
                    "at": str(e["proposed_at"]), "replaces": kept.get((e["request"] or "").lower())})
    return out


def decide(database, settings, entry_id: int, decision: str, *, user=None) -> Kept:
    """An approver keeps or rejects suggestion ``entry_id``; its SQL is verified again before it is kept."""
    from duckask.utils.writes.audit import AuditError, _now

    if decision not in ("keep", "reject"):
        raise ValueError(f"decision must be keep or reject, not {decision!r}")
    if user is not None and not user.at_least("approver"):
        raise KeepRefused(f"{user.name} is a {user.role}: keeping a suggested pair needs approver")
    entry = next((e for e in suggestions(database, settings) if e["id"] == int(entry_id)), None)
    if entry is None:
        raise LookupError(f"no suggested pair #{entry_id} waits for a decision on this database")
    log = _log(settings)
    if decision == "reject":
        log.update(entry["id"], decision="rejected", outcome="not_run", decided_at=_now(), decided_by=_who(user))
        return Kept("rejected", entry["request"], entry["sql"], entry["id"])
    replaces = replaced(database, settings, entry["request"])
    _room(database, settings, user, False, replaces)      # no room: it still waits, undecided
    try:
        check_size(entry["request"], entry["sql"])
        ex = verify(database, entry["request"], entry["sql"])
    except ExampleError as e:
        log.update(entry["id"], decision="rejected", outcome="not_run", decided_at=_now(), decided_by=_who(user),
                   detail=str(e))
        raise
    log.update(entry["id"], decision="approved", decided_at=_now(), decided_by=_who(user))   # once: AuditError
    ex = _store(database, settings, ex)
    try:
        log.update(entry["id"], outcome="committed", finished_at=_now(), detail=_kept_detail(ex.id, replaces))
    except AuditError:
        pass        # kept; the outcome line is the only thing missing, as for a write that died after approval
    return Kept("kept", ex.question, ex.sql, entry["id"], ex, replaces)
