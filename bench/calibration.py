"""How well the confidence is calibrated: EX per level (high, medium, low) and coverage, per set, with a
reliability plot, on records the model was not fitted on (the fit sets may be shown too, labelled as such).

Every record's level is read from its ``signals`` by the shipped model (``utils/trust/weights.json``),
the same ``assess`` the graph runs, so a refit is judged on the same records without rerunning the model.
A question that ended without a result is ``low``. Bins of the plot: the score in fifths.

    .venv/bin/python bench/calibration.py LABEL=RECORDS.jsonl ... [--out docs/results/confidence/calibration]
        [--plot docs/images/reliability.png]

Needs the ``bench`` extra (matplotlib) for the plot.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from duckask.utils.eval.records import read_records
from duckask.utils.trust.confidence import assess, load_weights

LEVELS = ("high", "medium", "low")


def _pct(xs) -> float | None:
    xs = list(xs)
    return round(100.0 * sum(xs) / len(xs), 1) if xs else None


def assessed(path: str) -> list[tuple[str, float, bool]]:
    """(level, score, right) of every record with signals (a gold query that fails is left out)."""
    out = []
    for r in read_records(path):
        if r.get("signals") and not r.get("gold_error"):
            a = assess(r["signals"])
            out.append((a["level"], a["score"], bool(r["correct"])))
    return out


def table(sets: dict[str, list[tuple[str, float, bool]]]) -> dict:
    out = {}
    for name, rows in sets.items():
        d = {"n": len(rows), "ex": _pct(r for _, _, r in rows)}
        for lv in LEVELS:
            sel = [r for x, _, r in rows if x == lv]
            d[lv] = {"n": len(sel), "share": _pct(x == lv for x, _, _ in rows), "ex": _pct(sel)}
        out[name] = d
    return out


def markdown(t: dict) -> str:
    lines = ["| set | n | EX % | high: share % | high: EX % | medium: share % | medium: EX % | low: share % | "
             "low: EX % |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, d in t.items():
        cells = [f"{d[lv]['share']} ({d[lv]['n']}) | {d[lv]['ex']}" for lv in LEVELS]
        lines.append(f"| {name} | {d['n']} | {d['ex']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(sets: dict[str, list[tuple[str, float, bool]]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.4))
    ax.plot([0, 1], [0, 1], ":", color="#999", label="perfect calibration")
    for name, rows in sets.items():
        xs, ys, ns = [], [], []
        for b in range(5):
            sel = [(s, r) for _, s, r in rows if b / 5 <= s < (b + 1) / 5 or (b == 4 and s == 1.0)]
            if sel:
                xs.append(sum(s for s, _ in sel) / len(sel))
                ys.append(sum(r for _, r in sel) / len(sel))
                ns.append(len(sel))
        ax.plot(xs, ys, "o-", label=name)
        for x, y, n in zip(xs, ys, ns):
            ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7)
    ax.set(xlabel="predicted P(right) (bins of 0.2; labels: answers)", ylabel="share right", xlim=(0, 1),
           ylim=(0, 1.02), title="Reliability (sets marked 'fitted on' are in-sample)")
    ax.legend(fontsize=8)
    width = 0.8 / max(1, len(sets))
    for i, (name, rows) in enumerate(sets.items()):
        ex = [(_pct(r for x, _, r in rows if x == lv) or 0) / 100 for lv in LEVELS]
        bars = bx.bar([j + i * width for j in range(3)], ex, width, label=name)
        for bar, lv in zip(bars, LEVELS):
            n = sum(1 for x, _, _ in rows if x == lv)
            bx.annotate(f"n={n}", (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center",
                        fontsize=7, textcoords="offset points", xytext=(0, 2))
    bx.axhline(0.9, color="#1a7f37", ls="--", lw=1, label="high target: 90 %")
    bx.axhline(0.35, color="#cf222e", ls="--", lw=1, label="low target: 35 %")
    bx.set_xticks([j + width * (len(sets) - 1) / 2 for j in range(3)], LEVELS)
    bx.set(ylabel="share right (EX)", ylim=(0, 1.08), title="EX per confidence level")
    bx.legend(fontsize=7)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sets", nargs="+", help="LABEL=RECORDS.jsonl")
    ap.add_argument("--out", help="write OUT.md and OUT.json")
    ap.add_argument("--plot", help="write the reliability plot (PNG)")
    a = ap.parse_args(argv)
    sets = {}
    for item in a.sets:
        label, _, path = item.partition("=")
        if not path:
            ap.error(f"{item!r}: write LABEL=RECORDS.jsonl")
        sets[label] = assessed(path)
    t = table(sets)
    w = load_weights()
    md = markdown(t) + (f"\n\nModel fitted on {', '.join(w['fitted_on'])} ({w['fit']['n']} answers, {w['date']}); "
                        f"thresholds: high >= {w['thresholds']['high']}, low < {w['thresholds']['low']}.")
    print(md)
    if a.out:
        Path(a.out + ".md").write_text(md + "\n")
        Path(a.out + ".json").write_text(json.dumps({"sets": t, "thresholds": w["thresholds"]}, indent=2) + "\n")
    if a.plot:
        plot(sets, a.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
