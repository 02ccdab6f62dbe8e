"""AskUser: put ClarifyQuery's question to the user when someone is there to answer.

Interactive (the CLI on a terminal): ask, fold the answer into the question and continue.
Non-interactive (notebook, batch, --json): never read stdin; end with status ``needs_clarification``
and the clarifying question as the answer.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.turn import Turn, finish, restate


class AskUser(TracedNode):
    def prep(self, shared: Turn):
        return {"clarifying_question": shared["clarification"]["question"]}

    def exec(self, p):
        if self.ctx.ask_user is None:
            return None
        return (self.ctx.ask_user(p["clarifying_question"]) or "").strip() or None

    def post(self, shared: Turn, p, answer):
        if answer is None:
            finish(shared, "needs_clarification", p["clarifying_question"])
            return None
        restate(shared, f"{shared['question']} ({answer})" if shared.get("question") else answer)
        shared["clarified"] = answer
        return "answered"
