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
    from duckask.utils.db.write_card import WriteCard

CONFIRM_HELP = "Run it? [y]es / [n]o, optionally with what to change / [e]dit: "


def history_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "duckask" / "chat_history"


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
        from duckask.utils.app.present import sql_syntax

        self.out.print(sql_syntax(sql))

    def on_text(self, piece: str) -> None:
        if not self.streamed:
            self.out.print("[bold]A:[/bold] ", end="")
        self.streamed += piece
        self.out.print(piece, end="", markup=False)

    def node(self, name: str) -> None:
        self.err.print(f"[dim]  … {name}[/dim]")

    def show(self, r, max_rows: int) -> None:
        from duckask.utils.app.present import rich_lines

        streamed, self.streamed = self.streamed, ""
        for part in rich_lines(r, max_rows, streamed=streamed):
            self.out.print(part)
        self.out.print()

    def confirm(self, sql: str, drafts: list) -> dict:
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
        from duckask.utils.db.writes import read_yes

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
    """The answer sentence on a terminal as the model writes it; ``present.text`` then skips it."""

    def __init__(self) -> None:
        self.text = ""

    def __call__(self, piece: str) -> None:
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


