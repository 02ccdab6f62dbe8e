"""``duckask semantic``: write a first semantic file for a database, convert the older one, check one.

    duckask semantic init --db DB [-o FILE] [--models DIR]   a draft from the catalog (dbt's semantic model
                                                     spec); --models: a draft model per entity of a table family
    duckask semantic convert OLD.yaml --db DB [-o]   the older semantic file in dbt's spec, nothing lost
    duckask semantic check PATH [--db DB]            MetricFlow's validation; with --db, every table and
                                                     column must exist and every metric must compile and run
"""
from __future__ import annotations

import sys
from pathlib import Path

from duckask.utils.api.present import EXIT_FAIL, EXIT_OK, EXIT_USAGE


def add_parser(sub) -> None:
    p = sub.add_parser("semantic", help="the semantic file: init a draft, convert the older file, check one")
    ss = p.add_subparsers(dest="semantic_cmd", required=True)
    for name, func, helptext in (
            ("init", cmd_init, "write a draft semantic file (dbt's spec) from a database's catalog"),
            ("convert", cmd_convert, "convert the older semantic YAML/markdown file into dbt's spec")):
        q = ss.add_parser(name, help=helptext)
        if name == "convert":
            q.add_argument("old", help="the older semantic file")
        q.add_argument("--db", help="DuckDB file, EXPORT DATABASE folder or SQLite file (default: the Lahman demo DB)")
        q.add_argument("-o", "--out", help="file to write (default: print it)")
        q.add_argument("--force", action="store_true", help="overwrite --out if it exists")
        if name == "init":
            q.add_argument("--models", metavar="DIR", help="also propose a model file per entity that several "
                           "table families describe, as drafts in DIR/models/ (never over an existing file)")
        q.set_defaults(func=func)
    q = ss.add_parser("check", help="validate a semantic file; with --db, compile and run every metric")
    q.add_argument("path", help="a semantic file or a directory of them")
    q.add_argument("--db", help="check it against this database too")
    q.set_defaults(func=cmd_check)


def _open(db: str | None, semantic: str | None = None):
    """The database and its catalog; with ``semantic``, the model files of that directory built (if any)."""
    from duckask.utils.app.demo import db_or_demo
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import DatabaseError, open_database
    from duckask.utils.semantic import get_catalog
    from duckask.utils.semantic.descriptions import SemanticFileError

    settings = load_settings(descriptions=None)
    try:
        database = open_database(db_or_demo(db), load_settings(descriptions=semantic) if semantic else settings)
    except DatabaseError as e:      # a model that does not build: its file and line
        raise SemanticFileError(str(e)) from e
    return database, get_catalog(database, settings)


def _write(text: str, out: str | None, force: bool) -> int:
    import tempfile

    from duckask.utils.semantic.descriptions import SemanticFileError
    from duckask.utils.semantic.manifest import load_layer

    with tempfile.TemporaryDirectory() as tmp:   # what duckask writes must load: a draft MetricFlow rejects is a bug
        check = Path(tmp) / "semantic.yaml"
        check.write_text(text, encoding="utf-8")
        try:
            load_layer(check)
        except SemanticFileError as e:
            print(f"error: the semantic file written does not validate (a duckask bug, please report it): {e}",
                  file=sys.stderr)
            return EXIT_FAIL
    if not out:
        print(text, end="")
        return EXIT_OK
    p = Path(out)
    if p.exists() and not force:
        print(f"{p} exists: choose another -o, or add --force to overwrite it", file=sys.stderr)
        return EXIT_USAGE
    p.write_text(text, encoding="utf-8")
    print(f"wrote {p}: review it, then `duckask semantic check {p} --db ...`", file=sys.stderr)
    return EXIT_OK


def cmd_init(args) -> int:
    from duckask.utils.semantic.draft import draft_documents, render

    database, catalog = _open(args.db)
    if args.models:
        _write_models(database, catalog, Path(args.models), args.force)
    return _write(render(draft_documents(database, catalog), str(args.db or "the demo database")), args.out, args.force)


def _write_models(database, catalog, directory: Path, force: bool) -> None:
    from duckask.utils.semantic.families import propose_models

    drafts = propose_models(database, catalog)
    (directory / "models").mkdir(parents=True, exist_ok=True)
    for name, text in drafts.items():
        p = directory / "models" / name
        if p.exists() and not force:
            print(f"{p} exists: kept (--force overwrites)", file=sys.stderr)
            continue
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p}: a draft model, built once you review it and delete its -- DRAFT line", file=sys.stderr)
    if not drafts:
        print("no table families found (tables of two prefixes about the same thing): no models proposed",
              file=sys.stderr)


def cmd_convert(args) -> int:
    from duckask.utils.semantic.descriptions import SemanticFileError, load_semantic
    from duckask.utils.semantic.draft import convert, render

    try:
        old = load_semantic(args.old)[0]
    except SemanticFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAIL
    database, catalog = _open(args.db)
    text = render(convert(database, catalog, old), str(args.db or "the demo database"))
    text = text.replace("# DRAFT semantic file", f"# Semantic file converted from {args.old}; a", 1)
    return _write(text, args.out, args.force)


def cmd_check(args) -> int:
    from duckask.utils.semantic.descriptions import SemanticFileError, apply_descriptions
    from duckask.utils.semantic.manifest import load_layer
    from duckask.utils.semantic.reading import catalog_text
    from duckask.utils.semantic.verify import verify_metrics

    try:
        layer = load_layer(args.path)
        if args.db:
            database, catalog = _open(args.db, args.path)
            apply_descriptions(catalog, args.path)
    except SemanticFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAIL
    print(catalog_text(layer))
    if not args.db:
        print(f"ok: {len(layer.metrics)} metrics, {len(layer.dimensions)} dimensions (add --db to run them)")
        return EXIT_OK
    problems = verify_metrics(layer, database)
    for name, error in problems:
        print(f"error: metric {name!r} does not run: {error}", file=sys.stderr)
    print(f"{len(layer.metrics) - len(problems)} of {len(layer.metrics)} metrics compile and run on {args.db}")
    return EXIT_FAIL if problems else EXIT_OK
