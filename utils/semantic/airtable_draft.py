"""The semantic file beside an Airtable import: its draft, and where that draft may go.

``semantic_draft`` renders ``duckask semantic init``'s draft for the imported file (dbt's spec: the field
descriptions, each select's options as its values). ``place_draft`` says where it goes: the semantic file
(``<out>.semantic.yaml``) only while that is missing or still what duckask last wrote there (its hash is kept
in the import's state, ``airtable.schema.save_state``); otherwise a person may have reviewed or edited it, so
it is never touched and the draft goes beside it as ``<out>.semantic.new.yaml``. ``write_draft`` writes a
draft whole or not at all. Run on its own to see which case an imported file is in:
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from duckask.utils.airtable.schema import TablePlan


def semantic_path(out: Path) -> Path:
    """The semantic file beside the database ``out``: ``club.duckdb`` -> ``club.semantic.yaml``."""
    return out.with_name(out.name.rsplit(".", 1)[0] + ".semantic.yaml")


def semantic_draft(db_file: Path, name: str, plans: list[TablePlan]) -> str:
    """``duckask semantic init``'s draft for the database at ``db_file`` (named ``name`` to the reader), each
    select's values set to its options."""
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import Database
    from duckask.utils.schema.introspect import introspect
    from duckask.utils.semantic.draft import draft_documents, render

    # (table, column) -> a select's options, looked up by a drafted model's alias (None when it has none)
    options: dict[tuple[str | None, str], list[str]] = {(p.name, c.name): c.options for p in plans for c in p.cols
                                                        if c.options}
    db = Database(Path(db_file), load_settings())       # its own connection, closed below (not the shared one)
    try:
        docs = draft_documents(db, introspect(db))
    finally:
        db.close()
    for doc in docs:
        model = doc.get("semantic_model") or {}
        table = (model.get("node_relation") or {}).get("alias")
        for d in model.get("dimensions", []):
            allowed = options.get((table, d.get("expr", "").strip('"')))
            if allowed:
                d.setdefault("config", {}).setdefault("meta", {})["values"] = allowed
    return render(docs, f"the Airtable import {name}")


@dataclass
class Placement:
    """Where a semantic draft goes, and what the import's state then records."""

    path: Path                   # the file to write the draft to
    sha: str | None              # the hash of what duckask last wrote to the semantic file, after this write
    kept: Path | None = None     # the semantic file, left as it is because a person may have edited it


def place_draft(out: Path, text: str, last_sha: str | None) -> Placement:
    """The semantic file, when it is missing or still what duckask last wrote there (``last_sha``); else the
    draft goes beside it (``club.semantic.new.yaml``, replaced each time) and the file is never touched."""
    path, sha = semantic_path(out), text_sha(text)
    if not path.exists():
        return Placement(path, sha)
    if _file_sha(path) in (last_sha, sha):
        return Placement(path, sha)
    return Placement(_beside(path), last_sha, kept=path)


def _beside(path: Path) -> Path:
    """Where a draft goes when the semantic file is kept: ``club.semantic.yaml`` -> ``club.semantic.new.yaml``."""
    return path.with_name(path.name.removesuffix(".yaml") + ".new.yaml")


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_draft(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (under a temporary name, then renamed)."""
    tmp = path.with_name(f".{path.name}.writing")
    try:
        tmp.write_bytes(text.encode("utf-8"))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
