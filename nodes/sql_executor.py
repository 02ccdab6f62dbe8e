"""SQLExecutor: run the query on the locked-down read-only connection (no LLM).

Safety lives in ``duckask.utils.database`` and ``duckask.utils.safety``: one SELECT/WITH statement
only, no file or network access, locked configuration, a timeout and a row cap. Errors and refusals
become ``execution_error`` and the "error" action; they never raise.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.database import QueryOutcome


class SQLExecutor(TracedNode):
    def prep(self, shared):
        return {"sql": shared.get("sql_query") or "", "generation_error": shared.get("generation_error")}

    def exec(self, p):
        if p["generation_error"]:
            return QueryOutcome(sql=p["sql"], status="error", error=p["generation_error"])
        if not p["sql"]:
            return QueryOutcome(sql="", status="error", error="the model produced no SQL query")
        # The connection is shared per file, so this question's timeout and row cap are passed per run.
        s = self.ctx.settings
        return self.ctx.db.run(p["sql"], timeout_s=s.timeout_s, row_cap=s.row_cap)

    def post(self, shared, p, out: QueryOutcome):
        shared["attempts"][-1].update({"status": out.status, "error": out.error, "ms": round(out.ms, 1)})
        if out.ok:
            shared["sql_query"] = out.sql
            shared["query_result"] = out.df
            shared["truncated"] = out.truncated
            shared["execution_error"] = None
            return "success"
        shared["query_result"] = None
        shared["execution_error"] = out.error
        shared["execution_status"] = out.status
        return "error"
