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

The text is laid out so that most questions on a database share its start (the embedded model then
reuses the processed prompt, ``stable_schema``): the tables come in a fixed order
(``ranker.stable_order``: those the database's example pairs use most, then the most referenced),
and a pruned table always shows the same columns (keys, names, the columns the database's example
pairs use: ``keep_columns`` without the question); the columns only this question needs follow the
DDL as comment lines (``render_more_columns``). Nothing the model saw before is left out.
No LLM call.
"""
from __future__ import annotations

from duckask.nodes._base import TracedNode
from duckask.utils.knowledge.examples import columns_of
from duckask.utils.schema.ddl import render_more_columns, render_schema
from duckask.utils.schema.ranker import keep_columns, stable_order
from duckask.utils.schema.values import ValueMatch
from duckask.utils.turn import Turn


class SchemaLookup(TracedNode):
    def prep(self, shared: Turn):
        return {"tables": shared["selected_tables"], "question": shared["question"],
                "values": [ValueMatch(**v) for v in shared.get("value_matches") or []],
                "example_sql": [e["sql"] for e in shared.get("examples") or []]}

    def exec(self, p):
        cat, s = self.ctx.catalog, self.ctx.settings
        known = [t for t in p["tables"] if t in cat.tables]
        if len(known) < len(cat.tables):
            known = stable_order(cat, known, [ex.tables for ex in self.ctx.examples])
        full = render_schema(cat, known)
        wide = s.column_pruning == "wide"
        if s.column_pruning == "off" or (s.column_pruning == "budget" and len(full) <= s.schema_char_budget):
            return {"schema": full, "stable": full}
        limit = s.wide_table_columns if wide else 12
        retrieved = set().union(*(columns_of(sql) for sql in p["example_sql"])) if wide and p["example_sql"] else None
        want = keep_columns(cat, known, p["question"], p["values"], limit, retrieved)
        database_wide = set().union(*(columns_of(ex.sql) for ex in self.ctx.examples)) if self.ctx.examples else None
        always = keep_columns(cat, known, "", [], limit, database_wide)
        stable = render_schema(cat, known, columns=always, name_hidden=wide)
        more = {t: [c for c in cols if c not in always.get(t, [])] for t, cols in want.items()}
        extra = render_more_columns(cat, {t: cols for t, cols in more.items() if cols})
        return {"schema": stable + ("\n" + extra if extra else ""), "stable": stable}

    def post(self, shared: Turn, p, res):
        shared["table_schemas"] = res["schema"]
        shared["stable_schema"] = res["stable"]
        return "change" if shared.get("intent") == "change" else "default"   # a change request: ProposeWrite
