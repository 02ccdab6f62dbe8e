"""Where duckask keeps what outlives a question: taught pairs, the audit log of writes, and the writes a server
holds for a decision. One small interface, two places:

- unset ``state`` (the default): the local DuckDB files ``knowledge_file`` and ``audit_file`` (``knowledge.store``,
  ``writes.audit``), pending writes and the page's threads in the server's memory (``cards.MemoryCards``,
  ``threads.MemoryThreads``): one process, one machine;
- ``state: postgresql://...`` (``--state``, ``DUCKASK_STATE``): one Postgres database that several servers share
  (``state.postgres``): the same pairs, audit log, pending writes and threads on every server; each write decided
  once.

``audit_log(settings)``, ``card_store(settings)`` and ``thread_store(settings, db)`` give the one the settings name
(taught pairs: ``knowledge.shared.knowledge_store``, above this package, on its ``shared_state``);
``migrate`` copies the local files into a shared state.
"""
from __future__ import annotations

import threading

from duckask.utils.config import Settings, check_setting

_STATES: dict[str, object] = {}
_LOCK = threading.Lock()


def shared_state(settings: Settings):
    """The ``PgState`` of ``settings.state`` (one per URL and process), or None for the local files."""
    if not settings.state:
        return None
    from duckask.utils.state.postgres import PgState

    url = check_setting("state", settings.state).strip()
    with _LOCK:
        if url not in _STATES:
            _STATES[url] = PgState(url)
        return _STATES[url]


def audit_log(settings: Settings):
    """The audit log: ``record(**fields)``, ``update(id, **fields)``, ``entries(db, limit)``, ``path`` (named in
    messages)."""
    from duckask.utils.writes.audit import AuditLog

    return _local_or_shared(settings, lambda: AuditLog(settings.resolved_audit_file), "PgAudit")


def card_store(settings: Settings):
    """Where a server holds pending write cards (``cards.MemoryCards`` or ``cards.PgCards``)."""
    from duckask.utils.state import cards

    return _local_or_shared(settings, cards.MemoryCards, "PgCards", cards)


def thread_store(settings: Settings, db: str):
    """The page's threads for the database ``db`` (``threads.MemoryThreads`` or ``threads.PgThreads``)."""
    from duckask.utils.state import threads

    state = shared_state(settings)
    return threads.MemoryThreads() if state is None else threads.PgThreads(state, db)


def _local_or_shared(settings: Settings, local, shared: str, module=None):
    """``local()`` without a shared state, else the class ``shared`` (of ``state.postgres``, or ``module``) on it."""
    state = shared_state(settings)
    if state is None:
        return local()
    if module is None:
        from duckask.utils.state import postgres as module
    return getattr(module, shared)(state)
