"""IntentRouter: what kind of turn this is, before anything else runs.

``data`` goes on to the graph (through ResolveFollowUp), ``schema`` to AnswerSchema, ``general`` to
AnswerGeneral, ``sql`` (the user's own SQL, pasted or given with ``ask --sql``) to ConfirmSQL and the
executor, or, when DuckDB's parser reads anything but SELECT in it, to ReviewWrite (action ``write``).
Deterministic rules decide first (``duckask.utils.dialogue.intent``: does it parse as SQL,
is it small talk, does it ask about tables or columns, does it name anything in the data); only a
turn they cannot place costs one short LLM call (one word back). Setting ``router``: ``auto``
(rules, then the LLM), ``rules`` (undecided turns are data), ``off`` (every turn is data).
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.dialogue.followup import is_follow_up
from duckask.utils.dialogue.intent import PROMPT, classify, parse_intent, sql_of
from duckask.utils.turn import Turn, route, set_query, tried
from duckask.utils.writes.tiers import is_write


class IntentRouter(TracedNode):
    def __init__(self, ctx):
        super().__init__(ctx, max_retries=2)

    def prep(self, shared: Turn):
        history = [t for t in shared.get("history") or [] if t.get("intent") in ("data", "sql")]
        return {"text": (shared.get("question") or "").strip(), "given_sql": shared.get("given_sql"),
                "has_history": bool(history), "mode": self.ctx.settings.router}

    def exec(self, p):
        if p["given_sql"]:
            return {"intent": "sql", "by": "caller", "follow_up": False}
        follow = p["has_history"] and is_follow_up(p["text"])
        if p["mode"] == "off":
            return {"intent": "data", "by": "router off", "follow_up": follow}
        intent, rule = classify(p["text"], self.ctx.catalog, follow)
        if intent is None and p["mode"] == "auto":
            tables = ", ".join(list(self.ctx.catalog.tables)[:40])
            reply = self.ctx.llm.complete([{"role": "user", "content": PROMPT.format(tables=tables, text=p["text"])}],
                                          node="IntentRouter", max_tokens=4)
            intent, rule = parse_intent(reply.text), "llm"
        return {"intent": intent or "data", "by": rule if intent else "undecided: data", "follow_up": follow}

    def exec_fallback(self, p, exc):
        # The LLM could not place it: attempting the question loses less than refusing it.
        return {"intent": "data", "by": f"fallback ({exc})", "follow_up": False}

    def trace_detail(self, shared: Turn):
        return {"intent": shared.get("intent"), "by": shared.get("intent_by")}

    def post(self, shared: Turn, p, res):
        route(shared, res["intent"])
        shared["intent_by"] = res["by"]
        shared["follow_up"] = res["follow_up"]
        if res["intent"] == "sql":
            sql = p["given_sql"] or sql_of(p["text"])
            set_query(shared, sql, "user")
            tried(shared, sql, first=True, source="user", after="question")
            if is_write(sql):
                return "write"       # ReviewWrite: tiers, approval, audit (a read-only query never goes there)
        return res["intent"]
