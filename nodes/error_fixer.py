"""ErrorFixer: decide what to do about a failed query (no LLM call of its own).

- "repaired": DuckDB's error names the fix unambiguously (a misspelt column or table with one close
  candidate, a column missing from GROUP BY): apply it and run again. Free, and capped.
- "retry": send the error back to SQLGenerator as feedback for a corrected query.
- "give_up": the retry budget (``max_fix_retries``) is spent; ReportError says what was tried.
"""
from __future__ import annotations

import re

from duckask.nodes._base import TracedNode
from duckask.utils.schema import fold
from duckask.utils.sql_text import repair, tidy_sql

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


_MISSING_COL = re.compile(r'(?:column named|Referenced column) "([^"]+)"')


def column_hint(error: str, columns: dict[str, set[str]], tables: dict[str, str]) -> str:
    """Where a column the error could not find really is, from the catalog."""
    m = _MISSING_COL.search(error or "")
    if not m:
        return ""
    col = m.group(1).split(".")[-1]
    owners = [tables[t] for t, cols in columns.items() if col.lower() in cols]
    if owners:
        return f" Note: column {col} belongs to table {', '.join(owners)}."
    return f" Note: no table has a column {col}; use only columns shown in the schema."


_CONVERSION = re.compile(r"Could not convert string '([^']+)' to (\w+)")


def value_hint(error: str, cat) -> str:
    """For "could not convert 'United Airlines' to INT32": where that text really is stored."""
    m = _CONVERSION.search(error or "")
    if not m:
        return ""
    where = {f"{t}.{c}" for t, c, _ in cat.values.get(fold(m.group(1)), [])}
    if where:
        return (f" Note: '{m.group(1)}' is stored in {', '.join(sorted(where)[:3])}; compare it there "
                f"(join that table) instead of with a {m.group(2)} column.")
    return f" Note: '{m.group(1)}' is text; do not compare it with a {m.group(2)} column."


class ErrorFixer(TracedNode):
    def prep(self, shared):
        return {"sql": shared.get("sql_query") or "", "error": shared.get("execution_error") or "",
                "question": shared["question"],
                "retries": shared.get("retry_count", 0), "repairs": shared.get("repair_count", 0),
                "tried": [a["sql"] for a in shared.get("attempts", [])],
                "max": self.ctx.settings.max_fix_retries,
                "resample": self.can_resample(shared)}

    def exec(self, p):
        cat = self.ctx.catalog
        columns = cat.column_sets()
        if p["sql"] and p["repairs"] < MAX_REPAIRS:
            # While a resample is still to come, only the fixes DuckDB's message names: joining a
            # forgotten table (foreign keys) is then left to the vote, where SQLExecutor applies it
            # to this query and to every draft (measured: the drafts sometimes know better, e.g.
            # pet_age where the join would read the student's Age; docs/benchmarks.md).
            fixed = repair(p["sql"], p["error"], columns, None if p["resample"] else cat.foreign_links())
            if fixed:
                # Moving a column to the alias that has it can turn "T1.a = T2.a" into "T1.a = T1.a".
                fixed = tidy_sql(fixed, cat, p["question"])
            if fixed and fixed not in p["tried"]:
                return {"action": "repaired", "sql": fixed}
        if p["resample"] and p["sql"]:
            # Fresh samples of the first prompt before any retry that shows the model its error.
            return {"action": "resample"}
        if p["retries"] >= p["max"]:
            return {"action": "give_up"}
        hint = column_hint(p["error"], columns, {t.lower(): t for t in cat.tables}) + value_hint(p["error"], cat)
        return {"action": "retry", "message": error_summary(p["error"]) + hint}

    def post(self, shared, p, res):
        act = res["action"]
        if act == "repaired":
            shared["repair_count"] = p["repairs"] + 1
            shared["sql_query"] = res["sql"]
            shared["attempts"].append({"sql": res["sql"], "source": "repair", "after": "error"})
        elif act == "resample":
            shared["resample"] = True
        elif act == "retry":
            shared["retry_count"] = p["retries"] + 1
            shared["feedback"] = {"kind": "error", "sql": p["sql"], "message": res["message"]}
        return act
