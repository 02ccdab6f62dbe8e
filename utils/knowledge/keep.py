"""Keeping a pair is a write to the knowledge (issue 45): who may keep, who may only suggest, and the audit of both.

``keep(database, settings, question, sql, user=...)`` verifies the pair (it runs through the safe executor, as the
one asking, and returns rows) and then, by the asker's role (``db.access``):

- no users (the CLI, a notebook, an open server) or an approver or admin: the pair is kept (the knowledge store,
  local or the shared state: every server on that state answers from it at its next question) and the audit log
  gets an entry ``kind: example``, ``decision: approved``, ``outcome: committed`` naming who kept it;
- a proposer: a suggestion, an audit entry ``decision: pending`` that an approver keeps or rejects
  (``decide``); nothing is kept until then;
- a reader: refused (``KeepRefused``), nothing written.

``suggestions(database, settings)`` lists the pending ones; ``decide(database, settings, entry_id, "keep" |
"reject", user=...)`` closes one, once (the audit's update is written only over ``pending``, on either store).
"""
from __future__ import annotations

from dataclasses import dataclass

from duckask.utils.knowledge.examples import Example, ExampleError, verify

KIND = "example"


class KeepRefused(PermissionError):
    """The asker's role does not allow this (the message names the role needed)."""


@dataclass
class Kept:
    status: str                 # kept | suggested | rejected
    question: str
    sql: str
    audit_id: int
    example: Example | None = None   # the stored pair (with its id) once kept

    def as_dict(self) -> dict:
        return {"status": self.status, "question": self.question, "sql": self.sql, "audit_id": self.audit_id,
                "example_id": self.example.id if self.example else None}


def _who(user) -> str:
    from duckask.utils.db.audit import os_user

    return user.name if user is not None else os_user()


def _log(settings):
    from duckask.utils.state import audit_log

    return audit_log(settings)


def _store(database, settings, ex: Example) -> Example:
    from duckask.utils.knowledge.store import database_identity
    from duckask.utils.state import knowledge_store

    ex.id = str(knowledge_store(settings).add(database_identity(database.source), ex))
    return ex


def keep(database, settings, question: str, sql: str, *, user=None, session: str | None = None) -> Kept:
    """Keep (or, for a proposer, suggest) a verified pair; ``ExampleError`` when it does not run or finds nothing,
    ``KeepRefused`` for a reader. ``database`` runs the SQL (a user's scoped database checks their tables)."""
    from duckask.utils.db.audit import _now, database_key

    if user is not None and not user.at_least("proposer"):
        raise KeepRefused(f"{user.name} is a {user.role}: keeping an answer needs proposer (to suggest it) or "
                          "approver (to keep it)")
    ex = verify(database, question, sql)
    keeps = user is None or user.at_least("approver")
    fields = {"db": database_key(database.source), "kind": KIND, "sql": ex.sql, "request": ex.question,
              "user": _who(user), "session": session or "local", "proposed_by": "user", "tier": 0}
    log = _log(settings)
    if not keeps:
        return Kept("suggested", ex.question, ex.sql, log.record(**fields, decision="pending"))
    entry = log.record(**fields, decision="approved", decided_at=_now(), decided_by=_who(user))
    ex = _store(database, settings, ex)
    log.update(entry, outcome="committed", finished_at=_now(), detail=f"kept as pair #{ex.id}")
    return Kept("kept", ex.question, ex.sql, entry, ex)


def suggestions(database, settings) -> list[dict]:
    """The pairs proposers suggested that wait for an approver, newest first (audit entries)."""
    from duckask.utils.db.audit import database_key

    return [e for e in _log(settings).entries(database_key(database.source))
            if e["kind"] == KIND and e["decision"] == "pending"]


def decide(database, settings, entry_id: int, decision: str, *, user=None) -> Kept:
    """An approver keeps or rejects suggestion ``entry_id``; its SQL is verified again before it is kept."""
    from duckask.utils.db.audit import AuditError, _now

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
    try:
        ex = verify(database, entry["request"], entry["sql"])
    except ExampleError as e:
        log.update(entry["id"], decision="rejected", outcome="not_run", decided_at=_now(), decided_by=_who(user),
                   detail=str(e))
        raise
    log.update(entry["id"], decision="approved", decided_at=_now(), decided_by=_who(user))   # once: AuditError
    ex = _store(database, settings, ex)
    try:
        log.update(entry["id"], outcome="committed", finished_at=_now(), detail=f"kept as pair #{ex.id}")
    except AuditError:
        pass        # kept; the outcome line is the only thing missing, as for a write that died after approval
    return Kept("kept", ex.question, ex.sql, entry["id"], ex)
