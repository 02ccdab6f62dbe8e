"""SQLGenerator: the LLM writes one DuckDB SELECT for the question (and, with ``candidates``, a few more).

The prompt is ordered for KV-cache reuse: the fixed instructions and the schema first (shared by every
question on the same tables), then the question's own part: the verified example pairs most like it, its
literal values found in the data, the DuckDB reference lines it calls for (``sql.reference``), the question,
and on a retry the previous SQL with the executor's error or the grader's critique (and the tables a check found the
answer in: "Also in the warehouse"). The answer is pre-filled with a ```sql fence, stopped at the closing one.

Candidates (``candidates: k``): beside the greedy draft, k drafts sampled from the same prompt in one batch
(``sql.drafts.sample``; the embedded model decodes them together over the shared prompt state). SQLExecutor
runs them all and keeps the result most of them give. A resample (the first query failed or found nothing,
once a question) draws ``resample_drafts`` the same way, voted on with the failed query.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.knowledge.examples import shown
from duckask.utils.schema.ddl import render_reach
from duckask.utils.schema.values import hints
from duckask.utils.sql.dialect import question_hints
from duckask.utils.sql.drafts import draft, sample
from duckask.utils.sql.reference import lookup
from duckask.utils.turn import Turn, set_query, take, tried

MAX_VALUE_HINTS = 4

SYSTEM = ("You write DuckDB SQL. Answer the question with one SELECT query. Use only the tables and "
          "columns in the schema, join on the REFERENCES keys, select only what the question asks for, "
          "and use literal values exactly as they appear in the data.")


def build_messages(schema: str, question: str, values: list[dict], feedback: dict | None,
                   examples: list[dict] | None = None, notes: list[str] | None = None, reach: str = "") -> list[dict]:
    user = [f"Schema:\n{schema}\n"]
    if examples:
        user.append(f"Examples of questions on this database with their correct SQL:\n{shown(examples)}\n")
    if values:
        user.append(f"Values found in the data: {hints(values)}\n")
    if notes:
        user.append("DuckDB reference that may help:\n" + "\n".join(f"- {n}" for n in notes) + "\n")
    user.append(f"Question: {question}")
    user.extend(question_hints(question))
    if feedback:
        user.append(f"\n\nThis query was wrong:\n{feedback['sql'] or '(no SQL)'}\n"
                    f"Problem: {feedback['message']}\nWrite a corrected query.")
        if reach:   # the tables a check found the answer in, beyond the selected ones
            user.append(f"Also in the warehouse:\n{reach}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(user)}]


class SQLGenerator(TracedNode):
    def prep(self, shared: Turn):
        selected = set(shared.get("selected_tables") or [])
        values = [v for v in shared.get("value_matches") or [] if v["table"] in selected][:MAX_VALUE_HINTS]
        s = self.ctx.settings
        return {"schema": shared["table_schemas"], "stable": shared.get("stable_schema") or "",
                "question": shared["question"], "values": values,
                "examples": shared.get("examples") or [], "selected": sorted(selected),
                "feedback": None if shared.get("resample") else shared.get("feedback"),
                "tried": [a["sql"] for a in shared.get("attempts", [])],
                "resample": s.resample_drafts if shared.get("resample") else 0,
                "candidates": 0 if shared.get("feedback") or shared.get("resample") else s.candidates,
                "failed": shared.get("sql_query") or "", "temperature": s.resample_temperature}

    def exec(self, p):
        cat = self.ctx.catalog
        cols = [c for t in p["selected"] if t in cat.tables for c in cat.tables[t].columns]
        notes = lookup(p["question"], columns=cols) if self.ctx.settings.dialect_notes == "auto" else []
        reach = render_reach(cat, (p["feedback"] or {}).get("reach") or [], p["question"], p["selected"])
        msgs = build_messages(p["schema"], p["question"], p["values"], p["feedback"], p["examples"], notes, reach)
        # The schema's stable start, shared by most questions on this database: the embedded model keeps its state.
        stable = f"Schema:\n{p['stable']}" if p["stable"] and p["schema"].startswith(p["stable"]) else ""
        ask = {"node": "SQLGenerator", "catalog": cat, "question": p["question"], "stable": stable}
        if p["resample"]:
            drafts = sample(self.ctx.llm, msgs, p["resample"], temperature=p["temperature"], seed=1, **ask)
            return {"sql": p["failed"], "candidates": [p["failed"]] + [d for d, _ in drafts],  # the failed one votes
                    "scores": [None] + [c.get("mean_logprob") for _, c in drafts], "error": None, "certainty": {}}
        # The greedy draft, and the candidates beside it decoded in one batch (llm.batch; seeds 1..k): the model's
        # mean log-probability of each settles ties between result groups (the likelier wins).
        drafts = sample(self.ctx.llm, msgs, p["candidates"], temperature=p["temperature"], seed=1, greedy=True, **ask)
        (sql, certainty), cands, scores = drafts[0], [d for d, _ in drafts], [c.get("mean_logprob") for _, c in drafts]
        if p["feedback"] and sql in p["tried"]:
            # At temperature 0 a small model often repeats a failed query: a sampled retry gets another one.
            sql, certainty = draft(self.ctx.llm, msgs, temperature=p["temperature"], **ask)
        return {"sql": sql, "candidates": cands, "scores": scores, "error": None, "certainty": certainty,
                "messages": msgs, "stable": stable}

    def exec_fallback(self, p, exc):
        # The LLM call itself failed (endpoint down, context overflow): the executor reports it.
        return {"sql": "", "candidates": [""], "error": f"the LLM call failed: {exc}", "certainty": {}}

    def post(self, shared: Turn, p, res):
        set_query(shared, res["sql"], candidates=res["candidates"], error=res["error"])
        shared["candidate_scores"] = res.get("scores")
        after = "resample" if p["resample"] else (p["feedback"] or {}).get("kind", "question")
        tried(shared, res["sql"], first=True, source="llm", after=after, **res.get("certainty", {}))
        if res.get("messages"):   # the prompt, for drafts drawn later to weigh this answer (AssessConfidence)
            shared["sql_prompt"] = {"messages": res["messages"], "stable": res["stable"]}
        if take(shared, "resample"):
            shared["resampled"] = True
        take(shared, "feedback")
        return "default"
