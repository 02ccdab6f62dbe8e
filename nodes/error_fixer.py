"""ErrorFixer: decide what to do about a failed query (no LLM call of its own).

- "repaired": DuckDB's error names the fix unambiguously (a misspelt column or table with one close
  candidate, a column missing from GROUP BY): apply it and run again. Free, and capped.
- "retry": send the error back to SQLGenerator as feedback for a corrected query.
- "give_up": the retry budget (``max_fix_retries``) is spent; ReportError says what was tried.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.sql_text import repair

MAX_REPAIRS = 3


def error_summary(error: str) -> str:
    """The useful part of a DuckDB error: drop the LINE/caret excerpt."""
    lines = []
    for line in (error or "").splitlines():
        if line.startswith("LINE "):
            break
        if line.strip():
            lines.append(line.strip())
    return " ".join(lines)[:400]


class ErrorFixer(TracedNode):
    def prep(self, shared):
        return {"sql": shared.get("sql_query") or "", "error": shared.get("execution_error") or "",
                "retries": shared.get("retry_count", 0), "repairs": shared.get("repair_count", 0),
                "tried": [a["sql"] for a in shared.get("attempts", [])],
                "max": self.ctx.settings.max_fix_retries}

    def exec(self, p):
        if p["sql"] and p["repairs"] < MAX_REPAIRS:
            fixed = repair(p["sql"], p["error"])
            if fixed and fixed not in p["tried"]:
                return {"action": "repaired", "sql": fixed}
        if p["retries"] >= p["max"]:
            return {"action": "give_up"}
        return {"action": "retry", "message": error_summary(p["error"])}

    def post(self, shared, p, res):
        act = res["action"]
        if act == "repaired":
            shared["repair_count"] = p["repairs"] + 1
            shared["sql_query"] = res["sql"]
            shared["attempts"].append({"sql": res["sql"], "source": "repair", "after": "error"})
        elif act == "retry":
            shared["retry_count"] = p["retries"] + 1
            shared["feedback"] = {"kind": "error", "sql": p["sql"], "message": res["message"]}
        return act
