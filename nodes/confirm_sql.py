"""ConfirmSQL: with ``confirm`` on, show the SQL and wait for yes / no / edit before it runs.

Wired between SQLGenerator (and ErrorFixer's repairs) and SQLExecutor only when the ``confirm``
setting is on; the user's own SQL passes through it always (it runs at once unless ``confirm`` is on).

- yes: run it;
- no, with a comment: the comment goes back to SQLGenerator as feedback on this query ("revise"), or,
  for the user's own SQL, becomes the question to plan from ("replan");
- no, without a comment: nothing runs; status ``declined``;
- edit: the edited SQL runs (it is the user's SQL now: the safety layer checks it like any other).
Someone to ask is the ``confirm`` callback in the Context (the CLI's prompt). Without one
(a notebook, a script), the flow ends with status ``pending`` and the Result's ``approve()``,
``edit(sql)`` and ``reject(comment)`` continue it. At most ``MAX_ROUNDS`` revisions a question.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.turn import KEEP, Turn, ask_again, finish, mark_attempt, restate, set_query, take, tried

MAX_ROUNDS = 5


class ConfirmSQL(TracedNode):
    def prep(self, shared: Turn):
        sql = shared.get("sql_query") or ""
        return {"sql": sql, "drafts": [d for d in shared.get("sql_candidates") or [] if d],
                "needed": self.ctx.settings.confirm and not shared.get("generation_error") and bool(sql),
                "decision": shared.get("decision"),
                "user": shared.get("sql_source") == "user", "rounds": shared.get("confirm_rounds", 0),
                "has_schema": bool(shared.get("table_schemas"))}

    def exec(self, p):
        if not p["needed"]:
            return {"decision": "yes"}
        decision = p["decision"]
        if decision is None:
            if self.ctx.confirm is None:
                return {"decision": "pending"}
            decision = self.ctx.confirm(p["sql"], p["drafts"]) or {"decision": "no"}
        kind = str(decision.get("decision", "no")).lower()
        if kind in ("edit", "e") and (decision.get("sql") or "").strip():
            return {"decision": "edit", "sql": decision["sql"].strip().rstrip(";")}
        if kind in ("yes", "y", "run", "ok"):
            return {"decision": "yes"}
        comment = (decision.get("comment") or "").strip()
        if comment and p["rounds"] < MAX_ROUNDS:
            return {"decision": "no", "comment": comment}
        return {"decision": "declined"}

    def post(self, shared: Turn, p, res):
        kind = res["decision"]
        take(shared, "decision")  # a decision handed in by the Result is used once
        shared.setdefault("confirmations", []).append({"sql": p["sql"], **res})
        if kind == "yes":
            return "run"
        if kind == "edit":
            set_query(shared, res["sql"], "user")
            tried(shared, res["sql"], source="user edit", after="confirm")
            return "run"
        if kind == "pending":
            finish(shared, "pending", "Waiting for your approval before running this SQL (approve, edit or reject it).")
            return None
        if kind == "declined":
            finish(shared, "declined", "Not run: you declined the query.")
            return None
        shared["confirm_rounds"] = p["rounds"] + 1
        ask_again(shared, {"kind": "user", "sql": p["sql"], "message": res["comment"]})
        mark_attempt(shared, status="declined", error=f"declined by the user: {res['comment']}")
        if p["user"] or not p["has_schema"]:       # the comment is the question now; the next query is the model's
            restate(shared, res["comment"], resolved=res["comment"])
            set_query(shared, p["sql"], None, candidates=KEEP)
            return "replan"
        return "revise"
