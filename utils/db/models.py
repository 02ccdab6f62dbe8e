"""Models as knowledge: dbt-style model files (one SELECT each) built as views in duckask's own session.

A semantic directory may carry ``*.sql`` model files beside its YAML (dbt's layout: ``models/players.sql``).
Each holds one SELECT; ``{{ ref('other_model') }}`` names another model, ``{{ source('any', 'raw_table') }}``
(or the table's plain name) a table of the database, ``{{ config(...) }}`` is accepted and ignored (duckask
builds views only). Leading ``--`` comment lines are the model's description (which source family it reads
and why), shown to the model like a table comment.

``load_models(directory)`` reads and renders them with Jinja (dbt's own template language) and orders them
by their refs (``graphlib``; a cycle is an error naming the files). ``build_views(con, models)`` creates each
as a TEMP view on duckask's read-only connection, in dependency order, and runs each once over all its rows
(a cast that fails on one row fails there, not on a user's question). Temp views live in the connection's
memory: the user's database file is never written (its bytes stay the same). Every error names the model's
file and line (``ModelError``).

Why not dbt itself: dbt-core with dbt-duckdb materializes into a database it writes, pulls in a large
dependency tree and takes seconds to start; duckask needs views over a file it may only read. Jinja renders
the same ``ref``/``source`` syntax, so a dbt project's plain SELECT models work unchanged.

A file whose first line says ``-- DRAFT`` (``duckask semantic init --models``) is not built until someone has
reviewed it and deleted that line.

Run on its own (build a directory's models over a database and count each one's rows)::

    python -m duckask.utils.db.models DIRECTORY --db PATH
"""
from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import duckdb
import jinja2
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

from duckask.utils.db.quoting import quote_ident
from duckask.utils.db.tree import sql_tree, table_names

_LINE = re.compile(r"LINE (\d+):")


class ModelError(ValueError):
    """A model file that cannot be built: which file, which line, what is wrong."""


@dataclass
class Model:
    name: str
    path: Path
    text: str                                       # the file as written
    sql: str = ""                                   # rendered: refs and sources as quoted names
    refs: list[str] = field(default_factory=list)   # models it reads
    sources: list[str] = field(default_factory=list)  # tables named with source()
    reads: list[str] = field(default_factory=list)  # the tables and models its SELECT reads (parsed)
    description: str = ""

    def line_of(self, needle: str) -> int:
        return next((i for i, ln in enumerate(self.text.splitlines(), 1) if needle in ln), 1)


def model_files(directory: str | Path) -> list[Path]:
    """The ``*.sql`` files under a semantic directory (hidden folders and dbt's ``target/`` left out)."""
    d = Path(directory).expanduser()
    if not d.is_dir():
        return []
    return sorted(p for p in d.rglob("*.sql") if not any(
        part.startswith(".") or part in ("target", "dbt_packages") for part in p.relative_to(d).parts))


def _models_dir(settings) -> Path | None:
    """The settings' semantic directory when it holds model files."""
    d = getattr(settings, "descriptions", None)
    return Path(d).expanduser() if d and model_files(d) else None


def models_stamp(settings) -> str:
    """What identifies the settings' models' state ("" without any): part of the database's key, so a
    changed model reopens the connection and refreshes the catalog."""
    from duckask.utils.db.sources import fingerprint

    d = _models_dir(settings)
    return f"|models:{fingerprint(model_files(d))[:12]}" if d else ""


def models_for(settings) -> tuple[list[Model], str]:
    """The settings' models in build order, and their stamp ([], "" without a semantic directory of them)."""
    d = _models_dir(settings)
    return (load_models(d), models_stamp(settings)) if d else ([], "")


def _description(text: str) -> str:
    lines = []
    for ln in text.splitlines():
        s = ln.strip()
        if not s.startswith("--"):
            break
        lines.append(s[2:].strip())
    return " ".join(x for x in lines if x)


def _render(m: Model, names: set[str]) -> None:
    def ref(*args):
        name = args[-1]
        if name not in names:
            raise ModelError(f"{m.path}, line {m.line_of(name)}: ref('{name}') names no model "
                             f"(models here: {', '.join(sorted(names)) or 'none'})")
        m.refs.append(name)
        return quote_ident(name)

    def source(_source, table):
        m.sources.append(table)
        return quote_ident(table)

    # Sandboxed: a model file is text from the directory, not code; no attribute walk reaches Python's internals
    # (``lipsum.__globals__``, ``''.__class__``): jinja2.exceptions.SecurityError, named as the file's error.
    env = SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    try:
        sql = env.from_string(m.text).render(ref=ref, source=source, config=lambda *a, **k: "")
    except jinja2.TemplateSyntaxError as e:
        raise ModelError(f"{m.path}, line {e.lineno}: {e.message}") from e
    except jinja2.UndefinedError as e:
        raise ModelError(f"{m.path}: {e.message} (a model may use ref(), source() and config())") from e
    except SecurityError as e:
        raise ModelError(f"{m.path}: refused: {e} (a model may use ref(), source() and config(), nothing of "
                         "Python's)") from e
    m.sql = sql.rstrip().rstrip(";").rstrip()      # leading lines kept: an error's LINE n is the file's line n
    if not m.sql.strip():
        raise ModelError(f"{m.path}: the file holds no SELECT")


