"""Moving a machine's local state into a shared one: ``duckask state migrate --to postgresql://...``.

Every taught pair of the local knowledge file (every database's) and every entry of the local audit log go into
the shared state in **one transaction**: all of it or, on any error, none. An audit entry keeps its times,
decision, outcome and people; it gets a new id there and remembers where it came from (``origin``:
``<file>#<old id>``), so running the migration again adds nothing twice. A pair taught for the same database
and question on both sides keeps the local SQL (the newer teaching, as a re-teach would). The local files are
read, never changed: delete them yourself once the servers use the shared state. Pending writes are not moved
(they live in a server's memory, and their audit entries say pending).
"""
from __future__ import annotations

from pathlib import Path

import duckdb

from duckask.utils.config import Settings
from duckask.utils.state.postgres import PgState, put_entry, put_example
from duckask.utils.writes.audit import COLUMNS, AuditLog


def local_pairs(path: Path) -> list[tuple]:
    """(db, question, sql, tables) of every pair in a local knowledge file ([] when there is none)."""
    if not path.exists():
        return []
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT db, question, sql, tables FROM examples ORDER BY id").fetchall()
    except duckdb.CatalogException:
        return []
    finally:
        con.close()


def migrate(settings: Settings, to_url: str) -> dict[str, int]:
    """Copy ``settings``' local knowledge file and audit log into the shared state at ``to_url``; returns the
    counts (pairs, audit entries added, audit entries already there)."""
    pairs = local_pairs(settings.resolved_knowledge_file)
    audit_file = settings.resolved_audit_file
    entries = AuditLog(audit_file).entries() if audit_file.exists() else []
    state = PgState(to_url)
    added = 0
    with state.transaction() as cur:
        for db, question, sql, tables in pairs:
            put_example(cur, db, question, sql, tables)
        for e in sorted(entries, key=lambda e: e["id"]):
            fields = {c: e[c] for c in COLUMNS if c != "id"}
            added += put_entry(cur, {**fields, "origin": f"{audit_file.resolve()}#{e['id']}"}) is not None
    return {"pairs": len(pairs), "audit_added": added, "audit_already_there": len(entries) - added}
