"""ReviewWrite: the user's own statement that would change the database waits here for a yes.

IntentRouter sends the user's SQL here when DuckDB's parser reads a statement other than SELECT
(``given_sql`` or pasted). ``writes.propose`` classifies it (T1 data change, T2 schema change, T3
always blocked), checks it, estimates the rows and explains it, and records the attempt in the audit
log; the *card* (SQL, explanation, estimated rows) is what the user approves:

- blocked (T3, writes off, a database that cannot take writes, reads of files or settings): ends;
- yes (only an explicit yes: ``Result.approve()``, "yes" typed on a terminal, Approve on the page):
  ApplyWrite runs it;
- edit: the edited statement is proposed again and waits again (the first one is recorded rejected);
- anything else: rejected, recorded, nothing runs.
Who says yes is the ``approve_write`` callback in the Context (a terminal card); without one the flow
ends with status ``pending`` and the Result's ``approve()`` / ``reject()`` continue it.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.state import writes
from duckask.utils.turn import KEEP, Turn, finish, set_query, take, tried
from duckask.utils.turn import card as card_of


class ReviewWrite(TracedNode):
    def prep(self, shared: Turn):
        return {"sql": shared.get("sql_query") or "", "card": shared.get("write"), "decision": shared.get("decision"),
                "request": shared.get("change_request") if shared.get("sql_source") == "model" else None,
                "model_says": shared.get("change_explanation")}

    def exec(self, p):
        card = p["card"]
        if card is None or card.sql != p["sql"]:
            card = writes.propose(p["sql"], self.ctx.db, self.ctx.settings, session=self.ctx.session,
                                  user=self.ctx.user, request=p["request"])
            card.model_says = p["model_says"] if p["request"] else None
        if card.decision != "pending":
            return {"card": card, "action": "blocked"}
        decision = p["decision"]
        if decision is None:
            if self.ctx.approve_write is None:
                return {"card": card, "action": "pending"}
            decision = self.ctx.approve_write(card) or {"decision": "no"}
        kind = str(decision.get("decision", "no")).lower()
        if kind == "yes":
            return {"card": card, "action": "approved"}
        edited = kind == "edit" and (decision.get("sql") or "").strip()
        writes.reject(card, self.ctx.settings, reason="edited" if edited else (decision.get("comment") or None))
        if kind == "edit" and (decision.get("sql") or "").strip():
            return {"card": card, "action": "edit", "sql": decision["sql"].strip().rstrip(";")}
        return {"card": card, "action": "rejected"}

    def trace_detail(self, shared: Turn):
        card = shared.get("write")
        return {"tier": card.tier, "decision": card.decision} if card else {"tier": None, "decision": None}

    def post(self, shared: Turn, p, res):
        take(shared, "decision")          # a decision handed in by the Result is used once
        card, action = res["card"], res["action"]
        card_of(shared, card)
        if action == "approved":
            return "approved"
        if action == "edit":
            set_query(shared, res["sql"], candidates=KEEP)
            card_of(shared, None)
            tried(shared, res["sql"], source="user edit", after="review")
            return "edit"
        if action == "pending":
            finish(shared, "pending", f"Waiting for your approval: {card.explanation} Approve or reject it; "
                                      "nothing has changed yet.")
            return None
        finish(shared, "blocked" if action == "blocked" else "rejected", card.summary())
        return None
