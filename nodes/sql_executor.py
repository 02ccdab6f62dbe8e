"""SQLExecutor: run the query on the locked-down read-only connection (no LLM).

Safety lives in ``duckask.utils.db.database`` and ``duckask.utils.db.safety``: one SELECT/WITH statement
only, no file or network access, locked configuration, a timeout and a row cap. Errors and refusals
become ``execution_error`` and the "error" action; they never raise.

After a resample, SQLGenerator hands over several drafts (the failed query first): each distinct
one runs, a draft DuckDB rejects gets ErrorFixer's free repairs (``run_repaired``: misspelt names,
forgotten joins), and ``duckask.utils.sql.voting`` picks the query whose result most drafts agree on, a
real answer before an empty one. Only when none of them runs does the failed query's error go on to
ErrorFixer.
"""
from __future__ import annotations

from collections import Counter

from duckask.nodes._base import TracedNode
from duckask.utils.db.database import QueryOutcome
from duckask.utils.sql.pivot import run_pivot
from duckask.utils.sql.repair import run_repaired
from duckask.utils.sql.voting import vote


class SQLExecutor(TracedNode):
    def prep(self, shared):
        sql = shared.get("sql_query") or ""
        # Drafts belong to this query only straight after SQLGenerator (post() consumes them, so a
        # query ErrorFixer repaired runs on its own).
        drafts = shared.get("sql_candidates") or [sql]
        return {"sql": sql, "drafts": drafts, "generation_error": shared.get("generation_error"),
                "question": shared["question"]}

    def exec(self, p):
        if p["generation_error"]:
            return QueryOutcome(sql=p["sql"], status="error", error=p["generation_error"]), []
        if not p["sql"]:
            return QueryOutcome(sql="", status="error", error="the model produced no SQL query"), []
        # The connection is shared per file, so this question's timeout and row cap are passed per run.
        s = self.ctx.settings
        counts = Counter(d for d in p["drafts"] if d)

        def run(sql):
            return self.ctx.db.run(sql, timeout_s=s.timeout_s, row_cap=s.row_cap)

        if len(counts) <= 1:
            return run_pivot(run, p["sql"]), []     # a PIVOT without its values listed gets them (sql.pivot)
        distinct = [p["sql"]] + [d for d in counts if d != p["sql"]]

        outs = [run_repaired(run, d, self.ctx.catalog, p["question"]) for d in distinct]
        v = vote(outs, [counts[d] for d in distinct])
        group = next((g for g in v.groups if v.chosen in g), [])
        ballot = [{"sql": o.sql, "draft": d, "drafts": counts[d],
                   "positions": [j for j, x in enumerate(p["drafts"]) if x == d],
                   "status": o.status, "error": o.error,
                   "rows": None if o.df is None else len(o.df), "chosen": i == v.chosen,
                   "agrees": i in group} for i, (d, o) in enumerate(zip(distinct, outs))]
        return outs[v.chosen], ballot

    def post(self, shared, p, res):
        out, ballot = res
        shared["sql_candidates"] = None
        if ballot:
            shared["vote"] = ballot
            shared["attempts"][-1]["sql"] = out.sql
        shared["attempts"][-1].update({"status": out.status, "error": out.error, "ms": round(out.ms, 1)})
        if shared.get("path") == "plan" and (not out.ok or out.df is None or len(out.df) == 0):
            # The plan's SQL failed or found nothing: the question goes on the SQL path instead.
            shared["plan"]["fallback"] = out.error or "the plan's query found nothing"
            shared["path"] = "sql"
            return "fallback"
        if out.ok:
            shared["sql_query"] = out.sql
            shared["query_result"] = out.df
            shared["truncated"] = out.truncated
            shared["execution_error"] = None
            return "success"
        shared["query_result"] = None
        shared["execution_error"] = out.error
        return "error"
