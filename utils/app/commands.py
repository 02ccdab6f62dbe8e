"""What each ``duckask`` subcommand does (the parser and exit codes are in ``cli.py``)."""
from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from duckask.utils.api.present import EXIT_CLARIFY, EXIT_FAIL, EXIT_OK, EXIT_USAGE  # noqa: F401 (the one map)
from duckask.utils.app.demo import db_or_demo

DEMO_QUESTION = "Who hit the most home runs in 2019?"


def settings_options(args: argparse.Namespace) -> dict[str, Any]:
    keys = ("resample_drafts", "max_fix_retries", "max_grader_rounds", "grader", "analyzer", "clarify", "timeout_s",
            "row_cap", "base_url", "model", "model_path", "descriptions", "examples", "column_pruning", "dialect_notes",
            "router", "follow_ups", "confirm", "allow_writes", "plan_path", "min_confidence",
            "confidence_drafts", "candidates", "time_budget_s", "state", "source_mode", "plan_grammar", "learned")
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def _progress(json_mode: bool):
    """The status line on a terminal (``terminal.StatusLine``); None elsewhere (a pipe, --json)."""
    if json_mode or not sys.stderr.isatty():
        return None
    from duckask.utils.app.terminal import StatusLine

    return StatusLine()


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


def _print_result(r, args, streamed: str = "") -> int:
    from duckask.utils.api.present import as_json, exit_code, text

    if args.json:
        print(json.dumps(as_json(r, args.max_rows), default=str))
    else:
        print(text(r, args.max_rows, streamed=streamed, trace=args.trace))
    return exit_code(r.status)


def report_failure(e: Exception, args) -> int | None:
    """The exit code a command ends with on an error a user can act on (a database, model, setting or audit log
    problem, a question over the limit), after saying what was wrong on stderr (and with ``--json`` as a JSON
    object); None for any other error, which is a bug."""
    from duckask.utils.api import QuestionTooLong
    from duckask.utils.db.database import DatabaseError
    from duckask.utils.llm import LLMError
    from duckask.utils.llm.model_store import ModelError
    from duckask.utils.writes.audit import AuditError

    if not isinstance(e, (DatabaseError, LLMError, ModelError, AuditError, ValueError, FileNotFoundError)):
        return None
    if getattr(args, "json", False):
        print(json.dumps({"status": "error", "answer": f"{type(e).__name__}: {e}", "sql": None, "columns": [],
                          "rows": [], "tables": [], "trace": []}))
    print(f"duckask: {e}", file=sys.stderr)
    return EXIT_USAGE if isinstance(e, QuestionTooLong) else EXIT_FAIL


def cmd_ask(args) -> int:
    from duckask.utils.api import ask

    question = args.question
    args.sql = getattr(args, "sql", None)  # `duckask demo` has no --sql
    if question == "-" or (question is None and not args.sql and not sys.stdin.isatty()):
        question = sys.stdin.read().strip()  # `echo "question" | duckask ask`
    if not (question or "").strip() and not args.sql:
        print("duckask ask: give a question (an argument, or on stdin), or --sql \"SELECT ...\"", file=sys.stderr)
        return EXIT_USAGE
    from duckask.utils.app.terminal import Stream, confirm_prompt

    status = _progress(args.json)
    stream = Stream(status) if not args.json and sys.stdout.isatty() else None
    options = settings_options(args)
    # --confirm: the prompt on a terminal; elsewhere the setting alone, and the Result is pending.
    confirm = (confirm_prompt(args.json) or True) if options.pop("confirm", None) else None
    from duckask.utils.app.deliver import write_prompt

    clear = status.before if status else (lambda callback: callback)
    r = ask(question, db=db_or_demo(args.db), sql=args.sql, config=args.config,
            ask_user=clear(_interactive_prompt(args.json)), confirm=clear(confirm),
            approve_write=clear(write_prompt(args.json)), on_node=status, on_text=stream, **options)
    if status:
        status.clear()
    code = _print_result(r, args, stream.text if stream else "")
    if getattr(args, "chart", None) and r.df is not None:
        from duckask.utils.api.chart import chart_for_cli

        code = code or chart_for_cli(r.df, args.chart)
    if r.status == "pending" and not args.json:
        print("\nNot run: it needs a terminal to approve on; nothing was changed.", file=sys.stderr)
    if r.status == "answered":
        from duckask.utils.app.deliver import after_answer

        code = code or after_answer(r, args)
    return code


def cmd_chat(args) -> int:
    from duckask.utils.app.chat import run_chat

    args.db = db_or_demo(args.db)       # once for the session
    return run_chat(args, settings_options(args))


