"""``duckask mcp``: an MCP server over stdio for AI agents (the official ``mcp`` SDK, extra ``server``).

Tools, on the same graph and safe executor as everything else:
- ``ask(question)``: the answer, the SQL, the columns and up to ``MAX_ROWS`` rows;
- ``run_sql(sql)``: one read-only SELECT through the safe executor; a refusal or DuckDB error comes
  back as a tool error with the reason;
- ``describe_schema(table?)``: the schema text the model sees (all tables, or one);
- ``teach(question, sql)``: a checked pair kept (``knowledge.keep``: it must run and return rows; audited), which
  answers the same question with other values from then on (``ask``'s ``path: template``, with ``template``
  naming the pair);
- ``propose_write(change)``: a statement, or a change in plain English, becomes a card recorded in the
  audit log (pending with ``--allow-writes``, else blocked); nothing is ever approved here: a person
  runs ``duckask decide ID``.
Resource ``duckask://schema``: the same schema text. The embedded model answers one question at a
time (a lock); stdout carries only the protocol. Every request read before stdin closes is answered
before the server exits (``AnswerBeforeEnd``): a client may write its requests and close stdin at once.

Run on its own::

    python -m duckask.utils.app.mcp_server --db PATH
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO, cast

if TYPE_CHECKING:
    import anyio
    from anyio import AsyncFile

MAX_ROWS = 50

INSTRUCTIONS = ("duckask answers plain-English questions about one DuckDB database. Use describe_schema to see "
                "its tables, ask for a question in words, run_sql for your own SQL. Everything is read-only: "
                "only one SELECT statement runs, on a locked-down connection with a timeout and a row cap.")


#: What each tool tells an agent it does (its description in the MCP listing).
TOOL_DESCRIPTIONS = {
    "ask": "Answer a plain-English question about the database. duckask writes one read-only SQL query, runs it "
           "safely, checks the result and explains it. Returns the answer, the SQL, the columns and up to "
           f"{MAX_ROWS} rows, and a confidence (level high, medium or low, with the reasons): treat a low answer as "
           "a lead to check, not a fact. path 'template' means it came from a kept pair (template names it).",
    "run_sql": f"Run one read-only SQL SELECT (DuckDB dialect) on the database and return its columns and up to "
               f"{MAX_ROWS} rows. Anything else (DDL, DML, file or network access, settings) is refused with the "
               "reason.",
    "describe_schema": "The database's schema as duckask's model sees it: CREATE TABLE statements with keys, column "
                       "descriptions and sample values. Give a table name for one table.",
    "list_metrics": "The semantic layer's metrics and dimensions (name, meaning, formula, synonyms, values): "
                    "questions that name a metric are answered by a plan MetricFlow compiles.",
    "propose_write": "Propose a change to the database: give the SQL statement, or the change in plain English (the "
                     "model writes the statement). Returns its card (tier T1 data, T2 schema, T3 always refused; "
                     "SQL; what it does; estimated rows) and its audit id. It NEVER writes: a person approves it "
                     "with `duckask decide ID --db ...`. With writes off (the server's --allow-writes), the card "
                     "says it is blocked.",
    "teach": "Teach duckask a question and the SQL that answers it right (after checking an answer, or fixing a "
             "wrong one). The SQL runs once through the safe executor and the pair is kept only if it runs and "
             "returns rows; from then on the same question, or the same one with other values (a year, a name that "
             "is a value of its column), is answered from it without the model (ask's path: template). Recorded in "
             "the audit log.",
}


class Tools:
    """The tools of one server, each a method named as the tool: ``prep`` (read-only whatever the config says: an
    agent cannot approve a write for a human; a pasted write is blocked and audited), ``proposer`` (the same with
    the server's ``allow_writes``: propose_write leaves cards for a person and never approves one) and one lock
    (the embedded model answers one question at a time)."""

    def __init__(self, prep, allow_writes: bool):
        self.prep = prep
        self.proposer = dataclasses.replace(prep, settings=dataclasses.replace(prep.settings,
                                                                               allow_writes=allow_writes))
        self.lock = threading.Lock()

    def _turn(self, prep, text: str):
        """``text`` run as one turn under the lock; over ``config.MAX_QUESTION`` characters a tool error, before
        any LLM call."""
        from mcp.server.mcpserver.exceptions import ToolError

        from duckask.utils.api import QuestionTooLong, new_shared, run_turn

        try:
            shared = new_shared(text)
        except QuestionTooLong as e:
            raise ToolError(str(e)) from None
        with self.lock:
            return run_turn(prep, shared)

    def ask(self, question: str) -> dict:
        from mcp.server.mcpserver.exceptions import ToolError

        from duckask.utils.api.present import for_agent

        if not question.strip():
            raise ToolError("the question is empty: ask something about the data")
        return for_agent(self._turn(self.prep, question), MAX_ROWS)

    def run_sql(self, sql: str) -> dict:
        from mcp.server.mcpserver.exceptions import ToolError

        from duckask.utils.api.present_sql import outcome_json

        out = self.prep.run_sql(sql)
        if not out.ok:
            raise ToolError(out.error or out.status)
        d = outcome_json(out, MAX_ROWS)
        return {k: d[k] for k in ("columns", "rows", "row_count", "truncated")}

    def describe_schema(self, table: str | None = None) -> str:
        from mcp.server.mcpserver.exceptions import ToolError

        from duckask.utils.schema.ddl import render_schema

        if table and table not in self.prep.catalog.tables:
            raise ToolError(f"no table {table!r}; tables: {', '.join(self.prep.catalog.tables)}")
        return render_schema(self.prep.catalog, [table] if table else None)

    def list_metrics(self) -> dict:
        from mcp.server.mcpserver.exceptions import ToolError

        from duckask.utils.semantic.manifest import layer_for
        from duckask.utils.semantic.reading import summary

        layer = layer_for(self.prep.settings)
        if layer is None:
            raise ToolError("this database has no semantic file in dbt's format (duckask semantic init --db ... "
                            "writes a draft; pass it with --semantic)")
        return summary(layer)

    def propose_write(self, change: str) -> dict:
        from mcp.server.mcpserver.exceptions import ToolError

        from duckask.utils.state import writes
        from duckask.utils.writes.tiers import is_write

        if not change.strip():
            raise ToolError("the change is empty: give a statement or say what to change")
        if is_write(change):
            card = writes.propose(change, self.prep.database, self.proposer.settings, session="mcp",
                                  user="mcp agent")
        else:
            r = self._turn(self.proposer, change)
            if r.write is None:
                raise ToolError("this reads as a question, not a change: use ask (or give the statement)")
            card = r.write
        return {**{k: v for k, v in card.public().items() if k not in ("decided_by",)},
                "to_approve": f"duckask decide {card.id} --db {self.prep.database.source}"
                if card.decision == "pending" else None}

    def teach(self, question: str, sql: str) -> dict:
        from mcp.server.mcpserver.exceptions import ToolError

        from duckask.utils.access.roles import User
        from duckask.utils.api import QuestionTooLong, new_shared
        from duckask.utils.knowledge.examples import ExampleError
        from duckask.utils.knowledge.keep import keep

        try:
            new_shared(question)          # the question's own limits (empty is checked by keep)
            kept = keep(self.prep.database, self.prep.settings, question, sql, user=User("mcp agent", "approver"),
                        session="mcp")
        except QuestionTooLong as e:
            raise ToolError(str(e)) from None
        except ExampleError as e:
            raise ToolError(f"not kept: {e}") from None
        return {**kept.as_dict(), "rows": len(self.prep.database.run(kept.sql).df)}

    def schema_text(self) -> str:
        from duckask.utils.schema.ddl import render_schema

        return render_schema(self.prep.catalog)


def build_server(db: str | None = None, *, llm=None, settings=None, allow_writes: bool = False, **options: Any):
    """The MCP server for one named database: each of ``Tools``' methods a tool, and ``duckask://schema``."""
    from mcp.server.mcpserver import MCPServer

    from duckask.utils.api import need_db, prepare

    prep = prepare(need_db(db, "build_server()"), llm=llm, settings=settings, **{**options, "allow_writes": False})
    tools = Tools(prep, allow_writes)
    server = MCPServer("duckask", instructions=INSTRUCTIONS)
    for name, description in TOOL_DESCRIPTIONS.items():
        server.tool(name=name, description=description)(getattr(tools, name))
    server.resource("duckask://schema", name="schema", description="The schema text the model sees.",
                    mime_type="text/plain")(tools.schema_text)
    return server


#: How long the server waits at the end of stdin with requests still unanswered and no reply written meanwhile.
EOF_PATIENCE_S = 600.0


class AnswerBeforeEnd:
    """The stdio transport's stdin and stdout (``mcp.server.stdio.stdio_server(stdin, stdout)``), which

    - answers every line the SDK would drop or die on itself, with JSON-RPC's error and never passes it on
      (``refusal``): not JSON (-32700), nested past ``wire.MAX_DEPTH``, a batch, or a message without
      ``"jsonrpc": "2.0"``, a method, or an id that is a string or a whole number, or one holding a lone surrogate
      escape anywhere (-32600), params that are not an object (-32602); a malformed notification (no id) is dropped,
      as JSON-RPC says;
    - passes the end of stdin on only once every request read before it has been answered (the SDK stops
      serving at the end of stdin and drops the requests still in flight), waiting at most ``EOF_PATIENCE_S``
      with no reply written: the server always exits after stdin closes."""

    def __init__(self, stdin, stdout):
        self._stdin, self._stdout = stdin, stdout      # anyio files: lines in; write() and flush() out
        self._open: set = set()                        # ids of the requests read and not yet answered
        self._written: list = []                       # ids of the replies written, not yet flushed
        self._answered: anyio.Condition | None = None  # made in the event loop
        self._lock: anyio.Lock | None = None           # one line written at a time; made in the event loop

    async def __aiter__(self) -> AsyncIterator[str]:
        import anyio

        self._answered, self._lock = anyio.Condition(), anyio.Lock()
        async for line in self._stdin:
            if not line.strip():
                continue
            message, error = refusal(line)
            if error is not None:
                if error:
                    await self._send(error)
                continue
            self._read(message)
            yield line
        async with self._answered:
            while self._open:
                with anyio.move_on_after(EOF_PATIENCE_S) as waited:
                    await self._answered.wait()
                if waited.cancelled_caught:           # nothing answered for that long: end all the same
                    break

    def _one_line(self) -> anyio.Lock:
        """The lock that keeps one line written at a time (made when reading starts, in the event loop)."""
        if self._lock is None:
            raise RuntimeError("AnswerBeforeEnd wrote before it started reading")
        return self._lock

    def _read(self, message) -> None:
        if "method" in message and "id" in message:
            self._open.add(_key(message["id"]))
        elif message.get("method") == "notifications/cancelled":     # a cancelled request gets no reply
            self._open.discard(_key((message.get("params") or {}).get("requestId")))

    async def _send(self, reply: dict) -> None:
        async with self._one_line():
            await self._stdout.write(json.dumps(reply) + "\n")
            await self._stdout.flush()

    async def write(self, line: str) -> None:
        async with self._one_line():
            await self._stdout.write(line)
        message = _parse(line)
        if isinstance(message, dict) and "method" not in message and "id" in message:
            self._written.append(_key(message["id"]))

    async def flush(self) -> None:
        async with self._one_line():
            await self._stdout.flush()
        if self._written and self._answered is not None:
            async with self._answered:
                self._open.difference_update(self._written)
                self._answered.notify_all()
        self._written.clear()


def _error(code: int, message: str, request_id=None) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _valid_id(request_id) -> bool:
    return isinstance(request_id, str) or (isinstance(request_id, int) and not isinstance(request_id, bool))


def refusal(line: str) -> tuple[dict | None, dict | None]:
    """(the message, None) for a line the SDK may have; (None, the JSON-RPC error to answer) for one it may not;
    (None, {}) for a malformed notification, which gets no answer."""
    from duckask.utils.app import wire

    try:
        message = wire.loads(line)
    except wire.TooDeep as e:
        return None, _error(-32600, f"Invalid Request: {e}")
    except ValueError as e:
        return None, _error(-32700, f"Parse error: the line is not JSON ({e})")
    if isinstance(message, list):
        return None, _error(-32600, "Invalid Request: batches are not accepted; send one message a line")
    if not _encodable(message):     # a lone surrogate ("\ud800") parses, but the SDK can neither read nor answer it
        if isinstance(message, dict) and "id" not in message:
            return None, {}                     # a notification: no answer, as JSON-RPC says
        request_id = message.get("id") if isinstance(message, dict) and _encodable(message.get("id")) else None
        return None, _error(-32600, "Invalid Request: the message holds a lone surrogate escape (such as \\ud800), "
                                    "which is not text: send valid UTF-16 pairs", request_id if _valid_id(request_id)
                            else None)
    if not isinstance(message, dict):
        return None, _error(-32600, "Invalid Request: a message is a JSON object")
    has_id = "id" in message
    request_id = message.get("id") if has_id and _valid_id(message.get("id")) else None
    if has_id and request_id is None:
        return None, _error(-32600, "Invalid Request: the id must be a string or a whole number")
    if message.get("jsonrpc") != "2.0":
        return None, _error(-32600, 'Invalid Request: "jsonrpc": "2.0" is missing', request_id) if has_id else {}
    if "method" in message:
        if not isinstance(message["method"], str):
            return None, _error(-32600, "Invalid Request: the method must be a string", request_id) if has_id \
                else {}
        if "params" in message and not isinstance(message["params"], dict):
            return None, _error(-32602, "Invalid params: params must be an object", request_id) if has_id else {}
    elif not has_id or not ("result" in message or "error" in message):
        return None, _error(-32600, "Invalid Request: a method, or a result or error for an id, is needed",
                            request_id) if has_id else {}
    return message, None


def _encodable(value) -> bool:
    """Whether ``value`` (parsed JSON) is text all the way down: no lone surrogate in a key or a string."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError, RecursionError):
        return False
    return True


def _parse(line: str):
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _key(request_id) -> str:
    return json.dumps(request_id)        # 1 and "1" are different ids


@contextmanager
def _claimed_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The protocol's own copies of stdin and stdout; while serving, fd 0 reads nothing and fd 1 goes to
    stderr, so stray output (a library's print) never reaches the protocol. Both are restored after."""
    saved = {fd: os.dup(fd) for fd in (0, 1)}
    wire_in, wire_out = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)
        wire_out.close()
        wire_in.close()


def serve_stdio(server) -> None:
    """Serve ``server`` (``build_server``) over stdin and stdout until stdin ends and every request read
    has been answered."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def serve() -> None:
        with _claimed_stdio() as (wire_in, wire_out):
            wire = AnswerBeforeEnd(anyio.wrap_file(io.TextIOWrapper(wire_in, encoding="utf-8", errors="replace")),
                                   anyio.wrap_file(io.TextIOWrapper(wire_out, encoding="utf-8")))
            lowlevel = server._lowlevel_server    # MCPServer.run("stdio") without the streams of its own choosing
            streams = cast("AsyncFile[str]", wire)     # it reads and writes lines as an anyio file does
            async with stdio_server(streams, streams) as (read, write):
                await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(serve)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="duckask as an MCP server over stdio.")
    ap.add_argument("--db", required=True, help="the database the tools use (`duckask mcp` names the demo without one)")
    ap.add_argument("--config")
    ap.add_argument("--allow-writes", action="store_true",
                    help="propose_write leaves pending cards for a person (it never approves one)")
    args = ap.parse_args(argv)
    serve_stdio(build_server(args.db, config=args.config, allow_writes=args.allow_writes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
