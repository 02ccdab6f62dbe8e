"""SchemaLookup: compact DDL (keys, comments, sample values) for the selected tables.

The catalog is introspected once per database file and cached (``duckask.utils.schema``); this node
only renders. When the DDL would exceed ``schema_char_budget`` characters (about 4 characters a
token), tables wider than 12 columns show only their relevant columns (keys, columns matching the
question or holding its values, name columns); the prompt stays bounded however wide the tables.
No LLM call.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.schema.ddl import render_ddl
from duckask.utils.schema.ranker import keep_columns
from duckask.utils.schema.values import ValueMatch


class SchemaLookup(TracedNode):
    def prep(self, shared):
        return {"tables": shared["selected_tables"], "question": shared["question"],
                "values": [ValueMatch(**v) for v in shared.get("value_matches") or []]}

    def exec(self, p):
        cat = self.ctx.catalog
        known = [t for t in p["tables"] if t in cat.tables]
        ddl = render_ddl(cat, known)
        if len(ddl) > self.ctx.settings.schema_char_budget:
            ddl = render_ddl(cat, known, columns=keep_columns(cat, known, p["question"], p["values"]))
        return ddl

    def post(self, shared, p, ddl):
        shared["table_schemas"] = ddl
        return "default"
