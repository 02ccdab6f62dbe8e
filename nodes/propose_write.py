"""ProposeWrite: a change asked in plain English becomes one statement with a one-line explanation.

IntentRouter sends a change request here ("add an index on batting(year_id)", "delete the 2019
all-star entries for the Yankees") through TableSelector and SchemaLookup, so the prompt shows the
tables the request touches. The model writes one statement; it never runs from here:

- a statement that changes anything goes to ReviewWrite (``write``): the same tiers, card, estimate,
  approval, transaction and audit as a typed statement, with the request on the card and in the audit
  (T3 is refused there with its reason; with writes off the answer says what was proposed and how to
  turn writes on, and nothing waits);
- a SELECT (the request was a question after all) is answered as one (``read``: ClarifyQuery on);
- no statement after two tries: the answer says so and asks for the SQL.
"""
from __future__ import annotations

import re

from duckask.nodes._base import TracedNode
from duckask.utils.db.ast import statement_types
from duckask.utils.knowledge.examples import shown
from duckask.utils.schema.values import hints
from duckask.utils.turn import KEEP, Turn, finish, route, set_query, tried
from duckask.utils.writes.tiers import is_write

PROMPT = """You maintain a DuckDB database for its administrator. The tables this request touches:
{schema}
{examples}{values}
Request: {request}

Write ONE DuckDB statement that does exactly what was asked: INSERT, UPDATE or DELETE for data; CREATE
INDEX, CREATE VIEW, CREATE TABLE, ALTER TABLE (add, rename or retype a column) or COMMENT ON for the
schema. Use only the tables and columns above, and values as the data spells them (codes and ids as
the sample values and verified queries show). Keep every condition the request states (a year, a team,
a person) in the WHERE. An INSERT gives every key and NOT NULL column a value (a clearly made-up id
such as 'test01' when the request names none). Quote a column named like an SQL keyword ("from"). Write what was
asked even if it drops, empties or exports something: rules and a person decide whether it runs
(DROP, TRUNCATE, COPY and several statements are always refused). If the request only asks a
question, write the SELECT that answers it. Reply as:
```sql
the statement
```
Explanation: what it changes, in one plain sentence."""

_FENCED = re.compile(r"```(?:sql|duckdb)?\s*\n?(.*?)(?:```|$)", re.S | re.I)
_EXPLANATION = re.compile(r"explanation\s*:\s*(.+)", re.I)
_STATEMENT = re.compile(r"(with|select|from|insert|update|delete|create|alter|comment|drop|truncate|copy|export|"
                        r"install|load|attach|detach|set|pragma|replace|merge|call|vacuum|checkpoint)\b", re.I)


def parse_proposal(reply: str) -> tuple[str, str | None]:
    """(the statement(s), the model's one-line explanation or None) from a reply; ValueError without SQL.
    Every statement is kept: several are refused by the tiers, not silently cut to the first."""
    m = _FENCED.search(reply)
    body, rest = (m.group(1), reply[m.end():]) if m else (reply, reply)
    sql = _EXPLANATION.split(body)[0].strip().rstrip(";").strip()
    if not _STATEMENT.match(sql):
        raise ValueError(f"no statement in the reply {reply[:80]!r}")
    why = _EXPLANATION.search(rest)
    lines = [line.strip(" -#*`\"") for line in rest.splitlines() if line.strip(" -#*`\"")] if m else []
    said = why.group(1).strip().strip('"') if why else (lines[0] if lines else "")   # an unlabelled line will do
    return sql, said[:200] or None


class ProposeWrite(TracedNode):
    def __init__(self, ctx):
        super().__init__(ctx, max_retries=2)

    def prep(self, shared: Turn):
        values = shared.get("value_matches") or []
        return {"request": shared["question"], "schema": shared.get("table_schemas") or "",
                "values": hints(values[:4]), "examples": shown((shared.get("examples") or [])[:3])}

    def exec(self, p):
        values = f"Values found in the data: {p['values']}\n" if p["values"] else ""
        examples = f"Verified queries on this database (they show its codes and joins):\n{p['examples']}\n" \
            if p["examples"] else ""
        prompt = PROMPT.format(schema=p["schema"], examples=examples, values=values, request=p["request"])
        reply = self.ctx.llm.complete([{"role": "user", "content": prompt}], node="ProposeWrite",
                                      prefix="```sql\n", max_tokens=256, stable=prompt.split("\nRequest:")[0])
        sql, explanation = parse_proposal(reply.text)
        # only a statement that parses as SELECTs is a read; one that does not parse is refused on its card
        return {"sql": sql, "explanation": explanation, "write": not statement_types(sql) or is_write(sql)}

    def exec_fallback(self, p, exc):
        return {"sql": None, "explanation": None, "write": False, "error": str(exc)}

    def trace_detail(self, shared: Turn):
        return {"proposed": shared.get("sql_query") if shared.get("change_request") else None}

    def post(self, shared: Turn, p, res):
        if not res["sql"]:
            finish(shared, "error", f"I could not turn this request into one SQL statement ({res['error']}). "
                                    "Rephrase it, or write the statement yourself (it gets the same card).")
            return None
        tried(shared, res["sql"], first=res["write"], source="model change", after="request")
        if not res["write"]:                 # a question after all: answered as one
            route(shared, "data")
            return "read"
        set_query(shared, res["sql"], "model", candidates=KEEP)
        shared.update({"change_request": p["request"], "change_explanation": res["explanation"]})
        return "write"
