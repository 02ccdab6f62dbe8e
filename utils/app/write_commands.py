"""The subcommands that can change a database or send results out: ``duckask sql`` (a read, or a
gated write with ``--allow-writes``), ``duckask audit``, and what ``duckask ask`` does after the
answer (``--out``, ``--email``, ``--into-table``).

``duckask sql --allow-writes "UPDATE ..."`` shows the approval card on the terminal and writes only
after the word "yes"; when stdin is not a terminal nothing is written (exit 3). Without
``--allow-writes`` a write is refused (exit 1); either way the attempt is in the audit log.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from duckask.utils.app.commands import EXIT_CLARIFY, EXIT_FAIL, EXIT_OK, _db_or_demo, _settings_options


def _print_rows(out, args) -> None:
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


def cmd_sql(args) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.db.database import open_database
    from duckask.utils.db.tiers import is_write

    settings = load_settings(args.config, **_settings_options(args))
    database = open_database(_db_or_demo(args.db), settings)
    if is_write(args.sql):
        return _write(args, database, settings)
    # The connection is shared per file and process: pass this call's timeout and row cap explicitly
    # (an export holds every row, up to export_row_cap).
    cap = settings.export_row_cap if getattr(args, "out", None) else settings.row_cap
    out = database.run(args.sql, timeout_s=settings.timeout_s, row_cap=cap)
    _print_rows(out, args)
    if out.ok and getattr(args, "out", None):
        from duckask.utils.delivery.export import ExportError, export_frame

        try:
            if out.truncated:
                raise ExportError(f"more than export_row_cap={cap:,} rows; raise it or narrow the query")
            print(f"wrote {len(out.df):,} row(s) to {export_frame(out.df, args.out)}", file=sys.stderr)
        except ExportError as e:
            print(f"duckask: not exported: {e}", file=sys.stderr)
            return EXIT_FAIL
    return EXIT_OK if out.ok else EXIT_FAIL


def _write(args, database, settings) -> int:
    from duckask.utils.app.deliver import card_text, write_prompt
    from duckask.utils.db import writes

    card = writes.propose(args.sql, database, settings)
    if card["decision"] == "pending":
        prompt = write_prompt(args.json)
        if prompt is None:
            print(card_text(card), file=sys.stderr)
            writes.reject(card, settings, reason="no approval: stdin is not a terminal, and a write needs a typed yes")
        elif prompt(card)["decision"] == "yes":
            writes.approve(card, database, settings)
        else:
            writes.reject(card, settings)
    if args.json:   # the vocabulary of `sql --json` (ok, refused, ...) plus what became of the write
        status = {"blocked": "refused"}.get(writes.status(card), writes.status(card))
        print(json.dumps({"status": status, "sql": card["sql"], "error": card["blocked"] or card["detail"],
                          "write": writes.public(card)}, default=str))
    print(writes.summary(card), file=sys.stderr if args.json or card.get("outcome") != "committed" else sys.stdout)
    if card.get("outcome") == "committed":
        return EXIT_OK
    if card["decision"] == "rejected":
        return EXIT_CLARIFY if card["detail"] else EXIT_OK
    return EXIT_FAIL


def cmd_audit(args) -> int:
    from duckask.utils.config import load_settings
    from duckask.utils.db.audit import AuditLog, as_json, render

    settings = load_settings(args.config)
    db = str(Path(args.db).expanduser().resolve()) if args.db else None
    entries = AuditLog(settings.resolved_audit_file).entries(db, args.limit)
    print(as_json(entries) if args.json else render(entries))
    if not args.json:
        print(f"({len(entries)} entr{'y' if len(entries) == 1 else 'ies'} in {settings.resolved_audit_file})",
              file=sys.stderr)
    return EXIT_OK


def after_answer(r, args) -> int:
    """``ask --out / --email / --into-table``: each on an answered Result; returns an exit code (0: all done)."""
    from duckask.utils.app import deliver

    code = EXIT_OK
    wanted = [(getattr(args, "out", None), deliver.export), (getattr(args, "email", None), deliver.email)]
    for target, action in wanted:
        if target:
            ok, message = action(r, target)
            print(f"duckask: {message}", file=sys.stderr)
            code = code if ok else EXIT_FAIL
    if getattr(args, "into_table", None):
        if not r.ok:
            print(f"duckask: no table made: the question was not answered ({r.status})", file=sys.stderr)
            return EXIT_FAIL
        w = deliver.into_table(r, args.into_table)
        print(w.answer, file=sys.stderr)
        if w.status == "pending":
            print("Not written: --into-table needs a terminal to approve on (or use Python's Result.to_table and "
                  "approve()).", file=sys.stderr)
            return EXIT_CLARIFY
        code = code if w.status == "written" else ({"rejected": code}.get(w.status, EXIT_FAIL))
    return code
