"""MatchTemplate: a question that asks what a kept pair asked, with other values, is answered by the pair's SQL
with them put in, without the model.

Kept pairs (``duckask teach``, ``/good``, the page's Right and Wrong, MCP's ``teach``, ``r.save_as_example`` and
``r.fix``, an examples file) are matched two ways:

- word for word (``knowledge.templates.match``): the two questions differ only in literals (a year, a number, a name
  or a category that is a stored value of the column the pair's SQL compares it with), replaced on sqlglot's tree
  (``reach``: ``exact`` or ``variant``);
- by meaning (``knowledge.reach.fill``, settings ``templates: on``): the question words the same thing otherwise,
  its values read from the value index (a code for a name, a demonym for a country, a season for a year), and it
  adds, drops or swaps no measure, subject, order or condition (``reach: paraphrase``). A few candidates only: the
  word index's most similar pairs (``knowledge.index``), so the cost does not grow with the number of pairs.

A question that differs in anything else goes on to PlanQuery ("none"), where the pair is still a few-shot example
of the SQL path. Of several word-for-word matches, an exact one wins, then the one with the fewest substitutions,
then the newest pair. The template's query runs like any other ("template"); when it fails or finds nothing
(SQLExecutor), or the checks object to its answer (ResponseGrader), the question goes on the SQL path ("fallback",
noted on ``shared["template"]``). ``shared["path"]`` is ``template`` for an answer a template gave, and
AssessConfidence rates it as what it is: a question a person answered before, with values of its columns (a
paraphrase below a variant).
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.knowledge.index import index_of
from duckask.utils.knowledge.keep import kept_by
from duckask.utils.knowledge.reach import reached
from duckask.utils.knowledge.templates import match
from duckask.utils.schema.value_index import ValueIndex
from duckask.utils.trust.answerable import catalog_vocabulary
from duckask.utils.trust.answerable import reach as answerable
from duckask.utils.turn import Turn, answered_by, set_query, tried


def best(question: str, examples: list, values):
    """(the template, its kept pair) for ``question``: exact first, then fewest slots, then the newest pair; or None.
    Only the pairs the word index finds could match (``knowledge.index``) are matched, so the cost does not grow
    with the number of pairs."""
    found = [(t, ex, -i) for i, ex in index_of(examples).template_candidates(question)
             if (t := match(question, ex, values)) is not None]
    return min(found, key=lambda f: (len(f[0].slots), f[2]))[:2] if found else None


def matched(question: str, examples: list, values, catalog, meaning: bool = True):
    """(the template, its kept pair, how it was reached, what decided it) for ``question``: word for word first
    (``best``), then by meaning; or None."""
    found = best(question, examples, values)
    if found is not None:
        return found[0], found[1], ("exact" if found[0].exact else "variant"), None
    can = answerable(question, catalog_vocabulary(catalog)) if meaning and catalog is not None else None
    if can is None or can.outcome == "cannot":
        return None                    # by meaning only what the database can answer (CheckAnswerable may be off)
    got = reached(question, examples, values, catalog, can.absent)
    return (got[0].template, got[1], "paraphrase", got[0].decided) if got else None


class MatchTemplate(TracedNode):
    def prep(self, shared: Turn):
        mode = self.ctx.settings.templates
        off = mode == "off" or not self.ctx.examples
        return {"question": shared["question"], "examples": list(self.ctx.examples), "off": off,
                "meaning": mode == "on", "catalog": self.ctx.catalog,
                "values": None if off else ValueIndex.of(self.ctx.db, self.ctx.catalog)}

    def exec(self, p):
        if p["off"]:
            return None
        found = matched(p["question"], p["examples"], p["values"], p["catalog"], p["meaning"])
        if found is None:
            return None
        t, pair, reach, decided = found
        by = kept_by(self.ctx.db, self.ctx.settings, pair.id)
        return {"sql": t.sql, "pair": {"id": pair.id, "question": pair.question, "sql": pair.sql, "by": by},
                "slots": [{"kept": a, "asked": b} for a, b in t.slots], "exact": t.exact, "reach": reach,
                "decided": decided}

    def exec_fallback(self, p, exc):       # a matcher's fault never stops the question: the normal way
        return None

    def trace_detail(self, shared: Turn):
        t = shared.get("template") or {}
        return {"pair": t["pair"]["id"], "slots": len(t["slots"]), "reach": t.get("reach")} if t else {}

    def post(self, shared: Turn, p, res):
        if res is None:
            return "none"
        shared["template"] = res
        answered_by(shared, "template")
        tried(shared, res["sql"], first=True, source="template", after="question")
        set_query(shared, res["sql"], candidates=[res["sql"]], error=None)
        return "template"
