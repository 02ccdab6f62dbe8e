"""ResponseGrader: does the SQL and its result answer the question? Bounded critique loop.

"rules" (the default, ``auto``, on every backend; no LLM call) fails a result that is empty (naming a contradictory
filter such as ``x = 'a' AND x = 'b'`` when there is one), all NULL, or has several rows when the question
asks for one count. "llm" (opt-in: 19 % recall measured, issue 22) runs the rules, then asks the model (YAML: verdict,
critique); malformed replies are retried, then pass. On fail the critique goes to SQLGenerator, at most
``max_grader_rounds`` times; then the flow ends with the last answer and grade_status "fail".
"""
from __future__ import annotations

import re

import pandas as pd

from duckask.nodes._base import TracedNode
from duckask.utils.llm.yaml_reply import parse_yaml
from duckask.utils.sql.tidy import self_comparisons
from duckask.utils.sql.voting import substantive

_COUNT_Q = re.compile(r"^\s*(how many|count\b|what is the (total )?number of|what's the number of|"
                      r"find the (total )?number of|show the number of|return the number of)", re.I)
_GROUPED = re.compile(r"\b(each|per|every|by|respectively|different|various|all)\b", re.I)
_EQ_LITERAL = re.compile(r"([\w.\"]+)\s*=\s*('(?:[^']|'')*')")

PROMPT = """Question: {question}
SQL: {sql}
Result ({n} rows): {rows}
Does this SQL result correctly and completely answer the question?
Reply in YAML only:
verdict: pass or fail
critique: if fail, what the query gets wrong, in one sentence; else ""
"""


def contradiction(sql: str) -> str | None:
    """'X = 'a' AND X = 'b'' in one WHERE can never hold: the classic "both a and b" slip."""
    seen: dict[str, str] = {}
    for col, lit in _EQ_LITERAL.findall(sql or ""):
        key = col.lower().replace('"', "")
        if key in seen and seen[key] != lit and " OR " not in sql.upper():
            return (f"{col} cannot equal both {seen[key]} and {lit} in the same row. For rows that have both "
                    f"values, write two queries (one per value) combined with INTERSECT.")
        seen.setdefault(key, lit)
    return None


def rule_check(question: str, df: pd.DataFrame | None, sql: str = "") -> str | None:
    """A critique when the result is certainly not an answer, else None."""
    if df is None or len(df) == 0:
        if (why := contradiction(sql)):
            return "The query returned no rows. " + why
        return ("The query returned no rows. Check that filter values match the data exactly (see the "
                "sample values and their case) and that joins and conditions are not too strict.")
    if df.isna().all().all():
        return "The query returned only NULL values; check the filters and the joins."
    if (same := self_comparisons(sql or "")):
        return (f"The condition {same[0]} compares a column with itself, so every row is joined with every "
                "row; join on the columns that link the two tables (REFERENCES in the schema).")
    if _COUNT_Q.search(question) and not _GROUPED.search(question) and len(df) != 1:
        return (f"The question asks for one number, but the query returned {len(df)} rows; "
                "aggregate into a single row with COUNT.")
    return None


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

    def prep(self, shared):
        return {"question": shared["question"], "sql": shared["sql_query"], "df": shared["query_result"],
                "rounds": shared.get("grader_rounds", 0), "max": self.ctx.settings.max_grader_rounds,
                "mode": "rules" if self.ctx.settings.grader == "auto" else self.ctx.settings.grader,  # issue 22
                "resample": self.can_resample(shared), "user": shared.get("sql_source") == "user"}

    def exec(self, p):
        if p["mode"] == "off" or p["user"]:
            return {"verdict": "pass", "critique": "", "by": "user SQL, not graded" if p["user"] else "off"}
        critique = rule_check(p["question"], p["df"], p["sql"])
        if critique:
            return {"verdict": "fail", "critique": critique, "by": "rules"}
        if p["mode"] != "llm":
            return {"verdict": "pass", "critique": "", "by": "rules"}
        return llm_verdict(self.ctx.llm, p["question"], p["sql"], p["df"])

    def exec_fallback(self, p, exc):  # a flaky grader never discards a good answer
        return {"verdict": "pass", "critique": "", "by": f"fallback (grader reply unusable: {exc})"}

    def post(self, shared, p, res):
        shared.setdefault("grades", []).append({**res, "sql": p["sql"]})
        if res["verdict"] == "pass":
            shared["grade_status"] = "pass"
            return "pass"
        if shared.get("path") == "plan":   # a plan judged wrong: the SQL path answers instead
            shared["plan"]["fallback"] = f"the grader objected: {res['critique']}"
            shared["path"] = "sql"
            return "fallback"
        if p["resample"] and not substantive(p["df"]):
            # Nothing found: fresh samples of the first prompt first (once a question, no round used).
            shared["resample"] = True
            return "resample"
        if p["rounds"] >= p["max"]:
            shared["grade_status"] = "fail"
            shared["warning"] = f"The answer may be wrong: {res['critique']}"
            return "exhausted"
        shared["grade_status"] = "retry"
        shared["grader_rounds"] = p["rounds"] + 1
        shared["feedback"] = {"kind": "grader", "sql": p["sql"], "message": res["critique"]}
        return "fail"