def is_draft(text: str) -> bool:
    """A proposed model not yet reviewed (``duckask semantic init --models``): its first line says ``-- DRAFT``."""
    return bool(re.match(r"\s*--\s*DRAFT\b", text))


def load_models(directory: str | Path) -> list[Model]:
    """The directory's models, rendered and in build order (a model after every model it refs); drafts not yet
    reviewed are left out, as the plan path leaves out a draft semantic file."""
    files = [f for f in model_files(directory) if not is_draft(f.read_text("utf-8"))]
    models: dict[str, Model] = {}
    for f in files:
        name = f.stem
        if name in models:
            raise ModelError(f"{f}: a second model named {name!r} (the first: {models[name].path})")
        text = f.read_text("utf-8")
        models[name] = Model(name, f, text, description=_description(text))
    for m in models.values():
        _render(m, set(models))
    try:
        order = list(TopologicalSorter({n: set(m.refs) for n, m in models.items()}).static_order())
    except CycleError as e:
        cycle = e.args[1]
        raise ModelError("models ref each other in a cycle: " + " -> ".join(
            f"{c} ({models[c].path.name})" for c in cycle)) from e
    return [models[n] for n in order]


def _where(m: Model, message: str, own_line: bool = True) -> int:
    """The line of ``m``'s file an engine message points at (rendering keeps the lines where they were);
    for an error in duckask's row check (``own_line`` False), the line naming the column it quotes."""
    hit = _LINE.search(message)
    if hit and own_line:
        return int(hit.group(1))
    words = re.findall(r'"([^"]+)"|column (\w+)', message.splitlines()[0])
    return next((m.line_of(w) for pair in words for w in pair if w and w in m.text), 1)


def _check(m: Model, scope) -> None:
    from duckask.utils.db.safety import UnsafeSQLError, check_sql

    try:
        check_sql(m.sql, scope)
    except UnsafeSQLError as e:
        why = str(e.__cause__ or e)
        raise ModelError(f"{m.path}, line {_where(m, why)}: a model is one read-only SELECT: {e}") from e


def build_views(con: duckdb.DuckDBPyConnection, models: list[Model], *, check_rows: bool = True) -> dict[str, int]:
    """Each model as a TEMP view on ``con`` (dependency order), run once over all its rows when ``check_rows``;
    {name: rows} (-1 when not counted). ModelError names the file and line of the first that fails."""
    from duckask.utils.db.binder import ConnectionScope

    rows: dict[str, int] = {}
    scope = ConnectionScope(con)
    existing = {n.lower() for (n,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall()}
    for m in models:
        if m.name.lower() in existing:
            raise ModelError(f"{m.path}: model {m.name!r} has the name of a table of the database (rename the file)")
        _check(m, scope)
        known = existing | {n.lower() for n in rows}
        m.reads = [t for t in table_names(sql_tree(m.sql)) if t.lower() in known]
        try:
            con.execute(f"CREATE OR REPLACE TEMP VIEW {quote_ident(m.name)} AS {m.sql}")
        except duckdb.Error as e:
            raise ModelError(f"{m.path}, line {_where(m, str(e))}: {str(e).splitlines()[0]}") from e
        try:        # every row and column computed once (a count alone would skip the columns' casts)
            if check_rows:
                row = con.execute(f"SELECT count(*), bit_xor(hash(t)) FROM {quote_ident(m.name)} AS t").fetchone()
                assert row is not None              # an aggregate: always one row
                rows[m.name] = row[0]
            else:
                rows[m.name] = -1
        except duckdb.Error as e:
            raise ModelError(f"{m.path}, line {_where(m, str(e), False)}: {str(e).splitlines()[0]}") from e
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Build a directory's model files as views and count their rows.")
    ap.add_argument("directory")
    ap.add_argument("--db", required=True, help="a DuckDB file or EXPORT DATABASE folder (opened read-only)")
    a = ap.parse_args(argv)
    from duckask.utils.config import load_settings
    from duckask.utils.db.sources import resolve_db_file

    try:
        models = load_models(a.directory)
        con = duckdb.connect(str(resolve_db_file(a.db, load_settings())), read_only=True)
        for name, n in build_views(con, models).items():
            m = next(x for x in models if x.name == name)
            print(f"{name:24} {n:>9} rows  reads {', '.join(m.reads) or '-'}")
        for f in model_files(a.directory):
            if is_draft(f.read_text("utf-8")):
                print(f"{f.stem:24} not built: a draft (review it, then delete its -- DRAFT line)")
    except ModelError as e:
        print(f"error: {e}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
