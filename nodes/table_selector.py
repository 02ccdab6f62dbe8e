"""TableSelector: choose the tables the query needs, scaling to schemas of 50+ tables.

1. A deterministic pre-ranker (``duckask.utils.schema.ranker``) scores every table from its name, column names,
   comments, and literal values of the question found in the data (a name's whole phrase before its words,
   ``values.whole_names``); the tables of the example pairs most like the question (``knowledge.retrieve``) score
   too, and those go on to SQLGenerator. On a follow-up, the previous turn's question and SQL come first among them.
2. Small schemas (``table_llm_threshold`` tables or fewer) are passed whole: no LLM call. With public models
   (``models: public``), the tables the models read are left out unless the question names one (``visible``).
3. When the pre-ranker is sure (``sure_tables``: at most ``SURE_MAX`` tables score more than
   ``table_sure_band`` times the top score), those tables (and their parents, ``with_parents``)
   are taken: no LLM call.
   Chosen without an LLM on 61 tuning questions (``bench/table_skip.py``, in git history at 3aea155):
   it fires on 43 % of them and keeps every gold table of each; on the 45 held-out Lahman and NBA
   questions it fired on 24 and kept every gold table of 21, as many as the LLM's recorded choices.
4. Otherwise the LLM picks from the ``table_shortlist`` best candidates (YAML: tables), each a line with what one
   row is and the columns the question needs. Bad replies are retried, then the pre-ranker's top three are used.
"""
from __future__ import annotations

from dataclasses import asdict

from duckask.nodes._base import TracedNode
from duckask.utils.knowledge.examples import Example, tables_of
from duckask.utils.knowledge.retrieve import retrieve
from duckask.utils.llm.yaml_reply import parse_yaml
from duckask.utils.schema.ddl import table_line
from duckask.utils.schema.ranker import choice_without_llm, keep_columns, rank_tables, with_parents
from duckask.utils.schema.values import from_entities, match_flags, match_values, whole_names
from duckask.utils.turn import Turn

PROMPT = """Tables:
{tables}
Question: {question}
Which of these tables does a SQL query need to answer the question? Include tables needed for joins.
Reply in YAML only:
tables: [table_a, table_b]
"""
REPLY = "tables: ["      # the reply starts here and stops at "]": no fence, no second key to decode
LINE_COLUMNS = 8   # a wide table's columns in its line: keys, those the question needs (``ranker.keep_columns``)


#: A retrieved example's tables gain this much score, times the example's similarity (0..1): about a
#: table-name match, so an example's tables reach the shortlist without outranking a literal value.
EXAMPLE_BONUS = 6.0


def _rank(cat, question: str, examples: list, db=None) -> dict:
    """The pre-ranking, the value hints for SQLGenerator (literal values of the question found in the data: a name's
    whole phrase before the columns holding one of its words, common words only from the tables the question names;
    then yes/no flag columns it names: hints only, since a flag such as ``playoffs`` sits in many tables and must
    not sway the ranking), and the example pairs most like the question."""
    seen = set(cat.visible(question))     # public models: what they read stays out unless the question names it
    links = from_entities(cat, question, whole_names(db, cat, question, match_values(cat, question)))
    values = [v for v in links if v.table in seen]
    ranked = [r for r in rank_tables(cat, question, values) if r.table in seen]
    by_name = {r.table: r for r in ranked}
    for ex, score in examples:
        for t in ex.tables:
            if t in by_name:
                by_name[t].score += EXAMPLE_BONUS * score
                by_name[t].reasons.append(f"example {ex.id}")
    ranked.sort(key=lambda r: (-r.score, r.table))
    flags = [f for f in match_flags(cat, question) if f.table in seen]
    return {"values": values + flags, "ranked": ranked, "examples": examples}


class TableSelector(TracedNode):
    def __init__(self, ctx):
        super().__init__(ctx, max_retries=2)

    def prep(self, shared: Turn):
        return {"question": shared["question"], "previous": shared.get("previous_turn")}

    def _rank(self, question: str, previous: dict | None) -> dict:
        s = self.ctx.settings
        found = retrieve(question, self.ctx.examples, s.example_count, s.example_threshold)   # then learned ones:
        found += retrieve(question, self.ctx.learned, s.example_count - len(found), s.example_threshold)  # slots left
        if previous:        # a follow-up: the previous turn's pair is the most relevant example there is
            pair = Example(question=previous["question"], sql=previous["sql"], id="previous turn",
                           tables=previous.get("tables") or tables_of(previous["sql"]))
            found = [(pair, 1.0)] + [f for f in found if f[0].sql != pair.sql][: max(0, s.example_count - 1)]
        return _rank(self.ctx.catalog, question, found, self.ctx.db)

    def ranked_choice(self, p):     # the ranking, and its choice where it needs no LLM (warm reads it too)
        out = self._rank(p["question"], p["previous"])
        return out, choice_without_llm(self.ctx.catalog, out["ranked"], self.ctx.settings)

    def exec(self, p):
        cat, s = self.ctx.catalog, self.ctx.settings
        out, decided = self.ranked_choice(p)
        if decided:
            return {**out, "selected": decided[0], "by": decided[1]}
        shortlist = [r.table for r in out["ranked"][: s.table_shortlist]]
        shown = keep_columns(cat, shortlist, p["question"], out["values"], LINE_COLUMNS)   # what the question names
        text = "\n".join(table_line(cat.tables[t], shown.get(t)) for t in shortlist)
        reply = self.ctx.llm.complete([{"role": "user", "content": PROMPT.format(tables=text, question=p["question"])}],
                                      node="TableSelector", prefix=REPLY, stop=["]"], max_tokens=60)
        picked = parse_yaml(reply.text.rstrip().removesuffix("]") + "]", {"tables": list})["tables"]
        lookup = {t.lower(): t for t in shortlist}
        chosen = [lookup[str(x).strip().lower()] for x in picked if str(x).strip().lower() in lookup]
        if not chosen:
            raise ValueError(f"none of {picked!r} is in the shortlist")
        return {**out, "selected": with_parents(cat, list(dict.fromkeys(chosen))), "by": "llm"}

    def exec_fallback(self, p, exc):
        cat = self.ctx.catalog
        out = self._rank(p["question"], p["previous"])
        # The LLM's pick failed twice: the pre-ranker's top 3 (and their parents).
        return {**out, "selected": with_parents(cat, [r.table for r in out["ranked"][:3]]), "by": "fallback"}

    def post(self, shared: Turn, p, res):
        shared["value_matches"] = [asdict(v) for v in res["values"]]
        shared["examples"] = [{**ex.as_dict(), "similarity": score} for ex, score in res["examples"]]
        shared["selected_tables"] = res["selected"]
        shared["tables_by"] = res["by"]
        return "default"

    def trace_detail(self, shared: Turn):
        return {"tables_by": shared.get("tables_by")}
