"""DataAnalyzer: the answer in plain language, and how it was derived.

"template" (default for the embedded model): a deterministic sentence from the result, no LLM call.
"llm" (default for endpoints): the model phrases a 1-3 sentence answer from the question and the
first rows; on failure the template is used. Either way the derivation (tables, filters, grouping,
order, limit) is read from the SQL by DuckDB's parser, so it is always exact.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.app.answer import derivation, template_answer

PROMPT = """Question: {question}
SQL: {sql}
Result ({n} rows{more}):
{rows}
Answer the question in one to three plain sentences using only this result. No SQL, no markdown."""


class DataAnalyzer(TracedNode):
    def __init__(self, ctx):
        super().__init__(ctx, max_retries=1)

    def prep(self, shared):
        return {"question": shared["question"], "sql": shared["sql_query"], "df": shared["query_result"],
                "truncated": shared.get("truncated", False), "mode": self.mode(self.ctx.settings.analyzer, "template")}

    def exec(self, p):
        how = derivation(p["sql"])
        if p["mode"] != "llm" or p["df"] is None or len(p["df"]) == 0:
            return {"answer": template_answer(p["df"], p["truncated"]), "derivation": how}
        df = p["df"]
        rows = df.head(20).to_csv(index=False).strip()
        reply = self.ctx.llm.complete([{"role": "user", "content": PROMPT.format(
            question=p["question"], sql=p["sql"], n=len(df), more="+" if p["truncated"] else "", rows=rows)}],
            node="DataAnalyzer", max_tokens=150)
        text = reply.text.strip()
        if not text:
            raise ValueError("empty answer")
        return {"answer": text, "derivation": how}

    def exec_fallback(self, p, exc):
        return {"answer": template_answer(p["df"], p["truncated"]), "derivation": derivation(p["sql"])}

    def post(self, shared, p, res):
        shared["final_answer"] = res["answer"]
        shared["derivation"] = res["derivation"]
        shared["status"] = "answered"
        shared["best"] = {"sql": p["sql"], "df": p["df"], "answer": res["answer"], "derivation": res["derivation"],
                          "truncated": p["truncated"]}
        return "default"
