"""The error every way of opening a database raises (``sources``, ``remote``, ``database``): one class, below them
all, so that none imports another for it."""
from __future__ import annotations


class DatabaseError(RuntimeError):
    """The database could not be found or opened; the message says why."""
