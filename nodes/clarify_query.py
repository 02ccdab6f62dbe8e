"""ClarifyQuery: decide whether the question can be answered from this database as asked.

Default ("rules"): deterministic and free. A question is ambiguous when it is empty, is a known vague
request ("show me the data"), or relates to nothing in the schema (no table, column, description or
data value matches any of its words) and carries no number or name that could be a filter. "llm" mode
asks the model (YAML: ambiguous, clarifying_question) on top of the rules; malformed replies are
retried, then treated as clear. "off" skips the check.
"""
from __future__ import annotations

import re

from duckask.nodes._base import TracedNode
from duckask.utils.llm.yaml_reply import parse_yaml
from duckask.utils.schema.ranker import rank_tables
from duckask.utils.schema.values import match_values

_VAGUE = re.compile(
    r"^\s*(show|give|tell|get)( me)?( (all|some|the|any))? (data|stuff|things|info|information|everything|something)"
    r"|^\s*(what'?s|anything) (interesting|new|up)|^\s*(help|hi|hello|test)\b", re.I)

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

    def prep(self, shared):
        return {"question": (shared.get("question") or "").strip(), "skip": bool(shared.get("clarified")),
                "mode": self.ctx.settings.clarify}

    def _rules(self, question: str) -> dict | None:
        cat = self.ctx.catalog
        if not question:
            return {"reason": "the question is empty", "question": "What would you like to know about this database?"}
        if _VAGUE.search(question):
            return {"reason": "the request is too vague to turn into one query",
                    "question": "Which figures do you want to see, and about what (e.g. a table, a person, a year)?"}
        # "Nothing in the schema matches" is not trusted when the question carries a number or a
        # name: then it is more likely a vocabulary gap ("nations founded after 1950" for table
        # country) than an unrelated request, and an attempt can be right where asking back cannot.
        ranked = rank_tables(cat, question, match_values(cat, question))
        words = question.split()
        specific = any(any(ch.isdigit() for ch in w) or (i > 0 and w[:1].isupper()) for i, w in enumerate(words))
        if not specific and (not ranked or ranked[0].score <= 0):
            names = ", ".join(list(cat.tables)[:12])
            return {"reason": "no table, column or value in this database matches the question's words",
                    "question": f"I couldn't relate the question to this database (tables: {names}). "
                                "Which of these, or which field, do you mean?"}
        return None

    def exec(self, p):
        if p["skip"] or p["mode"] == "off":
            return None
        found = self._rules(p["question"])
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

    def post(self, shared, p, found):
        if found is None:
            return "clear"
        shared["clarification"] = {"needed": True, **found}
        return "ambiguous"
