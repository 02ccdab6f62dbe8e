"""The terminal side of ``duckask chat`` and ``duckask ask``: line editing and history across sessions
(GNU readline, history in ``$XDG_STATE_HOME/duckask/chat_history``), the answer sentence streamed as
it is written, results as aligned tables and the SQL highlighted (rich), and confirm-before-run with
the SQL editable in place. ``parse_confirm`` reads a typed confirmation (shared with the piped chat).
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.status import Status

    from duckask.utils.writes.card import WriteCard

CONFIRM_HELP = "Run it? [y]es / [n]o, optionally with what to change / [e]dit: "


def history_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "duckask" / "chat_history"


#: What each node is doing, as the status line says it.
DOING = {"IntentRouter": "reading the question", "ResolveFollowUp": "reading it with the conversation",
         "ChooseSource": "choosing a source", "ClarifyQuery": "checking the question is clear",
         "MatchTemplate": "looking for a kept pair", "PlanQuery": "planning with the semantic layer",
         "TableSelector": "choosing the tables", "SchemaLookup": "reading the schema",
         "SQLGenerator": "writing the SQL", "ConfirmSQL": "waiting for your yes",
         "SQLExecutor": "running the query", "ErrorFixer": "fixing the query", "DataAnalyzer": "writing the answer",
         "ResponseGrader": "checking the answer", "AssessConfidence": "weighing how sure it is",
         "ReportError": "saying what went wrong",
         "CallTool": "asking the tool", "AnswerFromTool": "writing the answer", "ProposeWrite": "writing the change",
         "ReviewWrite": "preparing the change's card", "ApplyWrite": "applying the change"}


class StatusLine:
    """The node at work as one transient line on stderr (rich's status), replaced as each node starts and cleared
    before anything else is printed: no progress text stays on screen or lands on the answer's line. Called as
    the ``on_node`` callback; ``clear()`` before printing (the answer's first piece, a prompt, the result)."""

    def __init__(self, console=None) -> None:
        from rich.console import Console

        self.console = console or Console(stderr=True, highlight=False)
        self.status: Status | None = None
        self.quiet = False

    def __call__(self, name: str) -> None:
        if self.quiet:
            return
        label = f"[dim]{DOING.get(name, name)} ({name})[/dim]"
        if self.status is None:
            self.status = self.console.status(label, spinner="dots")
            self.status.start()
        else:
            self.status.update(label)

    def clear(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def hush(self) -> None:
        """The answer has begun: cleared, and silent for the rest of the turn (its line is the answer's alone)."""
        self.clear()
        self.quiet = True

    def before(self, callback):
        """``callback`` (a prompt) with the status line cleared first; None or a setting (``True``) stays as it is."""
        if not callable(callback):
            return callback

        def cleared(*args, **kwargs):
            self.clear()
            return callback(*args, **kwargs)
        return cleared


class Terminal:
    """The interactive side: readline for input, rich for output."""

    def __init__(self) -> None:
        from rich.console import Console

        self.out = Console(highlight=False)
        self.err = Console(stderr=True, highlight=False)
        self.readline = None
        try:
            import readline

            self.readline = readline
            self.hist = history_file()
            self.hist.parent.mkdir(parents=True, exist_ok=True)
            if self.hist.exists():
                readline.read_history_file(self.hist)
            readline.set_history_length(1000)
        except (ImportError, OSError):
            pass
        self.streamed = ""
        self.status = StatusLine(self.err)
        self.said_understood = False

    def lines(self, prompt: str = "duckask> ") -> Iterator[str]:
        while True:
            try:
                line = input(prompt)
            except EOFError:
                print()
                return
            if self.readline is not None:
                try:
                    self.readline.write_history_file(self.hist)
                except OSError:
                    pass
            yield line

    def edit_line(self, prompt: str, text: str) -> str:
        """Input with ``text`` already typed (readline), so the user edits it in place."""
        if self.readline is None:
            return input(prompt)
        self.readline.set_startup_hook(lambda: self.readline.insert_text(text))
        try:
            return input(prompt)
        finally:
            self.readline.set_startup_hook()

    def show_sql(self, sql: str) -> None:
        from duckask.utils.api.present import sql_syntax

        self.out.print(sql_syntax(sql))

    def on_text(self, piece: str) -> None:
        if not self.streamed:
            self.status.hush()
            self.out.print("[bold]A:[/bold] ", end="")
        self.streamed += piece
        self.out.print(piece, end="", markup=False)

    def node(self, name: str) -> None:
        self.status(name)

    def understood(self, question: str) -> None:
        """A follow-up's standalone question, shown as soon as it is known: before the answer it explains."""
        self.status.clear()
        self.out.print(f"[dim](understood as: {escape(question)})[/dim]")
        self.said_understood = True

    def show(self, r, max_rows: int) -> None:
        from duckask.utils.api.present import rich_lines

        self.status.clear()
        self.status.quiet = False       # the next turn shows its progress again
        streamed, self.streamed = self.streamed, ""
        said, self.said_understood = self.said_understood, False
        for part in rich_lines(r, max_rows, streamed=streamed, understood_said=said):
            self.out.print(part)
        self.out.print()

    def confirm(self, sql: str, drafts: list) -> dict:
        self.status.clear()
        self.out.print("[bold]This SQL will run:[/bold]")
        self.show_sql(sql)
        if len(set(drafts)) > 1:
            self.out.print(f"[dim](and {len(set(drafts)) - 1} other drafts; the result most agree on is kept)[/dim]")
        try:
            reply = input(CONFIRM_HELP).strip()
        except EOFError:
            return {"decision": "no"}
        return parse_confirm(reply, lambda: self.edit_line("edit> ", " ".join(sql.split())))


    def approve_write(self, card: WriteCard) -> dict:
        """A write's card (SQL highlighted, what it does, estimated rows); only a typed "yes" approves."""
        from duckask.utils.state.writes import read_yes

        self.status.clear()
        self.out.print(f"[bold red]{escape(card.text().splitlines()[0])}[/bold red]")
        self.show_sql(card.sql)
        for line in card.text().splitlines()[2:]:
            self.out.print(escape(line))
        return {"decision": "yes" if read_yes() else "no"}


def escape(text: str) -> str:
    from rich.markup import escape

    return escape(text or "")


def parse_confirm(reply: str, read_sql) -> dict:
    """A typed confirmation: "y"/"yes"/"" run, "n [comment]" decline (the comment is the feedback),
    "e" edit (``read_sql()`` returns the SQL to run)."""
    word, _, rest = reply.strip().partition(" ")
    word = word.lower().rstrip(",.:")
    if word in ("", "y", "yes", "ok", "run"):
        return {"decision": "yes"}
    if word in ("e", "edit"):
        return {"decision": "edit", "sql": rest.strip() or read_sql()}
    if word in ("n", "no"):
        return {"decision": "no", "comment": rest.strip()}
    return {"decision": "no", "comment": reply.strip()}  # anything else says what to change


class Stream:
    """The answer sentence on a terminal as the model writes it; ``present.text`` then skips it. The status line,
    when there is one, is cleared before the first piece."""

    def __init__(self, status: StatusLine | None = None) -> None:
        self.text = ""
        self.status = status

    def __call__(self, piece: str) -> None:
        if not self.text and self.status is not None:
            self.status.hush()
        self.text += piece
        print(piece, end="", flush=True)


def confirm_prompt(json_mode: bool):
    """Confirm-before-run on a terminal; elsewhere None, and the Result comes back "pending"."""
    if json_mode or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    def confirm(sql: str, drafts: list) -> dict:
        print(f"This SQL will run:\n{sql}")
        try:
            reply = input(CONFIRM_HELP)
        except EOFError:
            return {"decision": "no"}
        return parse_confirm(reply, lambda: input("SQL to run instead> "))

    return confirm


