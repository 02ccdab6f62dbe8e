"""The write card: what a proposed write is, what it will do, and what became of it. One type passed
between the write path (``state.writes``), the nodes (ReviewWrite, ApplyWrite), the surfaces that show it for
approval and the server that holds it until it is decided; ``public()`` is its JSON.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass
class WriteCard:
    sql: str                                 # the one statement that will run
    tier: int                                # 1 data change, 2 schema change, 3 blocked
    tier_name: str
    kind: str                                # INSERT, UPDATE, DELETE, CREATE TABLE, ...
    target: str | None                       # the table (or view, index) it writes
    reason: str                              # why this tier
    db: str                                  # the database as the user named it
    session: str
    user: str
    checks_rows: bool                        # whether its row count is estimated and checked
    estimated_rows: int | None = None
    matched_rows: int | None = None          # join matches, when other tables join in and there are more
    explanation: str = ""
    blocked: str | None = None               # why it may never run (then decision is "blocked")
    decision: str = "pending"                # pending | blocked | approved | rejected | expired (no one decided)
    outcome: str | None = None               # committed | rolled_back | error | not_run
    actual_rows: int | None = None
    detail: str | None = None                # why it was rejected, rolled back or failed
    id: int | None = None                    # the audit entry
    request: str | None = None               # the plain-English request the model proposed this from
    proposed_by: str = "user"                # user (typed SQL) | model (from a request)
    model_says: str | None = None            # the model's one-line explanation of its statement
    decided_by: str | None = None            # who approved or rejected it
    db_id: str = ""                          # the database file's identity (``database.file_identity``)
    proposer_id: str = ""                    # the proposer's identity (``access.User.id``: from the key's hash)
    runs: list[str] = field(default_factory=list)   # every write it runs ("INSERT on teams"): one, or none if blocked

    @property
    def owner(self) -> str:
        """Whose card this is, for caps and ownership: the proposer's identity, else (no key) their name."""
        return self.proposer_id or self.user

    @classmethod
    def of(cls, c, sql: str, **fields: Any) -> WriteCard:
        """The card of a classified statement (``tiers.Classification``): its tier, kind, target and whether
        its rows are checked, plus ``fields`` (db, session, user, ...)."""
        from duckask.utils.writes.plan import checks_rows

        return cls(sql=c.statement or sql.strip(), tier=c.tier, tier_name=c.tier_name, kind=c.kind, target=c.target,
                   reason=c.reason, checks_rows=c.tier < 3 and checks_rows(c), runs=c.runs, **fields)

    @classmethod
    def from_entry(cls, entry: dict[str, Any], db: str) -> WriteCard:
        """The card of an audit entry (a write proposed by another process: an agent, a server), its tier and
        checks read again from its SQL, its estimate as recorded."""
        from duckask.utils.writes.tiers import classify

        card = cls.of(classify(entry["sql"]), entry["sql"], db=db, session=entry["session"], user=entry["user"],
                      estimated_rows=entry["estimated_rows"], explanation=entry["explanation"] or "",
                      decision=entry["decision"], outcome=entry["outcome"], id=entry["id"],
                      request=entry.get("request"), proposed_by=entry.get("proposed_by") or "user")
        card.sql = entry["sql"]              # exactly what was recorded and would run
        return card

    def public(self) -> dict[str, Any]:
        """The card as JSON (the server's, ``--json``'s, the page's): not the identities the state keeps (a
        file's inode, a key's derived id)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if k not in ("db_id", "proposer_id")}

    @property
    def status(self) -> str:
        """What became of the write, as a Result's status: pending, blocked, rejected, expired, written,
        rolled_back, error."""
        if self.decision in ("pending", "blocked", "rejected", "expired"):
            return self.decision
        return {"committed": "written", "rolled_back": "rolled_back"}.get(self.outcome or "", "error")

    def summary(self) -> str:
        """One line for the user: what happened to the write."""
        if self.decision == "blocked":
            proposed = f"For {self.request!r} the statement would be: {' '.join(self.sql.split())}. " \
                if self.request else ""
            return f"{proposed}Not written: {self.blocked}."
        if self.decision == "rejected":
            return f"Not written: {self.detail or 'you rejected it'}. Audit entry #{self.id}."
        if self.outcome == "committed":
            rows = f": {self.actual_rows:,} row(s) (estimated {self.estimated_rows:,})" if self.checks_rows else ""
            return f"Done ({self.kind} on {self.target}){rows}. Audit entry #{self.id}."
        return f"Not written: {self.detail}. Audit entry #{self.id}."

    def text(self) -> str:
        """The approval card as plain text (the same fields the page's card shows), every control and bidi
        character escaped (``audit.printable``): a request or statement an agent wrote cannot drive the
        terminal of the person deciding it."""
        from duckask.utils.writes.audit import printable as p

        rows = self.estimated_rows
        estimate = "not applicable (schema only)" if not self.checks_rows else \
            ("unknown" if rows is None else f"{rows:,}")
        asked = [f"asked:          {p(self.request)} (the model proposed the SQL)"] if self.request else []
        asked += [f"model says:     {p(self.model_says)}"] if self.model_says else []
        return "\n".join([
            f"── write: {self.tier_name} ({self.kind}{' on ' + p(self.target) if self.target else ''}) ──",
            *asked,
            f"SQL:            {p(' '.join(self.sql.split()))}",
            f"runs:           {p('; '.join(self.runs) or 'nothing (blocked)')}",
            f"what it does:   {p(self.explanation)}",
            f"estimated rows: {estimate}",
            f"audit entry:    #{self.id}",
        ])
