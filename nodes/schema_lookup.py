"""SchemaLookup: compact DDL (keys, comments, sample values) for the selected tables.

The catalog is introspected once per database file and cached (``duckask.utils.schema``); this node
only renders. No LLM call.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.schema import render_ddl


class SchemaLookup(TracedNode):
    def prep(self, shared):
        return shared["selected_tables"]

    def exec(self, tables):
        known = [t for t in tables if t in self.ctx.catalog.tables]
        return render_ddl(self.ctx.catalog, known)

    def post(self, shared, tables, ddl):
        shared["table_schemas"] = ddl
        return "default"
