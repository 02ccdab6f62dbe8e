"""``duckask chat``: a conversation in the terminal, or scripted through a pipe.

On a terminal: line editing and history across sessions (GNU readline, history in
``$XDG_STATE_HOME/duckask/chat_history``), the answer sentence streamed as it is written, results
as aligned tables and the SQL highlighted (rich), confirm-before-run with an editable SQL line.
Piped: one turn per input line, plain text, or with ``--json`` one JSON object per turn (the keys of
``ask --json`` plus ``resolved_question`` and ``intent``); with ``--confirm`` the line after a turn
answers its confirmation (``y``, ``n [comment]``, or ``e`` and then the SQL on the next line).

Commands: /help, /sql [SQL], /schema [TABLE], /save [FILE], /history, /good, /fix SQL, /export FILE, /email ADDRESS,
/table NAME, /quit. With ``--allow-writes`` a pasted INSERT/UPDATE/DELETE/CREATE/ALTER shows its approval
card and runs only after a typed "yes"; piped, nothing is written (the write is recorded as rejected).
"""
from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from duckask.utils.api import QuestionTooLong
from duckask.utils.api.present import EXIT_FAIL, EXIT_USAGE, exit_code
from duckask.utils.app.terminal import Terminal, escape, parse_confirm
from duckask.utils.state.writes import NO_APPROVER
from duckask.utils.writes.audit import AuditError

CHAT_HELP = """Ask a question about the data, a follow-up ("and in 2018?", "only the left-handed ones"), a
question about the schema ("what tables are there?", "what does hbp mean?"), or paste SQL.
commands:
  /sql            show the last SQL          /sql SELECT ...   run your own SQL
  /schema         list the tables            /schema TABLE     that table's columns
  /save [FILE]    save the session (default duckask-session.json; resume with --session FILE)
  /history        the turns so far           /good             keep the last answer as an example pair
  /fix SELECT ... the last answer was wrong: keep this SQL for its question instead
  /export FILE    the last result's rows to FILE (.csv .parquet .json .xlsx)
  /email ADDRESS  send the last answer, SQL and rows by SMTP     /table NAME   store them as a new table
  /help           this text                  /quit, an empty line or Ctrl-D   end the chat"""

class Piped:
    """The scripted side: lines from stdin, plain text or JSON out."""

    def __init__(self, json_mode: bool, stream=None) -> None:
        self.json_mode = json_mode
        self.source = iter(stream if stream is not None else sys.stdin)

    def lines(self, prompt: str = "") -> Iterator[str]:
        for line in self.source:
            yield line.rstrip("\n")

    def next_line(self) -> str:
        try:
            return next(self.source).rstrip("\n")
        except StopIteration:
            return ""

    def confirm(self, sql: str, drafts: list) -> dict:
        if not self.json_mode:
            print(f"This SQL will run:\n{sql}")
        return parse_confirm(self.next_line(), self.next_line)

    def show(self, r, max_rows: int) -> None:
        from duckask.utils.api.present import as_json, text

        if self.json_mode:
            print(json.dumps(as_json(r, max_rows), default=str), flush=True)
        else:
            print(text(r, max_rows) + "\n", flush=True)


def run_chat(args, options: dict[str, Any]) -> int:
    """The chat loop: each line a command (``COMMANDS``) or a turn; the exit code of the last turn."""
    from duckask.utils.app.conversation import SessionError

    tty = sys.stdin.isatty() and sys.stdout.isatty() and not args.json
    ui: Any = Terminal() if tty else Piped(args.json)
    try:
        conv = _open(args, options, ui, tty)
    except SessionError as e:
        print(f"duckask chat: {e}", file=sys.stderr)
        return 1
    code = 0
    for raw in ui.lines():
        line = raw.strip()
        if not line or line in ("quit", "exit", "/quit", "/exit"):
            if not line and not tty:
                continue  # a blank line in a script is not the end of it
            break
        cmd, _, arg = line.partition(" ")
        if cmd in COMMANDS and not (cmd == "/sql" and arg.strip()):
            COMMANDS[cmd](arg.strip(), conv, ui, args, cmd)
        elif cmd.startswith("/") and cmd != "/sql":
            print(f"unknown command {cmd}; /help lists them")
        else:
            code = _turn(conv, ui, args, line, sql=arg if cmd == "/sql" else None)
    return code


def _open(args, options: dict[str, Any], ui, tty: bool):
    """The ``Conversation`` (resumed from ``--session`` when the file exists), wired to the terminal's prompts,
    progress and streamed sentence on a TTY."""
    from duckask.utils.app.conversation import Conversation

    history = None
    if args.session and Path(args.session).expanduser().exists():
        history = Conversation.read_session(args.session)["turns"]
    ask_user = None
    if tty:
        def ask_user(question: str) -> str:
            ui.status.clear()
            ui.out.print(f"[bold yellow]?[/bold yellow] {escape(question)}")
            try:
                return input("> ")
            except EOFError:
                return ""

    options = dict(options)
    confirm = ui.confirm if options.pop("confirm", False) else None  # the callback turns confirming on
    conv = Conversation(args.db, config=args.config, history=history, ask_user=ask_user, confirm=confirm,
                        on_node=ui.node if tty else None, on_text=ui.on_text if tty else None,
                        on_understood=ui.understood if tty else None,
                        approve_write=ui.approve_write if tty else None, **options)
    if tty:
        ui.err.print(f"duckask chat on {conv.db}: /help for commands, an empty line or Ctrl-D to quit"
                     + (f" (resumed {len(history)} turns)" if history else ""))
    return conv


