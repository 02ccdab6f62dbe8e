"""What the CLI and the chat share for writes and delivery: the approval card on a terminal, and the
actions on an answered Result (``--out`` / ``/export``, ``--email`` / ``/email``, ``--into-table`` /
``/table``).

The approval card prints the statement, its tier, the plain explanation and the estimated rows, and
reads one line: only the word ``yes`` approves. Without a terminal on stdin there is no card
(``write_prompt`` returns None): the write stays pending or is rejected, and nothing is written.

Run on its own (propose one write and approve it here)::

    python -m duckask.utils.app.deliver --db PATH "UPDATE t SET x = 1 WHERE id = 3"
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

APPROVE_HELP = 'Type "yes" to run it; anything else cancels: '


def card_text(card: dict[str, Any]) -> str:
    """The approval card as plain text (the same fields the page's card shows)."""
    rows = card.get("estimated_rows")
    estimate = "not applicable (schema only)" if not card.get("checks_rows") else \
        ("unknown" if rows is None else f"{rows:,}")
    return "\n".join([
        f"── write: {card['tier_name']} ({card['kind']}{' on ' + card['target'] if card.get('target') else ''}) ──",
        f"SQL:            {' '.join(card['sql'].split())}",
        f"what it does:   {card['explanation']}",
        f"estimated rows: {estimate}",
        f"audit entry:    #{card['id']}",
    ])


def read_yes(prompt: str = APPROVE_HELP, reader: Callable[[str], str] = input) -> bool:
    """True only for an explicit "yes" (any case, surrounding spaces ignored); EOF is no."""
    try:
        return reader(prompt).strip().lower() == "yes"
    except EOFError:
        return False


def write_prompt(json_mode: bool = False, stream=None) -> Callable[[dict], dict] | None:
    """The terminal's ``approve_write`` callback; None when stdin is not a terminal (nothing is written)."""
    if not sys.stdin.isatty():
        return None
    out = stream or (sys.stderr if json_mode else sys.stdout)

    def approve(card: dict) -> dict:
        print(card_text(card), file=out, flush=True)
        return {"decision": "yes" if read_yes() else "no"}

    return approve


# -- actions on an answered Result ---------------------------------------------------------------
def export(result, path: str) -> tuple[bool, str]:
    from duckask.utils.delivery.export import ExportError, export_frame

    if result.df is None:
        return False, f"not exported: the result is {result.status!r}; only an answered question has rows"
    try:
        rows = result.all_rows()          # every row, when row_cap cut the result
        written = export_frame(rows, path)
    except ExportError as e:
        return False, f"not exported: {e}"
    return True, f"wrote {len(rows):,} row(s) to {written}"


def email(result, to: str) -> tuple[bool, str]:
    from duckask.utils.delivery.export import ExportError
    from duckask.utils.delivery.mail import MailError

    if result.df is None:
        return False, f"not sent: the result is {result.status!r}; only an answered question can be emailed"
    try:
        msg = result.email(to)
    except (MailError, ExportError) as e:
        return False, f"not sent: {e}"
    return True, f"sent to {msg['To']}"


def into_table(result, name: str):
    """The pending (or, with a terminal callback, decided) Result of ``CREATE TABLE name AS <its SQL>``."""
    return result.to_table(name)


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.db import writes
    from duckask.utils.db.database import open_database

    ap = argparse.ArgumentParser(description="Propose one write, show its card, and run it on an explicit yes.")
    ap.add_argument("--db", required=True)
    ap.add_argument("sql")
    args = ap.parse_args(argv)
    settings = load_settings(allow_writes=True)
    database = open_database(args.db, settings)
    card = writes.propose(args.sql, database, settings)
    if card["decision"] == "pending":
        prompt = write_prompt()
        yes = prompt is not None and prompt(card)["decision"] == "yes"
        card = writes.approve(card, database, settings) if yes else writes.reject(card, settings)
    print(writes.summary(card))
    return 0 if card.get("outcome") == "committed" else 1


if __name__ == "__main__":
    raise SystemExit(main())
