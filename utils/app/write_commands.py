"""The subcommands that can change a database or send results out: ``duckask sql`` (a read, or a
gated write with ``--allow-writes``), ``duckask audit``, and what ``duckask ask`` does after the
answer (``--out``, ``--email``, ``--into-table``).

``duckask decide ID`` decides a write another process left pending (an agent's MCP ``propose_write``).
``duckask sql --allow-writes "UPDATE ..."`` shows the approval card on the terminal and writes only
after the word "yes"; when stdin is not a terminal nothing is written (exit 3). Without
``--allow-writes`` a write is refused (exit 1); either way the attempt is in the audit log.
"""
from __future__ import annotations

import json
import sys

from duckask.utils.app.commands import EXIT_CLARIFY, EXIT_FAIL, EXIT_OK, EXIT_USAGE, settings_options
from duckask.utils.app.demo import db_or_demo


def _print_rows(out, args) -> None:
    from duckask.utils.api.present_sql import outcome_json, outcome_text

    if args.json:
        print(json.dumps(outcome_json(out), default=str))
        return
    shown, note = outcome_text(out, args.max_rows)
    if shown:
        print(shown)
    if note:
        print(note, file=sys.stderr)


def cmd_sql(args) -> int:
    from duckask.utils.api import run_sql
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.writes.tiers import is_write

    settings = load_settings(args.config, **settings_options(args))
    database = open_database(db_or_demo(args.db), settings)
    if getattr(args, "tidy", False):
        from duckask.utils.semantic import get_catalog
        from duckask.utils.sql.tidy import tidy_sql

        print(tidy_sql(args.sql, get_catalog(database, settings), args.question))
        return EXIT_OK
    if is_write(args.sql):
        return _write(args, database, settings)
    out = run_sql(database, settings, args.sql, export=bool(getattr(args, "out", None)))
    _print_rows(out, args)
    if out.ok and getattr(args, "out", None):
        from duckask.utils.delivery.export import ExportError, export_frame

        try:
            if out.truncated:
                raise ExportError(f"more than export_row_cap={settings.export_row_cap:,} rows; raise it or narrow "
                                  "the query")
            print(f"wrote {len(out.df):,} row(s) to {export_frame(out.df, args.out)}", file=sys.stderr)
        except ExportError as e:
            print(f"duckask: not exported: {e}", file=sys.stderr)
            return EXIT_FAIL
    return EXIT_OK if out.ok else EXIT_FAIL


def _write(args, database, settings) -> int:
    from duckask.utils.api.present import exit_code
    from duckask.utils.app.deliver import write_prompt
    from duckask.utils.state import writes

    card = writes.propose(args.sql, database, settings)
    if card.decision == "pending":
        prompt = write_prompt(args.json)
        if prompt is None:
            print(card.text(), file=sys.stderr)
        yes = prompt is not None and prompt(card)["decision"] == "yes"
        writes.decide(card, yes, database, settings, reason=None if prompt else writes.NO_APPROVER)
    if args.json:   # the vocabulary of `sql --json` (ok, refused, ...) plus what became of the write
        status = {"blocked": "refused"}.get(card.status, card.status)
        print(json.dumps({"status": status, "sql": card.sql, "error": card.blocked or card.detail,
                          "write": card.public()}, default=str))
    print(card.summary(), file=sys.stderr if args.json or card.outcome != "committed" else sys.stdout)
    return exit_code(card.status, card.detail)


def cmd_audit(args) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.state import audit_log
    from duckask.utils.writes.audit import as_json, database_key, render

    settings = load_settings(args.config, **settings_options(args))
    db = database_key(args.db) if args.db else None
    log = audit_log(settings)
    entries = log.entries(db, args.limit)
    print(as_json(entries) if args.json else render(entries))
    if not args.json:
        print(f"({len(entries)} entr{'y' if len(entries) == 1 else 'ies'} in {log.path})",
              file=sys.stderr)
    return EXIT_OK


def cmd_decide(args) -> int:
    """``duckask decide ID --db DB``: a write another process left pending (an agent's ``propose_write``)
    shown as its card, run after a typed yes only, or rejected with ``--reject``."""
    from duckask.utils.api.present import exit_code
    from duckask.utils.app.deliver import write_prompt
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.state import writes
    from duckask.utils.writes.audit import os_user

    settings = load_settings(args.config, **{**settings_options(args), "allow_writes": True})
    database = open_database(db_or_demo(args.db), settings)
    try:
        card = writes.recorded(args.id, database, settings)
        if card.decision != "pending":
            raise ValueError(f"write #{card.id} is {card.decision}, not pending: it was decided already")
    except ValueError as e:
        print(f"duckask: {e}", file=sys.stderr)
        return EXIT_FAIL
    me = os_user()            # the person at this terminal, not the process that proposed it
    if args.reject is not None:
        writes.reject(card, settings, reason=args.reject or None, by=me)
    else:
        prompt = write_prompt()
        if prompt is None:
            print(card.text() + "\nNot decided: approving needs a terminal to type yes on.", file=sys.stderr)
            return EXIT_CLARIFY
        writes.decide(card, prompt(card)["decision"] == "yes", database, settings, by=me)
    print(card.summary(), file=sys.stdout if card.outcome == "committed" else sys.stderr)
    return exit_code(card.status, card.detail)


def cmd_users(args) -> int:
    """``duckask users add FILE NAME --role ROLE``: the key is printed once; the file keeps its sha256 only."""
    from duckask.utils.access.roles import AccessError, add_user

    try:
        key = add_user(args.file, args.name, args.role)
    except AccessError as e:
        print(f"duckask: {e}", file=sys.stderr)
        return EXIT_FAIL
    print(key)
    print(f"added {args.name} ({args.role}) to {args.file}: give them this key; it is not stored and not shown again",
          file=sys.stderr)
    return EXIT_OK


def cmd_state(args) -> int:
    """``duckask state``: where taught pairs, the audit log and pending writes live, with counts; ``duckask state
    migrate --to URL``: copy the local files into that shared Postgres state (one transaction)."""
    from duckask.utils.config import SettingError, check_setting, load_settings
    from duckask.utils.db.remote import redact
    from duckask.utils.state import audit_log, shared_state

    try:
        settings = load_settings(args.config, **settings_options(args))
        if args.action == "migrate":
            if not args.to:
                print("duckask state migrate: --to postgresql://... is needed (the shared state to fill)",
                      file=sys.stderr)
                return EXIT_USAGE
            from duckask.utils.state.migrate import migrate

            done = migrate(settings, check_setting("state", args.to))
            print(f"copied into {redact(args.to)}: {done['pairs']} taught pairs, {done['audit_added']} audit entries "
                  f"({done['audit_already_there']} were there from an earlier migration); the local files are "
                  "unchanged: serve with --state to use the shared state")
            return EXIT_OK
        shared = shared_state(settings)
        entries = audit_log(settings).entries()
    except (SettingError, RuntimeError) as e:
        print(f"duckask state: {e}", file=sys.stderr)
        return EXIT_FAIL
    pending = sum(1 for e in entries if e["decision"] == "pending")
    if shared is None:
        print(f"local files: taught pairs in {settings.resolved_knowledge_file}, audit log in "
              f"{settings.resolved_audit_file} ({len(entries)} entries, {pending} pending); pending writes in "
              "each server's memory")
    else:
        print(f"shared state {shared.shown}: taught pairs, audit log ({len(entries)} entries, {pending} pending) "
              "and pending writes, for every server started with it")
    return EXIT_OK
