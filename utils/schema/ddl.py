"""What the model sees of a database: ``render_schema(catalog, tables)`` is the semantic file's
instructions, compact CREATE TABLE statements (``render_ddl``: primary and foreign keys, what one row is where
no key is declared, comments,
synonyms, allowed values or a few sample values), and the named metrics of those tables.

See it for a database: ``duckask schema --db PATH [--tables a,b]``.
"""
from __future__ import annotations

from duckask.utils.db.quoting import ident as _ident
from duckask.utils.schema.catalog import Catalog, Column, Table, is_text
from duckask.utils.schema.grain import grain_note
from duckask.utils.schema.ranker import keep_columns


def _sample_text(c: Column) -> str:
    """The values a column may hold when the semantic file lists them; else a few example values:
    three short strings, one date or timestamp, two numbers."""
    if c.allowed:
        quote = is_text(c.type.upper())
        return "one of " + ", ".join(("'" + v.replace("'", "''") + "'") if quote else v for v in c.allowed[:12])
    if not c.samples or c.pk or c.ref:
        return ""
    t = c.type.upper()
    if c.shape:                                # a nested column: how it is read, and one literal example
        return c.shape
    if t in ("JSON", "MAP") or t.startswith(("STRUCT", "MAP(", "UNION")) or t.endswith("[]"):
        return "e.g. " + c.samples[0][:60]      # enough of one value to show its keys or elements
    if is_text(t):
        return "e.g. " + ", ".join("'" + s.replace("'", "''")[:20] + "'" for s in c.samples[:3])
    if t.startswith(("DATE", "TIME")):
        return "e.g. " + c.samples[0][:19]
    return "e.g. " + ", ".join(s[:10] for s in c.samples[:2])


def _column_note(c: Column, samples: bool = True) -> str:
    """A column's comment (≤ 48 characters), synonyms, and allowed or sample values."""
    comment = c.comment if len(c.comment) <= 48 else c.comment[:45].rstrip() + "..."
    aka = "aka " + ", ".join(c.synonyms) if c.synonyms else ""
    values = _sample_text(c) if samples or c.allowed else ""
    return "; ".join(x for x in (comment, aka, values) if x)


def render_more_columns(catalog: Catalog, columns: dict[str, list[str]]) -> str:
    """Columns shown after the DDL, one comment line each (``table.column TYPE -- note``): those of the
    shown tables that one question needs beyond the columns its tables always show."""
    lines = []
    for table, names in columns.items():
        by_name = {c.name: c for c in catalog.tables[table].columns}
        for name in names:
            c = by_name[name]
            note = _column_note(c)
            lines.append(f"--   {_ident(table)}.{_ident(c.name)} {c.type}" + (f" -- {note}" if note else ""))
    return "-- More columns of these tables that the question may need:\n" + "\n".join(lines) if lines else ""


def render_ddl(catalog: Catalog, tables: list[str] | None = None, *, samples: bool = True,
               columns: dict[str, list[str]] | None = None, name_hidden: bool = False) -> str:
    """Compact CREATE TABLE statements for ``tables`` (default: all), in the given order.

    ``columns`` optionally limits a table to some of its columns; the rest are counted in a comment,
    or, with ``name_hidden``, named in one line (so the model knows they exist).
    """
    names = tables if tables is not None else list(catalog.tables)
    chunks = []
    for name in names:
        t = catalog.tables[name]
        shown = t.columns
        if columns and name in columns:
            keep = {c.lower() for c in columns[name]}
            shown = [c for c in t.columns if c.name.lower() in keep]
        hidden = len(t.columns) - len(shown)
        lines = []
        for i, c in enumerate(shown):
            parts = [f"  {_ident(c.name)} {c.type}"]
            if c.pk and len(t.pk) == 1:
                parts.append(" PRIMARY KEY")
            if c.ref:
                parts.append(f" REFERENCES {c.ref}")
            comma = "," if i < len(shown) - 1 or len(t.pk) > 1 else ""
            note = _column_note(c, samples)
            lines.append("".join(parts) + comma + (f" -- {note}" if note else ""))
        if len(t.pk) > 1:
            lines.append(f"  PRIMARY KEY ({', '.join(_ident(c) for c in t.pk)})")
        if hidden and name_hidden:
            shown_names = {c.name for c in shown}
            lines.append("  -- other columns: " + ", ".join(c.name for c in t.columns if c.name not in shown_names))
        elif hidden:
            lines.append(f"  -- ...and {hidden} more columns")
        grain = grain_note(t.grain) if t.grain and not t.pk else ""     # a declared key is shown as one
        about = "; ".join(x for x in (t.comment, "aka " + ", ".join(t.synonyms) if t.synonyms else "", grain) if x)
        head = f"CREATE TABLE {_ident(t.name)} (" + (f" -- {about}" if about else "")
        chunks.append(head + "\n" + "\n".join(lines) + "\n);")
    return "\n".join(chunks)


def table_line(t: Table, columns: list[str] | None = None, max_columns: int = 14) -> str:
    """One line for choosing tables: the name, its comment and what one row is, and ``columns`` (default: its
    first ``max_columns``), with "..." when it has more."""
    names = columns if columns is not None else [c.name for c in t.columns[:max_columns]]
    cols = ", ".join(names) + (", ..." if len(t.columns) > len(names) else "")
    about = "; ".join(x for x in (t.comment, grain_note(t.grain)) if x)       # what a row of it is: the entity
    return f"- {t.name}" + (f" ({about})" if about else "") + f": {cols}"


def render_instructions(catalog: Catalog) -> str:
    """The semantic file's instructions as SQL comments: how every schema text starts."""
    return "\n".join("-- " + line for line in (catalog.instructions or "").splitlines() if line.strip())


def render_schema(catalog: Catalog, tables: list[str] | None = None, **ddl_options) -> str:
    """What the model reads: the semantic file's instructions, the DDL of ``tables``, and the named
    metrics that belong to them (or to no table in particular)."""
    names = tables if tables is not None else list(catalog.tables)
    parts = [render_instructions(catalog)] if catalog.instructions else []
    parts.append(render_ddl(catalog, names, **ddl_options))
    metrics = [m for m in catalog.metrics if not m.table or m.table in names]
    if metrics:
        rows = []
        for m in metrics:
            about = "; ".join(x for x in (m.description, f"from {m.table}" if m.table else "") if x)
            rows.append(f"--   {m.name} = {m.expression}" + (f"  ({about})" if about else ""))
        parts.append("-- Metrics:\n" + "\n".join(rows))
    return "\n".join(parts)


def render_reach(catalog: Catalog, tables: list[str], question: str, shown: list[str], max_columns: int = 12) -> str:
    """The DDL of ``tables`` a check said hold what the shown tables lack (a season the curated model leaves out:
    ``checks.grounding.year_outside_span``, which names only tables whose span the asker's own read could
    query), for a retry's prompt: names matched case-insensitively, those already ``shown`` and those the catalog
    lacks left out, wide tables pruned to their keys, the columns the question names and their name columns. ""
    when none is left."""
    named = {t.lower(): t for t in catalog.tables}
    have = {t.lower() for t in shown}
    pick = [named[t.lower()] for t in dict.fromkeys(tables) if t.lower() in named and t.lower() not in have]
    if not pick:
        return ""
    return render_ddl(catalog, pick, columns=keep_columns(catalog, pick, question, [], max_columns), name_hidden=True)