def _turn(conv, ui, args, question: str, sql: str | None = None) -> int:
    """One question (or ``/sql SQL``) answered and shown; saved to ``--session``; its exit code."""
    try:
        r = conv.ask(sql=sql) if sql is not None else conv.ask(question)
    except (QuestionTooLong, AuditError) as e:       # this turn is refused (or its write); the chat goes on
        return refuse_turn(e, args.json)
    if r.status == "pending" and r.write is not None:   # piped: no one can type yes
        r = r.reject(NO_APPROVER)
    ui.show(r, args.max_rows)
    if args.session:
        conv.save(args.session)
    return exit_code(r.status, r.write.detail if r.write else None)


def _help(arg: str, conv, ui, args, cmd: str) -> None:
    print(CHAT_HELP)


def _history(arg: str, conv, ui, args, cmd: str) -> None:
    for i, t in enumerate(conv.history, 1):
        print(f"{i}. [{t.get('intent')}] {t.get('text')}"
              + (f"  -> {t['resolved_question']}" if t.get("resolved_question") not in (None, t.get("text"))
                 else ""))


def _save(arg: str, conv, ui, args, cmd: str) -> None:
    path = conv.save(arg or args.session or "duckask-session.json")
    print(f"saved {len(conv.history)} turns to {path} (resume: duckask chat --session {path})")


def _schema(arg: str, conv, ui, args, cmd: str) -> None:
    from duckask.utils.schema.ddl import render_schema

    catalog = conv.prep.catalog
    tables = [t.strip() for t in arg.split(",") if t.strip()] or None
    unknown = [t for t in tables or [] if t not in catalog.tables]
    if unknown:
        print(f"/schema: no table {', '.join(unknown)}; /schema lists them")
    elif tables:
        print(render_schema(catalog, tables))
    else:
        print("\n".join(f"{t.name} ({t.rows:,} rows){': ' + t.comment.splitlines()[0] if t.comment else ''}"
                        for t in catalog.tables.values()))


def _last_sql(arg: str, conv, ui, args, cmd: str) -> None:
    last = next((t for t in reversed(conv.history) if t.get("sql")), None)
    print(last["sql"] if last else "/sql: no SQL yet; ask a question, or /sql SELECT ... to run your own")


def _keep(arg: str, conv, ui, args, cmd: str) -> None:
    """/good keeps the last answer as a pair; /fix SQL keeps SQL for the last question instead."""
    from duckask.utils.knowledge import ExampleError

    last = conv.last
    if last is None or not last.sql or (cmd == "/good" and not last.ok):
        print(f"{cmd}: nothing to keep yet; ask a question first (only an answered one can be kept)", file=sys.stderr)
        return
    if cmd == "/fix" and not arg:
        print("/fix: give the SQL that answers the last question right: /fix SELECT ...", file=sys.stderr)
        return
    try:
        asked = last.resolved_question or last.question
        ex = last.fix(arg, asked) if cmd == "/fix" else last.save_as_example(asked)
        print(f"kept as example {ex.id}: {ex.question!r} (the same question with other values is answered "
              "from it now)", file=sys.stderr)
    except ExampleError as e:
        print(f"{cmd}: not kept: {e}", file=sys.stderr)


def _delivered(arg: str, conv, ui, args, cmd: str) -> None:
    done = _deliver(cmd, arg, conv, ui, args)
    if done is not None:
        ui.show(done, args.max_rows)


DELIVERY = {"/export": "a FILE", "/email": "an ADDRESS", "/table": "a NAME"}


def refuse_turn(error: Exception, json_mode: bool) -> int:
    """A turn refused before it ran (a question over the limit, a write with a damaged audit log): said on
    stderr, and with ``--json`` as the turn's JSON object (the keys of ``ask --json``), so a script reading one
    object a turn stays in step. Returns the exit code: usage for a question over the limit, else failed."""
    if json_mode:
        print(json.dumps({"status": "error", "answer": str(error), "sql": None, "columns": [], "rows": [],
                          "tables": [], "trace": []}), flush=True)
    print(f"duckask chat: {error}", file=sys.stderr, flush=True)
    return EXIT_USAGE if isinstance(error, QuestionTooLong) else EXIT_FAIL


def _deliver(cmd: str, arg: str, conv, ui, args):
    """/export, /email, /table on the last answered turn; returns a Result to show (a /table write) or None."""
    from duckask.utils.app import deliver

    last = conv.last
    if not arg:
        print(f"{cmd} needs {DELIVERY[cmd]}; /help lists the commands", file=sys.stderr)
        return None
    if last is None or not last.ok:
        print(f"{cmd}: nothing to deliver yet; ask a question first (only an answered one)", file=sys.stderr)
        return None
    if cmd == "/table":
        r = deliver.into_table(last, arg)
        if r.status == "pending":
            r = r.reject(NO_APPROVER)
        return r
    ok, message = (deliver.export if cmd == "/export" else deliver.email)(last, arg)
    print(f"{cmd}: {message}", file=sys.stderr if not ok else sys.stdout)
    return None


#: The chat's commands, each a named function (arg, conversation, ui, args, the command as typed).
COMMANDS = {"/help": _help, "/?": _help, "/history": _history, "/save": _save, "/schema": _schema, "/sql": _last_sql,
            "/good": _keep, "/fix": _keep, **dict.fromkeys(DELIVERY, _delivered)}
