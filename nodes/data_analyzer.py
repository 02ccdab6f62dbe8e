"""DataAnalyzer: the answer in plain sentences, and how it was derived.

"llm" (what ``auto`` means for ``ask``, ``chat`` and notebooks): one short call writes one or two
sentences from the question and at most 20 rows of the result (``duckask.utils.dialogue.sentence``),
streamed to ``on_text`` as it is written. ``check_sentence`` then compares every number and name in
it with the result; a sentence that disagrees is replaced by the one the rules write
(``dialogue/answer_rules.py``), and the disagreement is kept in ``answer_check``. Results over 20 rows, empty
results, a single value (a count, a total: the rules state it exactly, and the call would cost seconds for nothing)
and the user's own SQL get the rules' sentence (no call), and so does an answer from a kept pair's template (no
model call at all on that path: it is there to be instant). "rules" (what ``auto`` means for ``eval``): no call.
Either way the derivation (tables, filters, grouping, order, limit) is read from the SQL by sqlglot
(``utils/sql/describe.py``; DuckDB's parser only for what sqlglot cannot read), so it is always exact; an
answer from a kept pair's template says first which pair, and what was put in.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.dialogue.answer_rules import derivation, rules_answer
from duckask.utils.dialogue.sentence import MAX_ROWS, check_sentence, prompt
from duckask.utils.knowledge.templates import provenance
from duckask.utils.turn import Turn, finish


class DataAnalyzer(TracedNode):
    def __init__(self, ctx):
        super().__init__(ctx, max_retries=1)

    def prep(self, shared: Turn):
        mode = self.ctx.settings.analyzer
        return {"question": shared["question"], "sql": shared["sql_query"], "df": shared["query_result"],
                "truncated": shared.get("truncated", False), "mode": "llm" if mode == "auto" else mode,
                "user": shared.get("sql_source") == "user",
                "plan": (shared.get("plan") or {}).get("derivation") if shared.get("path") == "plan" else None,
                "template": shared.get("template") if shared.get("path") == "template" else None}

    @staticmethod
    def how(p) -> str:
        """How the answer was derived: the plan's derivation, or the SQL's read by sqlglot (after the kept
        pair it came from, for a template)."""
        how = p["plan"] or derivation(p["sql"])
        return f"{provenance(p['template'])} {how}" if p["template"] else how

    def exec(self, p):
        how, df = self.how(p), p["df"]
        written = rules_answer(df, p["truncated"], question=p["question"])
        one_value = df is not None and df.shape == (1, 1)
        if p["mode"] != "llm" or p["user"] or p["template"] or df is None or len(df) == 0 or len(df) > MAX_ROWS \
                or one_value:
            return {"answer": written, "derivation": how, "check": {"by": "rules"}}
        reply = self.ctx.llm.complete([{"role": "user", "content": prompt(p["question"], df, p["truncated"])}],
                                      node="DataAnalyzer", max_tokens=90, on_text=self.ctx.on_text)
        text = " ".join(reply.text.split())
        if not text:
            raise ValueError("empty answer")
        problems = check_sentence(text, df, p["question"])
        if problems:
            return {"answer": written, "derivation": how,
                    "check": {"by": "rules", "sentence": text, "problems": problems}}
        return {"answer": text, "derivation": how, "check": {"by": "llm", "problems": []}}

    def exec_fallback(self, p, exc):
        return {"answer": rules_answer(p["df"], p["truncated"], question=p["question"]), "derivation": self.how(p),
                "check": {"by": "rules", "problems": [f"the LLM call failed: {exc}"]}}

    def post(self, shared: Turn, p, res):
        finish(shared, "answered", res["answer"], res["derivation"])
        shared["answer_check"] = res["check"]
        shared["best"] = {"sql": p["sql"], "df": p["df"], "answer": res["answer"], "derivation": res["derivation"],
                          "truncated": p["truncated"]}
        return "default"
