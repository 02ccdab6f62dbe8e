"""ClarifyQuery: decide whether the question can be attempted as asked, or must be asked back.

Default ("rules"): deterministic and free (``duckask.utils.dialogue.vague``). A question is asked back
only when it is truly underspecified: empty, a request with no subject ("show me the data"), a
"he"/"that team" with no conversation before it, a judgement with no measure ("who is the best?"),
or a fragment that names nothing in the database. A vocabulary gap (no word matches a table) is
attempted, not bounced. "llm" mode asks the model (YAML: ambiguous, clarifying_question) on top of
the rules; malformed replies are retried, then treated as clear. "off" skips the check.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.dialogue.vague import vagueness
from duckask.utils.llm.yaml_reply import parse_yaml
from duckask.utils.turn import Turn

PROMPT = """Database tables: {tables}
Question: {question}
Can this question be answered with one SQL query on these tables, without guessing what the user means?
Reply in YAML only:
ambiguous: true or false
clarifying_question: one short question to ask the user if ambiguous, else ""
"""


class ClarifyQuery(TracedNode):
    def __init__(self, ctx):
        super().__init__(ctx, max_retries=2)

    def prep(self, shared: Turn):
        return {"question": (shared.get("question") or "").strip(), "skip": bool(shared.get("clarified")),
                "mode": self.ctx.settings.clarify, "history": bool(shared.get("history"))}

    def exec(self, p):
        if p["skip"] or p["mode"] == "off":
            return None
        found = vagueness(p["question"], self.ctx.catalog, p["history"])
        if found or p["mode"] != "llm":
            return found
        tables = ", ".join(self.ctx.catalog.tables)
        prompt = PROMPT.format(tables=tables, question=p["question"])
        reply = self.ctx.llm.complete([{"role": "user", "content": prompt}], node="ClarifyQuery", max_tokens=80)
        data = parse_yaml(reply.text, {"ambiguous": bool})
        if data["ambiguous"]:
            q = (str(data.get("clarifying_question") or "").strip()
                 or "Could you say more precisely what you want to know?")
            return {"reason": "the model judged the question ambiguous", "question": q}
        return None

    def exec_fallback(self, p, exc):
        # A model that cannot produce valid YAML must not block the question: treat it as clear.
        return None

    def post(self, shared: Turn, p, found):
        if found is None:
            return "clear"
        shared["clarification"] = {"needed": True, **found}
        return "ambiguous"
