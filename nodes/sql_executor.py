"""SQLExecutor: run the query on the locked-down read-only connection (no LLM).

Safety lives in ``duckask.utils.db.database`` and ``duckask.utils.db.safety``: one SELECT/WITH statement
only, no file or network access, locked configuration, a timeout and a row cap. Errors and refusals
become ``execution_error`` and the "error" action; they never raise.

With several drafts (``candidates``, or a resample after a failure), each distinct one runs, a draft
DuckDB rejects gets ErrorFixer's free repairs, and the vote groups them by result and picks the largest group
(ties: the likelier query): running, repairing and voting are ``duckask.utils.sql.drafts``'s. The groups are kept: when
ResponseGrader's checks reject the answer (``candidate_moves``), the next group's result is served
without another run. Only when no draft runs does the first query's error go on to ErrorFixer.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.db.database import QueryOutcome
from duckask.utils.sql.drafts import choose, run_all, tally
from duckask.utils.sql.voting import Candidates
from duckask.utils.turn import GIVE_UP, KEEP, Turn, answered_by, fall_back, mark_attempt, set_query, show_rows, take


class SQLExecutor(TracedNode):
    def prep(self, shared: Turn):
        sql = shared.get("sql_query") or ""
        # Drafts belong to this query only straight after SQLGenerator (post() consumes them, so a
        # query ErrorFixer repaired runs on its own).
        drafts = shared.get("sql_candidates") or [sql]
        voted = shared["candidates"]
        moved = voted.asked_to_move(len(shared.get("candidate_moves") or []))
        scores = ((shared.get("candidate_scores") or []) + [None] * len(drafts))[:len(drafts)]
        plan = shared.get("plan_sql") if shared.get("sql_candidates") is not None else None
        if plan:            # a plan raced with the SQL path (PlanQuery "both"): its query is one more candidate
            fresh = sql and not shared.get("generation_error")
            drafts, scores = (drafts + [plan["sql"]], scores + [plan["logprob"]]) if fresh else \
                ([plan["sql"]], [plan["logprob"]])
            sql = sql if fresh else plan["sql"]
        return {"sql": sql, "drafts": drafts, "generation_error": None if plan else shared.get("generation_error"),
                "question": shared["question"], "scores": scores, "plan": plan["sql"] if plan else None,
                "raced": (shared.get("plan") or {}).get("raced"),
                "next": voted.next_group() if moved else None, "voted": voted}

    def exec(self, p):
        if p["next"] is not None:       # the grader rejected the chosen group: the next one, already run
            return p["voted"].groups[p["next"]]["outcome"], None
        if p["generation_error"]:
            return QueryOutcome(sql=p["sql"], status="error", error=p["generation_error"]), []
        if not p["sql"]:
            return QueryOutcome(sql="", status="error", error="the model produced no SQL query"), []
        # The connection is shared per file: this question's timeout and row cap go with each run (sql.drafts).
        db, s, cat = self.ctx.db, self.ctx.settings, self.ctx.catalog
        distinct, counts, likely = tally(p["drafts"], p["scores"], p["sql"])
        if len(counts) <= 1 and not p["plan"]:   # one query: a PIVOT without its values listed gets them (sql.pivot)
            return run_all(db, s, [p["sql"]], cat, p["question"], repairs=False)[0], []
        outs = [o for o in run_all(db, s, distinct, cat, p["question"]) if o]     # no distinct draft is empty
        weights = [counts[d] for d in distinct]
        reviewed = s.rerank == "reviewer" and self.ctx.llm.can_score and not self.over_budget()   # sql/voting.rerank
        v = choose(outs, weights, [likely.get(d) for d in distinct], question=p["question"],
                   review=self._review if reviewed else None)
        ballot = [{"sql": o.sql, "draft": d, "drafts": counts[d], "logprob": likely.get(d), "plan": d == p["plan"],
                   "positions": [j for j, x in enumerate(p["drafts"]) if x == d],
                   "status": o.status, "error": o.error,
                   "rows": None if o.df is None else len(o.df)} for d, o in zip(distinct, outs)]
        # A group holding the plan's query serves it: its derivation says how the answer was made.
        leads = [next((i for i in g if distinct[i] == p["plan"]), g[0]) for g in v.groups]
        groups = [{"members": g, "lead": i, "sql": outs[i].sql, "outcome": outs[i], "plan": distinct[i] == p["plan"]}
                  for g, i in zip(v.groups, leads)]
        return outs[leads[0] if leads else v.chosen], Candidates(tuple(ballot), tuple(groups))

    def _review(self, messages, question) -> float:
        """The reviewer's summed log-probability of ``question`` read back from a group's query and result."""
        r = self.ctx.llm.score(messages, question, node="Reviewer")
        return (r.mean_logprob or 0.0) * r.completion_tokens

    def post(self, shared: Turn, p, res):
        out, voted = res
        take(shared, "sql_candidates")
        moves = len(shared.get("candidate_moves") or [])
        if voted or p["next"] is not None:     # a fresh vote serves its first group; a move, the next one
            shared["candidates"] = (voted or p["voted"]).serve(0 if voted else p["next"], moves)
            mark_attempt(shared, sql=out.sql)
        else:               # one query ran (a repair, a retry): no other groups to move to
            shared["candidates"] = p["voted"].alone()
        if p["raced"]:      # a plan raced with the SQL path: the path is the served query's
            take(shared, "plan_sql")
            served = shared["candidates"].current
            answered_by(shared, "plan" if served.get("plan") or (not voted and out.sql == p["plan"]) else "sql")
        mark_attempt(shared, status=out.status, error=out.error, ms=round(out.ms, 1),
                     **({"engine_sql": out.engine_sql} if out.engine_sql else {}))     # a live source ran it so
        if shared.get("path") in GIVE_UP and not p["raced"] and (not out.ok or out.df is None or len(out.df) == 0):
            # The plan's (or template's) SQL failed or found nothing: the question goes on the SQL path instead.
            why = out.error or f"the {shared['path']}'s query found nothing"
            if self.over_budget():      # no second path past the time budget: the error is reported
                self.stop_for_budget(shared, "the SQL path after the plan")
                fall_back(shared, why, to_sql=False)
                show_rows(shared, None)
                shared["execution_error"] = why
                mark_attempt(shared, error=why)
                return "error"
            fall_back(shared, why)
            return "fallback"
        if out.ok:
            set_query(shared, out.sql, candidates=KEEP)
            show_rows(shared, out.df, out.truncated)
            shared["execution_error"] = None
            return "success"
        show_rows(shared, None)
        shared["execution_error"] = out.error
        return "error"
