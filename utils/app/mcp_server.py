"""``duckask mcp``: an MCP server over stdio for AI agents (the official ``mcp`` SDK, extra ``server``).

Tools, on the same graph and safe executor as everything else:
- ``ask(question)``: the answer, the SQL, the columns and up to ``MAX_ROWS`` rows;
- ``run_sql(sql)``: one read-only SELECT through the safe executor; a refusal or DuckDB error comes
  back as a tool error with the reason;
- ``describe_schema(table?)``: the schema text the model sees (all tables, or one);
- ``propose_write(change)``: a statement, or a change in plain English, becomes a card recorded in the
  audit log (pending with ``--allow-writes``, else blocked); nothing is ever approved here: a person
  runs ``duckask decide ID``.
Resource ``duckask://schema``: the same schema text. The embedded model answers one question at a
time (a lock); stdout carries only the protocol.

Run on its own::

    python -m duckask.utils.app.mcp_server --db PATH
"""
from __future__ import annotations

import argparse
import dataclasses
import threading
from typing import Any

MAX_ROWS = 50

INSTRUCTIONS = ("duckask answers plain-English questions about one DuckDB database. Use describe_schema to see "
                "its tables, ask for a question in words, run_sql for your own SQL. Everything is read-only: "
                "only one SELECT statement runs, on a locked-down connection with a timeout and a row cap.")


def build_server(db: str | None = None, *, llm=None, settings=None, allow_writes: bool = False, **options: Any):
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from duckask.utils.app.api import new_shared, prepare, run_turn
    from duckask.utils.app.present import for_agent
    from duckask.utils.app.present_sql import outcome_json
    from duckask.utils.schema.ddl import render_schema

    # Read-only whatever the config says: an agent cannot approve a write for a human (a pasted write is
    # blocked, and recorded in the audit log).
    prep = prepare(db, llm=llm, settings=settings, **{**options, "allow_writes": False})
    # propose_write leaves cards for a person (with --allow-writes) and never approves one: no one to ask
    proposer = dataclasses.replace(prep, settings=dataclasses.replace(prep.settings, allow_writes=allow_writes))
    lock = threading.Lock()
    server = MCPServer("duckask", instructions=INSTRUCTIONS)

    @server.tool(description="Answer a plain-English question about the database. duckask writes one read-only "
                             "SQL query, runs it safely, checks the result and explains it. Returns the answer, "
                             f"the SQL, the columns and up to {MAX_ROWS} rows, and a confidence (level high, "
                             "medium or low, with the reasons): treat a low answer as a lead to check, not a fact.")
    def ask(question: str) -> dict:
        if not question.strip():
            raise ToolError("the question is empty: ask something about the data")
        with lock:
            r = run_turn(prep, new_shared(question))
        return for_agent(r, MAX_ROWS)

    @server.tool(description="Run one read-only SQL SELECT (DuckDB dialect) on the database and return its "
                             f"columns and up to {MAX_ROWS} rows. Anything else (DDL, DML, file or network "
                             "access, settings) is refused with the reason.")
    def run_sql(sql: str) -> dict:
        out = prep.run_sql(sql)
        if not out.ok:
            raise ToolError(out.error or out.status)
        d = outcome_json(out, MAX_ROWS)
        return {k: d[k] for k in ("columns", "rows", "row_count", "truncated")}

    @server.tool(description="The database's schema as duckask's model sees it: CREATE TABLE statements with "
                             "keys, column descriptions and sample values. Give a table name for one table.")
    def describe_schema(table: str | None = None) -> str:
        if table and table not in prep.catalog.tables:
            raise ToolError(f"no table {table!r}; tables: {', '.join(prep.catalog.tables)}")
        return render_schema(prep.catalog, [table] if table else None)

    @server.tool(description="The semantic layer's metrics and dimensions (name, meaning, formula, synonyms, "
                             "values): questions that name a metric are answered by a plan MetricFlow compiles.")
    def list_metrics() -> dict:
        from duckask.utils.semantic.catalog import summary
        from duckask.utils.semantic.manifest import layer_for

        layer = layer_for(prep.settings)
        if layer is None:
            raise ToolError("this database has no semantic file in dbt's format (duckask semantic init --db ... "
                            "writes a draft; pass it with --semantic)")
        return summary(layer)

    @server.tool(description="Propose a change to the database: give the SQL statement, or the change in plain "
                             "English (the model writes the statement). Returns its card (tier T1 data, T2 schema, "
                             "T3 always refused; SQL; what it does; estimated rows) and its audit id. It NEVER "
                             "writes: a person approves it with `duckask decide ID --db ...`. With writes off "
                             "(the server's --allow-writes), the card says it is blocked.")
    def propose_write(change: str) -> dict:
        from duckask.utils.db import writes
        from duckask.utils.db.tiers import is_write

        if not change.strip():
            raise ToolError("the change is empty: give a statement or say what to change")
        if is_write(change):
            card = writes.propose(change, prep.database, proposer.settings, session="mcp", user="mcp agent")
        else:
            with lock:
                r = run_turn(proposer, new_shared(change))
            if r.write is None:
                raise ToolError("this reads as a question, not a change: use ask (or give the statement)")
            card = r.write
        return {**{k: v for k, v in card.public().items() if k not in ("decided_by",)},
                "to_approve": f"duckask decide {card.id} --db {prep.database.source}"
                if card.decision == "pending" else None}

    @server.resource("duckask://schema", name="schema", description="The schema text the model sees.",
                     mime_type="text/plain")
    def schema_text() -> str:
        return render_schema(prep.catalog)

    return server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="duckask as an MCP server over stdio.")
    ap.add_argument("--db")
    ap.add_argument("--config")
    ap.add_argument("--allow-writes", action="store_true",
                    help="propose_write leaves pending cards for a person (it never approves one)")
    args = ap.parse_args(argv)
    build_server(args.db, config=args.config, allow_writes=args.allow_writes).run("stdio")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
