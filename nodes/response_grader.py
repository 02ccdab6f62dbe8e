"""ResponseGrader: does the SQL and its result answer the question? Bounded critique loop.

"rules" (the default, ``auto``, on every backend; no LLM call) runs the registry's checks (``checks.registry``,
docs/checks.md): the result's shape, the values it compares, what it leaves out, what a count counts.
On a kept pair's template, a check that objects to the pair's own answer too is not held against it (a person
kept that answer). "llm" (opt-in: 19 % recall measured, issue 22) runs the rules, then asks the model (YAML:
verdict, critique).
On fail: the next group of candidates (SQLExecutor's vote kept them) is tried first, at no LLM cost; then a
plan's question goes to the SQL path; then the critique goes to SQLGenerator, at most ``max_grader_rounds``
times; then the flow ends with the last answer and grade_status "fail".
"""
from __future__ import annotations

import pandas as pd

from duckask.nodes._base import TracedNode
from duckask.utils.checks.registry import failed_check
from duckask.utils.llm.yaml_reply import parse_yaml
from duckask.utils.sql.drafts import run_query
from duckask.utils.sql.voting import substantive
from duckask.utils.trust.grounding import facts_for
from duckask.utils.turn import GIVE_UP, Turn, ask_again, fall_back, grade

PROMPT = """Question: {question}
SQL: {sql}
Result ({n} rows): {rows}
Does this SQL result correctly and completely answer the question?
Reply in YAML only:
verdict: pass or fail
critique: if fail, what the query gets wrong, in one sentence; else ""
"""


def llm_verdict(llm, question: str, sql: str, df: pd.DataFrame) -> dict:
    """The model's verdict on a result; ValueError on a reply it cannot use (bench/grader_eval.py measures it)."""
    rows = df.head(10).to_csv(index=False).strip().replace("\n", " | ")
    reply = llm.complete([{"role": "user", "content": PROMPT.format(
        question=question, sql=sql, n=len(df), rows=rows[:1500])}], node="ResponseGrader", max_tokens=100)
    data = parse_yaml(reply.text, {"verdict": str}, choices={"verdict": {"pass", "fail"}})
    critique = str(data.get("critique") or "").strip()
    if data["verdict"] == "fail" and not critique:
        raise ValueError("a fail verdict needs a critique")
    return {"verdict": data["verdict"], "critique": critique, "by": "llm"}


class ResponseGrader(TracedNode):
    def __init__(self, ctx):
        super().__init__(ctx, max_retries=2)

    def prep(self, shared: Turn):
        facts, given = facts_for(self.ctx.catalog, self.ctx.db, shared, shared.get("facts"))
        more = shared["candidates"].next_group() is not None     # another group to move to
        return {"question": shared["question"], "sql": shared["sql_query"], "df": shared["query_result"],
                "facts": facts, "given": given, "more": more,
                "rounds": shared.get("grader_rounds", 0), "max": self.ctx.settings.max_grader_rounds,
                "mode": "rules" if self.ctx.settings.grader == "auto" else self.ctx.settings.grader,  # issue 22
                "resample": self.can_resample(shared), "user": shared.get("sql_source") == "user",
                "pair": (shared.get("template") or {}).get("pair") if shared.get("path") == "template" else None}

    def exec(self, p):
        if p["mode"] == "off" or p["user"]:
            return {"verdict": "pass", "critique": "", "by": "user SQL, not graded" if p["user"] else "off"}
        check, critique = failed_check(p["question"], p["df"], p["sql"], facts=p["facts"],
                                       given_known=p["given"] is not None)
        if critique and self._kept_with(p, check):
            return {"verdict": "pass", "critique": "", "by": "rules",
                    "overridden": f"{check}: it objects to the kept pair's own answer too, which a person kept"}
        if critique:
            return {"verdict": "fail", "critique": critique, "by": "rules", "check": check, "reach": [*critique.reach]}
        if p["mode"] != "llm":
            return {"verdict": "pass", "critique": "", "by": "rules"}
        return llm_verdict(self.ctx.llm, p["question"], p["sql"], p["df"])

    def _kept_with(self, p, check: str | None) -> bool:
        """On a template's answer: whether ``check`` objects to the kept pair's own question, SQL and rows (a person
        kept that answer over it: the check's objection is not news, e.g. an average a per-game table holds)."""
        if not p["pair"]:
            return False
        out = run_query(self.ctx.db, self.ctx.settings, p["pair"]["sql"])
        kept, _ = failed_check(p["pair"]["question"], out.df, p["pair"]["sql"], facts=p["facts"],
                               given_known=p["given"] is not None) if out.ok else (None, None)
        return kept == check

    def trace_detail(self, shared: Turn):     # which check failed, if one did (a move to the next group says why)
        return {k: g.get(k) for k in ("verdict", "check")} if (g := (shared.get("grades") or [{}])[-1]) else {}

    def exec_fallback(self, p, exc):  # a flaky grader never discards a good answer
        return {"verdict": "pass", "critique": "", "by": f"fallback (grader reply unusable: {exc})"}

    def post(self, shared: Turn, p, res):
        shared["facts"] = p["facts"]
        shared.setdefault("grades", []).append({**res, "sql": p["sql"]})
        if res["verdict"] == "pass":
            grade(shared, "pass")
            return "pass"
        if p["more"]:   # the next group of candidates, already run (SQLExecutor serves it)
            shared.setdefault("candidate_moves", []).append({"from": p["sql"], "why": res["critique"]})
            return "next"
        if self.over_budget():  # no second path, resample or critique round past the time budget
            self.stop_for_budget(shared, "another try after the checks objected")
            grade(shared, "fail", f"The answer may be wrong: {res['critique']} (the time budget ran out first)")
            return "exhausted"
        if shared.get("path") in GIVE_UP and not (shared.get("plan") or {}).get("raced"):   # judged wrong: the SQL path
            fall_back(shared, f"the grader objected: {res['critique']}")
            return "fallback"
        if p["resample"] and not substantive(p["df"]):
            # Nothing found: fresh samples of the first prompt first (once a question, no round used).
            ask_again(shared, resample=True)
            return "resample"
        if p["rounds"] >= p["max"]:
            grade(shared, "fail", f"The answer may be wrong: {res['critique']}")
            return "exhausted"
        grade(shared, "retry")
        shared["grader_rounds"] = p["rounds"] + 1
        reach = res.get("reach", [])     # the tables a check says hold what the query's lack
        ask_again(shared, {"kind": "grader", "sql": p["sql"], "message": res["critique"], "reach": reach})
        return "fail"
