"""What the command line takes from the process rather than its arguments: the database named in ``DUCKASK_DB``, the
source mode every database it opens is read in (``DUCKASK_SOURCE_MODE``), and a warning when a password is in the
arguments (every local user can read them).
"""
from __future__ import annotations

import argparse
import os
import re
import sys

SOURCE_MODE_HELP = ("a postgresql:// (or other ADBC) --db: copy its tables here first, ask it live (the SQL runs in "
                    "that database), or auto (live above source_live_rows; default)")


def add_source_mode(p: argparse.ArgumentParser) -> None:
    """``--source-mode`` beside a command's ``--db``."""
    p.add_argument("--source-mode", choices=["copy", "live", "auto"], help=SOURCE_MODE_HELP)


def use_source_mode(args: argparse.Namespace) -> None:
    """The chosen source mode for everything this process opens (``DUCKASK_SOURCE_MODE``: the commands that read
    their settings themselves, a server's workers, see it too)."""
    if getattr(args, "source_mode", None):
        os.environ["DUCKASK_SOURCE_MODE"] = args.source_mode


#: A URL with a password in it (``scheme://user:password@host``).
_PASSWORD_IN_URL = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@\s:]*:[^/@\s]+@", re.I)


def warn_password_in_arguments(argv: list[str]) -> None:
    """A warning on stderr for every argument holding a password: the process's arguments are visible to every local
    user (``ps``); the same URL read from ``DUCKASK_DB``/``DUCKASK_STATE``, or its password from ``PGPASSWORD`` or
    ``~/.pgpass`` (libpq reads them for a URL without one) is not."""
    for arg in argv:
        value = arg.split("=", 1)[1] if arg.startswith("--") and "=" in arg else arg
        if _PASSWORD_IN_URL.match(value):
            print("duckask: warning: a password is in the command's arguments, which every local user can read "
                  "(ps); set DUCKASK_DB / DUCKASK_STATE instead, or leave the password out of the URL and put it in "
                  "PGPASSWORD or ~/.pgpass (docs/security.md, 'Passwords')", file=sys.stderr)
            return


def from_environment(args: argparse.Namespace) -> argparse.Namespace:
    """The parsed arguments with what the environment adds: ``--db`` from ``DUCKASK_DB`` when none was given (a
    connection string with its password, kept out of the arguments), and the source mode set for the process."""
    if getattr(args, "db", "absent") is None and os.environ.get("DUCKASK_DB"):
        args.db = os.environ["DUCKASK_DB"]
    use_source_mode(args)
    return args
