"""AssessConfidence: how sure is this answer? high, medium or low, with the reasons (``utils/trust``).

The signals the run left behind (path, repairs, retries, the candidates' or a resample's vote, the checks
that moved the answer, the result's shape, the grader's verdict, how sure the model was of its query, the
closest example) go through the fitted model. No LLM call, unless drafts are wanted: ``confidence_drafts``
> 0 draws that many sampled drafts of the same prompt (one batch) for every answer and counts those whose
result agrees with it; with ``min_confidence`` set, an answer below it draws ``resample_drafts`` drafts
when none were drawn yet. If the answer is still below the minimum, the result is "unsure": the two
largest groups of candidates with different results (the answer's group first), each with its SQL,
instead of one answer. The user's own SQL is not assessed (it is run as written).
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.sql.drafts import choose, run_all, sample
from duckask.utils.trust.confidence import assess, at_least, unsure_answer
from duckask.utils.trust.grounding import facts_for, grounding
from duckask.utils.trust.signals import collect
from duckask.utils.turn import Turn, finish

SEEDS = 101   # drafts drawn here use seeds 101.. (a resample's are 1..): other samples than a resample's


def _reach(shared) -> dict:
    """CheckAnswerable's untied words: all of them (``missing``) and those naming a thing (``absent``); how a
    template's kept pair was reached (``reach``)."""
    found = shared.get("answerable") or {}
    return {"missing": found.get("missing"), "absent": found.get("absent"),
            "reach": (shared.get("template") or {}).get("reach")}


def _voted(shared) -> list[dict]:
    """The candidates' result groups (SQLExecutor's vote), the answer's first, then by drafts."""
    voted = shared["candidates"]
    ballot = voted.ballot
    out = [{"members": list(range(sum(ballot[i]["drafts"] for i in g["members"] if i < len(ballot)))),
            "sql": g["sql"], "df": g["outcome"].df, "answer": k == voted.at} for k, g in enumerate(voted.groups)]
    return sorted(out, key=lambda g: (not g["answer"], -len(g["members"])))


class AssessConfidence(TracedNode):
    def prep(self, shared: Turn):
        s = self.ctx.settings
        signals = collect(status=(shared.get("answer") or {}).get("status") or "answered", sql=shared.get("sql_query"),
                          df=shared.get("query_result"), attempts=shared.get("attempts", []),
                          vote=list(shared["candidates"].ballot), grades=shared.get("grades", []),
                          truncated=bool(shared.get("truncated")), examples=shared.get("examples"),
                          path=shared.get("path"), intent_by=shared.get("intent_by"),
                          db_tables=len(self.ctx.catalog.tables) if self.ctx.catalog else None,
                          moves=len(shared.get("candidate_moves") or []), grounding=self._grounding(shared),
                          budget_stop=shared.get("budget_stop"),
                          **_reach(shared))
        return {"signals": signals, "user": shared.get("sql_source") == "user", "minimum": s.min_confidence,
                "always": s.confidence_drafts, "on_low": s.resample_drafts, "prompt": shared.get("sql_prompt"),
                "sql": shared.get("sql_query"), "df": shared.get("query_result"), "question": shared["question"],
                "temperature": s.resample_temperature, "voted": _voted(shared), "over": self.over_budget()}

    def _grounding(self, shared) -> dict | None:
        """The grounding checks on the final answer (``trust.grounding``); None for the user's own SQL."""
        if shared.get("sql_source") == "user" or not self.ctx.catalog:
            return None
        facts, given = facts_for(self.ctx.catalog, self.ctx.db, shared, shared.get("facts"))
        return grounding(shared["question"], shared.get("sql_query"), shared.get("query_result"), facts,
                         given_known=given is not None)

    def exec(self, p):
        if p["user"]:
            return None, []
        conf = assess(p["signals"])
        below = not at_least(conf["level"], p["minimum"])
        n = 0 if p["over"] else p["always"] or (p["on_low"] if below and p["signals"]["drafts"] < 2 else 0)
        if not n or not p["prompt"]:     # below the minimum with candidates drawn: their two largest groups
            return conf, p["voted"] if below else []
        groups = self._drafts(p, n)
        agree = len(groups[0]["members"]) - 1 if groups and groups[0]["answer"] else 0
        ran = sum(len(g["members"]) for g in groups)
        drafts = {"n": n + 1, "agree": agree + 1, "dissent": ran - agree - 1}   # the answer is one of its group
        conf = assess({**p["signals"], "drafts": drafts["n"], "agree": drafts["agree"], "dissent": drafts["dissent"]})
        return conf, groups

    def _drafts(self, p, n: int) -> list[dict]:
        """The answer and ``n`` sampled drafts, run and grouped by equal results; the answer's group first."""
        cat, question = self.ctx.catalog, p["question"]
        drawn = sample(self.ctx.llm, p["prompt"]["messages"], n, node="AssessConfidence", catalog=cat,
                       question=question, temperature=p["temperature"], seed=SEEDS, stable=p["prompt"]["stable"])
        sqls = [p["sql"]] + [d for d, _ in drawn]
        # Every draft runs, a repeat too (each is one member of its group); an empty one does not run.
        outs = run_all(self.ctx.db, self.ctx.settings, sqls, cat, question)
        ran = [(i, o) for i, o in enumerate(outs) if o is not None]
        v = choose([o for _, o in ran])
        groups = [{"members": [ran[j][0] for j in g], "sql": ran[g[0]][1].sql, "df": ran[g[0]][1].df,
                   "answer": any(ran[j][0] == 0 for j in g)} for g in v.groups]
        return sorted(groups, key=lambda g: not g["answer"])

    def post(self, shared: Turn, p, res):
        conf, groups = res
        if groups:   # the drafts drawn to weigh the answer, grouped by result
            conf["drafts"] = [{"sql": g["sql"], "drafts": len(g["members"]), "answer": g["answer"],
                               "rows": None if g["df"] is None else len(g["df"])} for g in groups]
        shared["confidence"] = conf
        if conf is None:
            return "default"
        if not at_least(conf["level"], p["minimum"]):
            best = groups[:2] if groups else [{"members": [0], "sql": p["sql"], "df": p["df"], "answer": True}]
            shared["alternatives"] = [{"sql": g["sql"], "df": g["df"], "drafts": len(g["members"])} for g in best]
            finish(shared, "unsure", unsure_answer(conf, shared["alternatives"], p["minimum"]))
        return "default"
