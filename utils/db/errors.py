"""The errors every way of opening a database raises (``sources``, ``remote``, ``database``) and every check of a
statement (``safety``, ``lexing``, ``live_sql``): below them all, so that none imports another for them."""
from __future__ import annotations


class DatabaseError(RuntimeError):
    """The database could not be found or opened; the message says why."""


class UnsafeSQLError(ValueError):
    """The statement was refused; the message says why (``safety``, ``lexing``, ``live_sql``)."""