def cmd_schema(args) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.knowledge.demo import demo_knowledge
    from duckask.utils.schema.ddl import render_schema
    from duckask.utils.schema.ranker import explain
    from duckask.utils.semantic import get_catalog
    from duckask.utils.semantic.manifest import layer_for
    from duckask.utils.semantic.reading import catalog_text, summary

    db = db_or_demo(args.db)
    settings = demo_knowledge(load_settings(args.config, **settings_options(args)), db)
    cat = get_catalog(db, settings)
    tables = args.tables.split(",") if args.tables else None
    unknown = [t for t in tables or [] if t not in cat.tables]
    if unknown:
        print(f"unknown table(s): {', '.join(unknown)}", file=sys.stderr)
        return EXIT_FAIL
    if args.rank:
        print(explain(cat, args.rank, args.top))
        return EXIT_OK
    ddl = render_schema(cat, tables)
    layer = layer_for(settings)
    if args.json:
        print(json.dumps({"tables": list(cat.tables), "ddl": ddl, **summary(layer)}))
    else:
        print(ddl)
        if layer:
            print("\n-- The semantic layer (plans name these; MetricFlow writes the SQL)\n" + catalog_text(layer))
    return EXIT_OK


def cmd_demo(args) -> int:
    args.db = None
    args.question = args.question or DEMO_QUESTION
    print(f"Q: {args.question}", file=sys.stderr)
    return cmd_ask(args)


def cmd_warm(args) -> int:
    from duckask.utils.app.learn_command import learn_first
    from duckask.utils.app.warm import warm

    args.db = db_or_demo(args.db)       # once, for --learn and the warming both
    learn_first(args)
    t0 = time.perf_counter()
    recs = warm(args.db, limit=args.limit, config=args.config,
                progress=lambda m: print(m, file=sys.stderr),
                **{k: v for k in ("descriptions", "examples") if (v := getattr(args, k, None)) is not None})
    if not recs:
        print("duckask warm: nothing to do (only the embedded model keeps prompt states)", file=sys.stderr)
        return EXIT_OK
    stored = sum(r["stored"] for r in recs)
    print(f"warmed {len(recs)} prompt prefixes ({stored} new, {sum(r['tokens'] for r in recs):,} tokens) "
          f"in {time.perf_counter() - t0:.1f}s")
    return EXIT_OK


def cmd_eval(args) -> int:
    from duckask.utils.eval.report import render_markdown
    from duckask.utils.eval.run import evaluate, rescore

    if args.rescore:
        if not args.out:
            print("duckask eval: --rescore needs --out, the records to score again", file=sys.stderr)
            return EXIT_USAGE
        summary = rescore(args.questions, out=args.out, db=args.db, db_dir=args.db_dir, report=args.report,
                          config=args.config, semantic_dir=args.semantic_dir, **settings_options(args))
        print(json.dumps(summary) if args.json else render_markdown(summary))
        return EXIT_OK
    df = evaluate(args.questions, db=args.db, db_dir=args.db_dir, ids=args.ids, out=args.out, mode=args.mode,
                  baseline=args.baseline, workers=args.workers, cache=args.cache, report=args.report,
                  limit=args.limit, config=args.config, semantic_dir=args.semantic_dir, **settings_options(args))
    summary = df.attrs["summary"]
    if args.json:
        print(json.dumps(summary))
    else:
        print(render_markdown(summary))
        print(f"records: {df.attrs['out']}")
    return EXIT_OK


def cmd_teach(args) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.knowledge import ExampleError, teach
    from duckask.utils.writes.audit import printable

    try:
        ex = teach(args.question, args.sql, db_or_demo(args.db), load_settings(args.config, **settings_options(args)))
    except ExampleError as e:
        print(f"duckask teach: not stored: {e}", file=sys.stderr)
        return EXIT_FAIL
    if args.json:
        print(json.dumps(ex.as_dict()))
    else:
        print(f"stored example {ex.id} (tables: {', '.join(ex.tables)}): {printable(ex.question)}")
    return EXIT_OK


def cmd_examples(args) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.knowledge import database_identity, examples_for
    from duckask.utils.knowledge.shared import knowledge_store

    settings = load_settings(args.config, **settings_options(args))
    db = db_or_demo(args.db)
    store, key = knowledge_store(settings), database_identity(db)
    if args.remove is not None:
        if not store.remove(key, args.remove):
            print(f"duckask examples: no example {args.remove} for {key} (see `duckask examples --db {db}`)",
                  file=sys.stderr)
            return EXIT_FAIL
        print(f"removed example {args.remove}")
        return EXIT_OK
    shown = examples_for(open_database(db, settings), settings)
    if args.json:
        print(json.dumps([e.as_dict() for e in shown]))
        return EXIT_OK
    from duckask.utils.writes.audit import printable

    for e in shown:      # escaped as the audit is: a kept question cannot drive the terminal that lists it
        print(f"{printable(e.id):>8}  {printable(e.question)}\n          {printable(' '.join(e.sql.split()))}")
    if not shown:
        print(f"no examples for {key}: add some with `duckask teach --db {db} \"question\" \"SQL\"` "
              "or an --examples FILE", file=sys.stderr)
    return EXIT_OK


def cmd_model(args) -> int:
    from duckask.utils.llm import model_store

    return model_store.main(["--verify"] if args.verify else [])
