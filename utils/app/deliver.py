"""What the CLI and the chat share for writes and delivery: the approval card on a terminal, and the
actions on an answered Result (``--out`` / ``/export``, ``--email`` / ``/email``, ``--into-table`` /
``/table``).

The approval card prints the statement, its tier, the plain explanation and the estimated rows, and
reads one line: only the word ``yes`` approves. Without a terminal on stdin there is no card
(``write_prompt`` returns None): the write stays pending or is rejected, and nothing is written.

The card's text is ``WriteCard.text`` (``utils/writes/card.py``) and the yes ``read_yes`` (``utils/state/writes.py``);
run that module on its own to propose one write and approve it on the terminal.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from duckask.utils.state.writes import read_yes

if TYPE_CHECKING:
    from duckask.utils.writes.card import WriteCard


def write_prompt(json_mode: bool = False, stream=None) -> Callable[[WriteCard], dict] | None:
    """The terminal's ``approve_write`` callback; None when stdin is not a terminal (nothing is written)."""
    if not sys.stdin.isatty():
        return None
    out = stream or (sys.stderr if json_mode else sys.stdout)

    def approve(card: WriteCard) -> dict:
        print(card.text(), file=out, flush=True)
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


def after_answer(r, args) -> int:
    """``ask --out / --email / --into-table``: each on an answered Result; returns an exit code (0: all done)."""
    from duckask.utils.api.present import EXIT_CLARIFY, EXIT_FAIL, EXIT_OK, exit_code

    code = EXIT_OK
    wanted = [(getattr(args, "out", None), export), (getattr(args, "email", None), email)]
    for target, action in wanted:
        if target:
            ok, message = action(r, target)
            print(f"duckask: {message}", file=sys.stderr)
            code = code if ok else EXIT_FAIL
    if getattr(args, "into_table", None):
        if not r.ok:
            print(f"duckask: no table made: the question was not answered ({r.status})", file=sys.stderr)
            return EXIT_FAIL
        w = into_table(r, args.into_table)
        print(w.answer, file=sys.stderr)
        if w.status == "pending":
            print("Not written: --into-table needs a terminal to approve on (or use Python's Result.to_table and "
                  "approve()).", file=sys.stderr)
            return EXIT_CLARIFY
        code = code or exit_code(w.status)
    return code
