"""ResolveFollowUp: turn a follow-up into one standalone question, from the conversation's history.

"and in 2018?", "only the left-handed ones", "sort that by salary" become the previous question
with the year swapped or the restriction appended, by deterministic rules
(``duckask.utils.dialogue.followup``); a turn they cannot rewrite ("how many of them are still
active?", "what about the Yankees?") costs one short LLM call shown the previous question and a line
of its answer. The result is ``resolved_question``: shown to the user, recorded in the trace, and
the question every later node works on. The previous turn's question and SQL also go to
TableSelector as ``previous_turn``: its tables rank first and SQLGenerator sees the pair as an
example, which is how "sort that by salary" keeps the previous query's joins and filters.

Setting ``follow_ups``: ``auto`` (rules, then the LLM), ``rules`` (rules only; otherwise the turn is
kept as typed, with the previous pair as context), ``llm`` (the LLM rewrites every follow-up),
``off`` (no resolution, no context). A turn that is not a follow-up, or the first turn, passes
through untouched.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.dialogue.followup import PROMPT, clean_rewrite, rewrite
from duckask.utils.turn import Turn, restate


def _previous(history: list[dict]) -> dict | None:
    """The last data turn (a question or the user's SQL)."""
    return next((t for t in reversed(history or []) if t.get("intent") in ("data", "sql")), None)


class ResolveFollowUp(TracedNode):
    def __init__(self, ctx):
        super().__init__(ctx, max_retries=2)

    def prep(self, shared: Turn):
        prev = _previous(shared.get("history") or [])
        return {"text": shared["question"], "follow_up": bool(shared.get("follow_up")), "previous": prev,
                "mode": self.ctx.settings.follow_ups}

    def exec(self, p):
        prev = p["previous"]
        if not p["follow_up"] or prev is None or p["mode"] == "off":
            return {"question": p["text"], "by": None}
        previous_q = prev.get("resolved_question") or prev.get("text") or ""
        if p["mode"] in ("auto", "rules"):
            out, rule = rewrite(p["text"], previous_q)
            if out:
                return {"question": out, "by": rule}
            if p["mode"] == "rules":
                return {"question": p["text"], "by": "kept (no rule applies)"}
        reply = self.ctx.llm.complete([{"role": "user", "content": PROMPT.format(
            previous=previous_q, answer=(prev.get("answer") or "")[:200], text=p["text"])}],
            node="ResolveFollowUp", max_tokens=60, stop=["\n"])
        return {"question": clean_rewrite(reply.text, p["text"], previous_q), "by": "llm"}

    def exec_fallback(self, p, exc):
        # No usable rewrite: keep the turn as typed; the previous pair still goes along as context.
        return {"question": p["text"], "by": f"kept (rewrite failed: {exc})"}

    def trace_detail(self, shared: Turn):
        return {"resolved_question": shared.get("resolved_question"), "by": shared.get("resolved_by")}

    def post(self, shared: Turn, p, res):
        shared["resolved_by"] = res["by"]
        prev = p["previous"]
        if res["by"] is not None and prev and prev.get("sql") and prev.get("status") == "answered":
            shared["previous_turn"] = {"question": prev.get("resolved_question") or prev.get("text"),
                                       "sql": prev["sql"], "tables": prev.get("tables") or []}
        restate(shared, res["question"], resolved=res["question"])
        if self.ctx.on_understood and res["by"] is not None and res["question"] != p["text"]:
            self.ctx.on_understood(res["question"])     # said before the answer it explains
        return "default"
