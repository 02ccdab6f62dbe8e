"""ReportError: end the flow with a clear report of what was tried, when no query succeeded.

If an earlier attempt did produce an answer (e.g. the grader asked for a retry and the retry
failed), that answer is kept and the report becomes a warning.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.sql.errors import error_summary
from duckask.utils.turn import KEEP, Turn, finish, grade, set_query, show_rows


class ReportError(TracedNode):
    def prep(self, shared: Turn):
        return {"attempts": list(shared.get("attempts", [])), "best": shared.get("best"),
                "budget": shared.get("budget_stop")}

    def exec(self, p):
        lines = [f"Could not answer: {len(p['attempts'])} quer{'y' if len(p['attempts']) == 1 else 'ies'} tried."]
        for i, a in enumerate(p["attempts"], 1):
            sql = " ".join((a.get("sql") or "(no SQL)").split())
            err = error_summary(a.get("error") or "")
            status = a.get("status", "not run")
            if err.startswith(status + ":"):
                err = err[len(status) + 1:].strip()
            lines.append(f"{i}. [{a.get('source')}] {sql[:300]}\n   -> {status}: {err}")
        if p["budget"]:
            lines.append(f"Stopped at the time budget after {p['budget']['after_s']:g} s, before "
                         f"{p['budget']['instead_of']} (the time_budget_s setting).")
        return "\n".join(lines)

    def post(self, shared: Turn, p, report):
        best = p["best"]
        if best:
            set_query(shared, best["sql"], candidates=KEEP)
            show_rows(shared, best["df"], best["truncated"])
            finish(shared, "answered", best["answer"], best["derivation"])
            grade(shared, "fail", "A retry after the grader's critique failed; this is the earlier answer.\n" + report)
        else:
            finish(shared, "error", report)
        return None
