"""Risk and coverage of the confidence, per kind of database (issue 64): which answers to trust, read from the runs.

For each kind (fresh DuckDB databases: the idioms; Spider's; the NBA warehouse; the taught Lahman demo), the latest
committed run of its shipped configuration is read as the run labelled it (the record's ``confidence``) and scored
by the user's ruler where the set names its answer columns (``holds``), else strict EX:

- the table: answers, right %, ``high``: how many and how many of them right, ``medium`` and ``low`` likewise, and
  the share of wrong answers labelled ``low`` (the targets: ``high`` >= 90 % right on every kind; >= 60 % of wrong
  answers ``low``);
- the plot: coverage on one axis (the share of answers kept, most confident first, by the confidence's score), the
  accuracy of what is kept on the other; a point per level boundary.

No model is run: the figures are those of the committed records (their command, date and CAL are in each
``.run.json``); ``--again`` labels the same records as today's code would from their signals (issue 64: the words of
the question tied to nothing cap ``high``, those naming a thing make it ``low``; a question the data cannot answer is
not answered). Small sets: 20
questions move a share by about 10 points.

    .venv/bin/python bench/risk_coverage.py --out docs/results/confidence/risk-coverage \
        --plot docs/images/risk-coverage.png
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from duckask.utils.eval.records import read_records

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from calibration import LEVELS, _pct  # noqa: E402  (one share and one order of levels for both reports)

RESULTS = ROOT / "docs" / "results"
#: kind -> the runs of its shipped configuration (held-out sets first)
KINDS = {
    "fresh DuckDB (idioms held-out)": ["idioms-heldout/shipped"],
    "Spider (held-out100, sample100)": ["spider-heldout100/shipped", "spider-sample100/shipped"],
    "NBA warehouse (held-out, tuning)": ["nba-heldout/models", "nba-tuning/models"],
    "taught demo (Lahman 25)": ["lahman/shipped"],
}


def _database(run: str, r: dict) -> tuple[str, str | None]:
    """(database, semantic folder) a record's question was asked of, as its suite opened it."""
    if run.startswith("nba"):
        return str(ROOT.parent / "shared" / "data" / "nba"), str(ROOT / "bench" / "nba_models")
    if run.startswith("lahman"):
        return str(ROOT / "data" / "lahman.duckdb"), None
    if run.startswith("spider"):
        return str(ROOT.parent / "shared" / "benchmarks" / "spider_dev" / "dbs" / r["db"]), None
    db = r["db"]
    return (db if db.startswith("/") else f"/tmp/duckask_idioms/{db}.duckdb"), None


def reassessed(run: str, r: dict) -> dict:
    """The record's confidence as today's code gives it: its signals, with the words of the question tied to nothing
    in the database (``trust.answerable``, what CheckAnswerable now hands AssessConfidence); a question the data
    cannot answer now ends ``unanswerable`` (counted as not answered: ``low``)."""
    from answerable import judge

    from duckask.utils.trust.confidence import assess

    found = judge({"question": r["question"], "db": _database(run, r)})
    if found.outcome == "cannot":
        return {"level": "low", "score": 0.0}
    return assess({**r["signals"], "missing": found.missing, "absent": found.absent}) if r.get("signals") \
        else r["confidence"]


def labelled(run: str, again: bool = False) -> list[tuple[str, float, bool]]:
    """(level, score, right) of each question of a run, as the run labelled it (a question that ended without an
    answer is labelled ``low`` by the run itself), or ``again`` as today's code labels it; records of runs older
    than the confidence are left out."""
    out = []
    for r in read_records(RESULTS / f"{run}.jsonl"):
        conf = r.get("confidence")
        if r.get("gold_error") or not isinstance(conf, dict):
            continue
        if again:
            conf = reassessed(run, r)
        right = bool(r["holds"]) if r.get("holds") is not None else bool(r.get("correct"))
        out.append((conf.get("level") or "low", float(conf.get("score") or 0.0), right))
    return out


def row(items: list[tuple[str, float, bool]]) -> dict:
    d: dict = {"answers": len(items), "right_pct": _pct([ok for _, _, ok in items])}
    for lv in LEVELS:
        sel = [ok for level, _, ok in items if level == lv]
        d[lv] = {"n": len(sel), "right_pct": _pct(sel)}
    wrong = [level for level, _, ok in items if not ok]
    d["wrong_low_pct"] = _pct([level == "low" for level in wrong])
    return d


def curve(items: list[tuple[str, float, bool]]) -> list[tuple[float, float]]:
    """(coverage, accuracy of what is kept) with answers kept most confident first (level, then score)."""
    rank = {lv: i for i, lv in enumerate(LEVELS)}
    ordered = sorted(items, key=lambda x: (rank[x[0]], -x[1]))
    out, right = [], 0
    for i, (_, _, ok) in enumerate(ordered, 1):
        right += ok
        out.append((i / len(ordered), right / i))
    return out


def markdown(table: dict) -> str:
    lines = ["| kind (runs) | answers | right % | high: n (right %) | medium: n (right %) | low: n (right %) | "
             "wrong answers labelled low % |", "|---|---:|---:|---:|---:|---:|---:|"]
    for kind, d in table.items():
        cells = " | ".join(f"{d[lv]['n']} ({d[lv]['right_pct'] if d[lv]['n'] else '-'})" for lv in LEVELS)
        lines.append(f"| {kind} ({', '.join(d['runs'])}) | {d['answers']} | {d['right_pct']} | {cells} | "
                     f"{d['wrong_low_pct']} |")
    return "\n".join(lines)


def plot(curves: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.4))
    for kind, pts in curves.items():
        if pts:
            ax.plot([c for c, _ in pts], [a for _, a in pts], "-", label=kind)
    ax.axhline(0.9, color="#1a7f37", ls="--", lw=1, label="90 % right")
    ax.set(xlabel="coverage: share of answers kept, most confident first", ylabel="share of kept answers right",
           xlim=(0, 1), ylim=(0, 1.02), title="Risk and coverage of the confidence, per kind of database")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write OUT.md and OUT.json")
    ap.add_argument("--plot", type=Path, help="write the risk-coverage plot (PNG; needs the bench extra)")
    ap.add_argument("--again", action="store_true", help="label the records as today's code would (no model run: "
                    "their signals, and the words tied to nothing; needs ../shared and the idioms databases)")
    a = ap.parse_args(argv)
    table, curves = {}, {}
    for kind, runs in KINDS.items():
        items = [x for run in runs for x in labelled(run, a.again)]
        table[kind] = {**row(items), "runs": runs}
        curves[kind] = curve(items)
    md = markdown(table)
    print(md)
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.with_suffix(".md").write_text(md + "\n")
        a.out.with_suffix(".json").write_text(json.dumps({"kinds": table}, indent=1) + "\n")
    if a.plot:
        plot(curves, a.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
