"""SQLGenerator: one LLM call that writes one DuckDB SELECT for the question.

The prompt is ordered for KV-cache reuse: the fixed instructions and the schema come first (shared by
every question on the same tables), then the question-specific part: literal values of the question
found in the data, the question, and, on a retry, the previous SQL with the executor's error or the
grader's critique. The answer is pre-filled with a ```sql fence and stops at the closing fence, so
the model spends no tokens on prose.

With ``sql_candidates`` > 1, a first draft is the greedy query plus sampled ones from the same
prompt (only their generation costs time: the prompt is in the KV cache); SQLExecutor runs them all
and votes on their results. Retries after an error or a critique write one query.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.sql_text import extract_sql, tidy_sql

MAX_VALUE_HINTS = 4
RESAMPLE_TEMPERATURE = 0.7

SYSTEM = ("You write DuckDB SQL. Answer the question with one SELECT query. Use only the tables and "
          "columns in the schema, join on the REFERENCES keys, select only what the question asks for, "
          "and use literal values exactly as they appear in the data.")


def build_messages(schema: str, question: str, values: list[dict], feedback: dict | None) -> list[dict]:
    user = [f"Schema:\n{schema}\n"]
    if values:
        hints = "; ".join(f"{v['table']}.{v['column']} = '{v['value']}'" for v in values)
        user.append(f"Values found in the data: {hints}\n")
    user.append(f"Question: {question}")
    if feedback:
        user.append(f"\n\nThis query was wrong:\n{feedback['sql'] or '(no SQL)'}\n"
                    f"Problem: {feedback['message']}\nWrite a corrected query.")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(user)}]


class SQLGenerator(TracedNode):
    def prep(self, shared):
        selected = set(shared.get("selected_tables") or [])
        values = [v for v in shared.get("value_matches") or [] if v["table"] in selected][:MAX_VALUE_HINTS]
        tried = [a["sql"] for a in shared.get("attempts", [])]
        s = self.ctx.settings
        return {"schema": shared["table_schemas"], "question": shared["question"], "values": values,
                "feedback": shared.get("feedback"), "tried": tried,
                "n": 1 if tried else max(1, s.sql_candidates), "temperature": s.candidate_temperature}

    def exec(self, p):
        msgs = build_messages(p["schema"], p["question"], p["values"], p["feedback"])
        sql = self._generate(msgs)
        if p["feedback"] and sql in p["tried"]:
            # At temperature 0 a small model often repeats the query that just failed, feedback or
            # not; one sampled retry is the only way to get a different query out of it.
            sql = self._generate(msgs, temperature=RESAMPLE_TEMPERATURE)
        # Fixed seeds: the same question gets the same drafts (and a reply cache can serve them).
        drafts = [sql] + [self._generate(msgs, temperature=p["temperature"], seed=i) for i in range(1, p["n"])]
        return {"sql": sql, "candidates": drafts, "error": None}

    def _generate(self, msgs, temperature=None, seed=None) -> str:
        reply = self.ctx.llm.complete(msgs, node="SQLGenerator", prefix="```sql\n", stop=["```"], max_tokens=256,
                                      temperature=temperature, seed=seed)
        return tidy_sql(extract_sql(reply.text), self.ctx.catalog)

    def exec_fallback(self, p, exc):
        # The LLM call itself failed (endpoint down, context overflow): the executor reports it.
        return {"sql": "", "candidates": [""], "error": f"the LLM call failed: {exc}"}

    def post(self, shared, p, res):
        shared["sql_query"] = res["sql"]
        shared["sql_candidates"] = res["candidates"]
        shared["generation_error"] = res["error"]
        shared.setdefault("attempts", []).append(
            {"sql": res["sql"], "source": "llm", "after": (p["feedback"] or {}).get("kind", "question")})
        shared.setdefault("first_sql", res["sql"])
        shared["feedback"] = None
        return "default"
