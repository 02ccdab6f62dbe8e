"""ErrorFixer: decide what to do about a failed query (no LLM call of its own).

- "repaired": DuckDB's error names the fix unambiguously (a misspelt column or table with one close
  candidate, a column missing from GROUP BY): apply it and run again. Free, and capped.
- "retry": send the error back to SQLGenerator as feedback for a corrected query.
- "give_up": the retry budget (``max_fix_retries``) is spent, or the SQL is the user's own (it gets the
  free repairs only); ReportError says what was tried.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.sql.drafts import repair
from duckask.utils.sql.errors import column_hint, error_summary, value_hint
from duckask.utils.sql.facts import SchemaFacts
from duckask.utils.turn import KEEP, Turn, ask_again, set_query, tried

MAX_REPAIRS = 3


class ErrorFixer(TracedNode):
    def prep(self, shared: Turn):
        return {"sql": shared.get("sql_query") or "", "error": shared.get("execution_error") or "",
                "question": shared["question"],
                "retries": shared.get("retry_count", 0), "repairs": shared.get("repair_count", 0),
                "tried": [a["sql"] for a in shared.get("attempts", [])],
                "max": self.ctx.settings.max_fix_retries,
                "resample": self.can_resample(shared), "user": shared.get("sql_source") == "user",
                "over": self.over_budget()}

    def exec(self, p):
        cat = self.ctx.catalog
        facts = SchemaFacts.of(cat, links=not p["resample"])
        if p["sql"] and p["repairs"] < MAX_REPAIRS:
            # While a resample is still to come, only the fixes DuckDB's message names: joining a
            # forgotten table (foreign keys) is then left to the vote, where SQLExecutor applies it
            # to this query and to every draft (measured: the drafts sometimes know better, e.g.
            # pet_age where the join would read the student's Age; docs/benchmarks.md).
            fixed = repair(p["sql"], p["error"], cat, p["question"], facts)   # tidied (sql.drafts)
            if fixed and fixed not in p["tried"]:
                return {"action": "repaired", "sql": fixed}
        if p["user"]:
            return {"action": "give_up"}  # the user's own SQL: the model does not rewrite it unasked
        if p["over"]:
            return {"action": "give_up", "budget": True}   # the time budget is spent: no resample or retry
        if p["resample"] and p["sql"]:
            # Fresh samples of the first prompt before any retry that shows the model its error.
            return {"action": "resample"}
        if p["retries"] >= p["max"]:
            return {"action": "give_up"}
        tables = {t.lower(): t for t in cat.tables}
        hint = column_hint(p["error"], facts.columns, tables) + value_hint(p["error"], cat.values)
        return {"action": "retry", "message": error_summary(p["error"]) + hint}

    def post(self, shared: Turn, p, res):
        act = res["action"]
        if res.get("budget"):
            self.stop_for_budget(shared, "a resample or retry after the error")
        if act == "repaired":
            shared["repair_count"] = p["repairs"] + 1
            set_query(shared, res["sql"], candidates=KEEP)
            tried(shared, res["sql"], source="repair", after="error")
        elif act == "resample":
            ask_again(shared, resample=True)
        elif act == "retry":
            shared["retry_count"] = p["retries"] + 1
            ask_again(shared, {"kind": "error", "sql": p["sql"], "message": res["message"]})
        return act
