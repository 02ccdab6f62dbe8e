"""MatchTemplate: a question that is a kept pair's question with other literals is answered by the pair's SQL with
them put in, without the model.

Kept pairs (``duckask teach``, ``/good``, the page's Right and Wrong, MCP's ``teach``, ``r.save_as_example`` and
``r.fix``, an examples file) are matched by ``knowledge.templates.match``: the two questions may differ only in
literals (a year, a number, a name or a category that is a stored value of the column the pair's SQL compares it
with), which are replaced on sqlglot's tree. A question that differs in anything else (another measure, a
grouping, a word added) goes on to PlanQuery ("none"), where the pair is still a few-shot example of the SQL path.
Of several matches, an exact one (the same question) wins, then the one with the fewest substitutions, then the
newest pair. The template's query runs like any other ("template"); when it fails or finds nothing (SQLExecutor),
or the checks object to its answer (ResponseGrader), the question goes on the SQL path ("fallback", noted on
``shared["template"]``). ``shared["path"]`` is ``template`` for an answer a template gave, and AssessConfidence
rates it as what it is: a question a person answered before, with values of its columns.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.knowledge.index import index_of
from duckask.utils.knowledge.templates import match
from duckask.utils.schema.value_index import ValueIndex
from duckask.utils.turn import Turn, answered_by, set_query, tried


def best(question: str, examples: list, values):
    """(the template, its kept pair) for ``question``: exact first, then fewest slots, then the newest pair; or None.
    Only the pairs the word index finds could match (``knowledge.index``) are matched, so the cost does not grow
    with the number of pairs."""
    found = [(t, ex, -i) for i, ex in index_of(examples).template_candidates(question)
             if (t := match(question, ex, values)) is not None]
    return min(found, key=lambda f: (len(f[0].slots), f[2]))[:2] if found else None


class MatchTemplate(TracedNode):
    def prep(self, shared: Turn):
        off = self.ctx.settings.templates == "off" or not self.ctx.examples
        return {"question": shared["question"], "examples": list(self.ctx.examples), "off": off,
                "values": None if off else ValueIndex.of(self.ctx.db, self.ctx.catalog)}

    def exec(self, p):
        if p["off"]:
            return None
        found = best(p["question"], p["examples"], p["values"])
        if found is None:
            return None
        t, pair = found
        return {"sql": t.sql, "pair": {"id": pair.id, "question": pair.question, "sql": pair.sql},
                "slots": [{"kept": a, "asked": b} for a, b in t.slots], "exact": t.exact}

    def exec_fallback(self, p, exc):       # a matcher's fault never stops the question: the normal way
        return None

    def trace_detail(self, shared: Turn):
        t = shared.get("template") or {}
        return {"pair": t["pair"]["id"], "slots": len(t["slots"])} if t else {}

    def post(self, shared: Turn, p, res):
        if res is None:
            return "none"
        shared["template"] = res
        answered_by(shared, "template")
        tried(shared, res["sql"], first=True, source="template", after="question")
        set_query(shared, res["sql"], candidates=[res["sql"]], error=None)
        return "template"
