"""SchemaLookup: compact DDL (keys, comments, sample values) for the selected tables.

The catalog is introspected once per database file and cached (``duckask.utils.schema``); this node
only renders. Wide tables are pruned by the ``column_pruning`` setting:
- ``budget``: when the DDL would exceed ``schema_char_budget`` characters (about 4 characters a
  token), tables wider than 12 columns show only their relevant columns (keys, columns matching the
  question or holding its values, name columns), the rest counted in a comment;
- ``wide``: every table wider than ``wide_table_columns`` shows its relevant columns (the same, plus
  the columns the retrieved example pairs use), and the others are named in one line, so the model
  knows they exist at a fraction of the tokens;
- ``off``: every column of every selected table.
No LLM call.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.knowledge.examples import columns_of
from duckask.utils.schema.ddl import render_schema
from duckask.utils.schema.ranker import keep_columns
from duckask.utils.schema.values import ValueMatch


class SchemaLookup(TracedNode):
    def prep(self, shared):
        return {"tables": shared["selected_tables"], "question": shared["question"],
                "values": [ValueMatch(**v) for v in shared.get("value_matches") or []],
                "example_sql": [e["sql"] for e in shared.get("examples") or []]}

    def exec(self, p):
        cat, s = self.ctx.catalog, self.ctx.settings
        known = [t for t in p["tables"] if t in cat.tables]
        if s.column_pruning == "wide":
            used = set().union(*(columns_of(sql) for sql in p["example_sql"])) if p["example_sql"] else set()
            keep = keep_columns(cat, known, p["question"], p["values"], s.wide_table_columns, used)
            return render_schema(cat, known, columns=keep, name_hidden=True)
        ddl = render_schema(cat, known)
        if s.column_pruning == "budget" and len(ddl) > s.schema_char_budget:
            ddl = render_schema(cat, known, columns=keep_columns(cat, known, p["question"], p["values"]))
        return ddl

    def post(self, shared, p, ddl):
        shared["table_schemas"] = ddl
        return "default"
