"""`duckask learn` on the benchmark databases, timed, with what it kept (issue 63): the store the `*-learned`
configurations of bench/suites.yaml ask with.

    .venv/bin/python bench/learn.py nba --minutes 15          # the 52-table warehouse
    .venv/bin/python bench/learn.py idioms --minutes 3        # each of the six idioms databases, 3 minutes each

Each database's report (drafts, tried, kept, refused by why, the share of questions that read back, seconds, and
whether it stopped at its bound) goes to docs/results/learn/<set>.json with the command, date, commit and CAL
(timed first, alone), and the kept pairs to docs/results/learn/<set>-pairs.jsonl (question, SQL, kind) for reading.
``--fresh`` forgets what an earlier run learned on those databases first (a timed run from nothing).
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from run import RESULTS, calibrate, commit, now  # noqa: E402

SETS = {"nba": [str(ROOT.parent / "shared" / "data" / "nba")],
        "idioms": [f"/tmp/duckask_idioms/{n}.duckdb" for n in ("catalog", "events", "logs", "sales_star", "survey",
                                                               "trips")]}


def _shown(db: str) -> str:
    """A database as the records name it: ../shared relative to the repository's root, never this machine's path."""
    path = Path(db).resolve()
    return f"../{path.relative_to(ROOT.parent)}" if path.is_relative_to(ROOT.parent / "shared") else db


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.api import prepare
    from duckask.utils.app.learn import learn
    from duckask.utils.knowledge.learned import LearnedStore, learned_path
    from duckask.utils.llm import ScriptedLLM

    ap = argparse.ArgumentParser(description="duckask learn on a benchmark set's databases, timed")
    ap.add_argument("set", choices=sorted(SETS))
    ap.add_argument("--minutes", type=float, default=15.0, help="per database")
    ap.add_argument("--fresh", action="store_true", help="forget what was learned on these databases first")
    args = ap.parse_args(argv)
    cal, started, reports = calibrate(), now(), []
    out = RESULTS / "learn"
    out.mkdir(parents=True, exist_ok=True)
    pairs = []
    for db in SETS[args.set]:
        opened = prepare(db, llm=ScriptedLLM({}))
        path = learned_path(opened.database, opened.settings)
        if args.fresh and path.exists():
            shutil.move(path, path.with_suffix(".before-fresh"))
        name = Path(db).stem
        r = learn(db, minutes=args.minutes,
                  progress=lambda rep, line, name=name: print(f"{name} {rep.tried}/{rep.drafts} {rep.seconds:.0f}s "
                                                              f"{line}", file=sys.stderr))
        reports.append({**r.__dict__, "db": _shown(db), "store": f"<cache_dir>/learned/{Path(r.store).name}",
                        "read_back_share": r.read_back_share})
        pairs += [{"db": Path(db).stem, **{k: p[k] for k in ("kind", "question", "sql")}}
                  for p in LearnedStore(path).kept()]
    total = {k: sum(r[k] for r in reports) for k in ("drafts", "tried", "kept", "seconds")}
    (out / f"{args.set}.json").write_text(json.dumps(
        {"command": f"bench/learn.py {' '.join(sys.argv[1:])}", "started": started, "finished": now(),
         "commit": commit(), "cal_s": cal, "total": total, "databases": reports}, indent=1) + "\n")
    (out / f"{args.set}-pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    print(json.dumps({"total": total, "cal_s": cal}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
