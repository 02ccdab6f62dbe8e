"""``duckask learn`` on the command line (and ``--learn MINUTES`` on ``warm`` and ``serve``): its arguments, its bar,
its report. The learning itself is ``utils/app/learn.py``, imported only when a command runs it."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from duckask.utils.api.present import EXIT_OK


def add_learn_command(sub) -> None:
    p = sub.add_parser("learn", help="learn a database before its first question: verified question/SQL pairs of its "
                                     "own (resumable, bounded in time)")
    p.add_argument("--db", help="DuckDB file, EXPORT DATABASE folder, SQLite file or postgresql:// URL "
                                "(default: the Lahman demo DB)")
    p.add_argument("--config")
    p.add_argument("--minutes", type=float, default=15.0, help="stop after this many minutes (default 15); run it "
                                                               "again to go on where it stopped")
    p.add_argument("--limit", type=int, help="try at most this many drafts this run")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_learn)


def add_learn_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--learn", type=float, metavar="MINUTES", dest="learn_minutes",
                   help="first learn the database for at most MINUTES (as `duckask learn`; resumes an earlier run)")


def learn_first(args) -> None:
    """``--learn MINUTES`` on warm and serve: learn the database first (``duckask learn``), with its progress;
    ``args.db`` is already the database (the command resolved the demo, if none was named)."""
    if getattr(args, "learn_minutes", None):
        _learn(args.db, args.learn_minutes, None, getattr(args, "config", None))


def _learn(db: str, minutes: float, limit: int | None, config: str | None):
    """Run ``learn`` on ``db`` with a bar on a terminal (a line per draft otherwise) and print what it did."""
    from duckask.utils.app.learn import learn

    bar = _LearnProgress(minutes)
    try:
        report = learn(db, minutes=minutes, limit=limit, config=config, progress=bar)
    finally:
        bar.close()
    share = report.read_back_share
    print(f"learned {report.db}: {report.kept} pairs kept of {report.tried} drafts tried in {report.seconds:.0f}s "
          f"({report.kept_total} kept in all; {report.tried_before + report.tried} of {report.drafts} drafts tried"
          + (f"; {share:.0f}% of the questions read back" if share is not None else "") + ")"
          + {"time": f"; stopped at {minutes:g} min: run it again to go on", "limit": "; stopped at --limit"}
          .get(report.stopped, ""), file=sys.stderr)
    return report


class _LearnProgress:
    """A bar of drafts and time on a terminal (rich), a line per draft elsewhere (a log, CI)."""

    def __init__(self, minutes: float):
        self.bar: Any = None
        self.task: Any = None
        if sys.stderr.isatty():
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("learn"), BarColumn(), TextColumn("{task.completed}/{task.total} drafts"),
                                TextColumn("{task.fields[kept]} kept"), TimeElapsedColumn(),
                                TextColumn(f"of {minutes:g} min"), transient=True)
            self.bar.start()

    def __call__(self, report, line: str) -> None:
        if self.bar is None:
            print(f"learn {report.tried_before + report.tried}/{report.drafts} ({report.seconds:.0f}s) {line}",
                  file=sys.stderr)
            return
        if self.task is None:
            self.task = self.bar.add_task("learn", total=report.drafts, kept=0)
        self.bar.update(self.task, completed=report.tried_before + report.tried, kept=report.kept_total)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def cmd_learn(args) -> int:
    from duckask.utils.app.demo import db_or_demo

    report = _learn(db_or_demo(args.db), args.minutes, args.limit, args.config)
    if args.json:
        print(json.dumps({**report.__dict__, "read_back_share": report.read_back_share}))
    return EXIT_OK
