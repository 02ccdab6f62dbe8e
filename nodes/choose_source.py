"""ChooseSource: which source answers this turn: the database, an API tool, web search, or none.

The order of preference is the database, then the APIs (as configured), then the web (``utils/tools/route``).
With no tools configured (the default) it decides by rule, without the model: a data turn goes on to the
database path, a general one to AnswerGeneral. With tools, a greeting or thanks goes to AnswerGeneral without asking;
any other turn costs one short LLM call that names the source and the tool's arguments (on a real database
too many words match a stored value or a column for a rule to tell a data question from a film's title).

Actions: ``database`` (ClarifyQuery and the SQL path), ``tool`` (CallTool), ``none`` (AnswerGeneral).
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.tools.route import PREFIX, by_rule, fill_args, parse_choice, prompt
from duckask.utils.turn import Turn


class ChooseSource(TracedNode):
    def prep(self, shared: Turn):
        return {"question": shared["question"], "intent": shared.get("intent") or "data"}

    def exec(self, p):
        tools = self.ctx.tools
        rule = by_rule(p["question"], p["intent"], tools)
        if rule:
            return {"source": rule, "args": {}, "by": "no tools" if not tools else "rule"}
        reply = self.ctx.llm.complete([{"role": "user", "content": prompt(p["question"], self.ctx.catalog, tools)}],
                                      node="ChooseSource", prefix=PREFIX, stop=["\n\n"], max_tokens=48)
        source, args, by = parse_choice(reply.text, p["intent"], tools)
        tool = next((t for t in tools if t.name == source), None)
        return {"source": source, "args": fill_args(tool, args, p["question"]) if tool else {}, "by": by}

    def exec_fallback(self, p, exc):
        # The model could not be asked: the database (or the general answer) loses least.
        return {"source": "database" if p["intent"] == "data" else "none", "args": {}, "by": f"fallback ({exc})"}

    def trace_detail(self, shared: Turn):
        return {"source": (shared.get("source") or {}).get("source"), "by": (shared.get("source") or {}).get("by")}

    def post(self, shared: Turn, p, res):
        shared["source"] = res
        if res["source"] in ("database", "none"):
            return res["source"]
        return "tool"
