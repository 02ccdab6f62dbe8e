"""PlanQuery: when the question names a metric of the semantic file, the model writes a small plan (not
SQL) and MetricFlow compiles it; otherwise, or when the plan does not hold, the SQL path runs as before.

Whether the plan path is tried is decided without the model: the question's words must reach a metric's name or one of
its synonyms (``duckask.utils.semantic.reading.reaches``), or ask for a list of an entity the file models ("List the
teams in California": ``reaches_list``), which a plan without a metric answers (the values of its dimensions,
MetricFlow's dimension-values query). The prompt starts with the layer's catalog, the same bytes for every question on
a database (the model keeps its state). The reply is pre-filled with ``metrics: [`` and stops at a blank line; on the
embedded model (``plan_grammar: on``; off by default) a grammar of the catalog's names holds it to names that exist
(``semantic.grammar``). A plan that groups by a dimension while the question names one of its values is made to filter
on that value instead (``plan.filter_named`` over ``catalog.value_links``: "the 1927 New York Yankees" grouped by team
name with ``limit: 1`` was any team's row). A plan that does not parse, names what the catalog lacks, that MetricFlow
cannot compile, or that does not cover the question (``semantic.coverage.gate``, without the model: a "who" answered
with a number, a limit or a filter the question does not state, a time it states and the plan leaves out, a thing it
asks about that the plan's models are not), sends the question on the SQL path ("sql"); SQLExecutor and ResponseGrader
send it there too ("fallback") when the plan's SQL fails, finds nothing or is judged wrong. ``shared["plan"]`` records
what happened and ``shared["path"]`` which path answered. MetricFlow's nested SQL is shown and run as a person would
write it (``sql.readable``).

With ``candidates`` on, a plan and the SQL path's drafts are candidates of each other ("both"): SQLExecutor votes
over the plan's query (``plan_sql``) and the drafts; the path is the one whose query the vote chose.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.schema.values import match_values
from duckask.utils.semantic.compile import compile_plan
from duckask.utils.semantic.coverage import column_words, gate
from duckask.utils.semantic.grammar import plan_grammar
from duckask.utils.semantic.plan import PlanError, describe, filter_named, labelled, parse_plan
from duckask.utils.semantic.plan_prompt import PREFIX, build_messages
from duckask.utils.semantic.reading import reaches, reaches_list, value_links
from duckask.utils.sql.readable import readable
from duckask.utils.turn import Turn, answered_by, set_query, tried


class PlanQuery(TracedNode):
    def prep(self, shared: Turn):
        layer, mode = self.ctx.semantic, self.ctx.settings.plan_path
        off = ("plan_path is off" if mode == "off" else "no semantic file in dbt's format" if layer is None
               else "the semantic file is a draft (review it, then remove draft: true)"
               if layer.draft and mode == "auto" else None)
        # Raced only when nothing is confirmed by hand: with confirm on, the user sees the one query that runs.
        race = self.ctx.settings.candidates > 0 and not self.ctx.settings.confirm
        schema = {t.name: {c.name: c.type for c in t.columns} for t in self.ctx.catalog.tables.values()}
        return {"question": shared["question"], "layer": layer, "off": off, "race": race, "schema": schema,
                "catalog": self.ctx.catalog,
                "grammar": self.mode(self.ctx.settings.plan_grammar, "on") == "on" and not self.ctx.llm.is_endpoint}

    def exec(self, p):
        if p["off"]:
            return {"path": "sql", "why": p["off"]}
        layer = p["layer"]
        reached = reaches(p["question"], layer) or [f"list of {e}" for e in reaches_list(p["question"], layer)]
        if not reached:
            return {"path": "sql", "why": "the question names no metric of the semantic file"}
        msgs, stable = build_messages(layer, p["question"], listing=reached[0].startswith("list of "))
        grammar = {"grammar": plan_grammar(layer)} if p["grammar"] else {}    # only the catalog's names
        reply = self.ctx.llm.complete(msgs, node="PlanQuery", prefix=PREFIX, stop=["\n\n", "```", "Question:"],
                                      max_tokens=96, stable=stable, **grammar)
        text = reply.text if reply.text.startswith(PREFIX) else PREFIX + reply.text
        try:
            plan = parse_plan(text, layer)
            links = value_links(layer, match_values(p["catalog"], p["question"]))
            filtered = filter_named(plan, links)
            sql = readable(compile_plan(layer, plan), p["schema"])      # what a person would write
            uncovered = gate(p["question"], plan, layer, [v for _, v in links], column_words(p["catalog"]))
            if uncovered:           # the plan answers another question: the SQL path, without running it
                return {"path": "sql", "why": f"the plan does not cover the question: {uncovered[1]}",
                        "gate": uncovered[0], "reached": reached, "text": text, "plan": plan.as_dict()}
        except PlanError as e:
            return {"path": "sql", "why": str(e), "reached": reached, "text": text}
        return {"path": "plan", "reached": reached, "text": text, "plan": plan.as_dict(), "sql": sql,
                "filtered": filtered, "shown": labelled(plan),
                "derivation": describe(plan, layer), "logprob": getattr(reply, "mean_logprob", None)}

    def exec_fallback(self, p, exc):
        return {"path": "sql", "why": f"the LLM call failed: {exc}"}

    def trace_detail(self, shared: Turn):
        gated = shared.get("plan") or {}
        return {k: gated[k] for k in ("gate", "why")} if gated.get("gate") else {}

    def post(self, shared: Turn, p, res):
        sql, shared["plan"] = res.pop("sql", None), res     # the query is the turn's; the rest is the plan's record
        answered_by(shared, res["path"])
        if res["path"] != "plan":
            return "sql"
        tried(shared, sql, first=True, source="plan", after="question")
        if p["race"]:       # the SQL path drafts too; SQLExecutor votes over the plan's query and its drafts
            shared["plan"]["raced"] = True
            answered_by(shared, "sql")
            shared["plan_sql"] = {"sql": sql, "logprob": res.get("logprob")}
            return "both"
        set_query(shared, sql, candidates=[sql], error=None)
        return "planned"
