"""Fit the confidence model on labelled eval records and write ``utils/trust/weights.json``.

The records are an eval run's (each has ``signals``, ``correct`` and, where the question names its answer columns,
``holds``: the label is the user's ruler where it was scored, issue 53, else strict EX); only the fit set is read
(default: the files the shipped weights were fitted on, their ``fitted_on`` list: Spider, NBA, idioms and Lahman
runs, each as KIND=RECORDS.jsonl).
A logistic regression (scikit-learn, L2, C=0.5) maps the features of ``duckask.utils.trust.confidence``
to P(right). The thresholds come from 5-fold cross-validated scores on the same records, so they are
not set on scores the model was fitted to (five 5-fold splits, averaged): ``high`` is the lowest score
above which the held-out folds were at least ``--high-target`` right (default 0.91, a point over the
90 % the issue asks for; 0.92 was tried first and sat on noise: the curve is flat at 0.90-0.92 from 10 %
to 43 % of answers, so it cut coverage to 15 % for no measurable gain),
``low`` the highest score below which they were at most ``--low-target`` right (default 0.30).

    .venv/bin/python bench/fit_confidence.py [KIND=RECORDS.jsonl ...] [--out PATH] [--loko FILE]
    .venv/bin/python bench/run.py run confidence-loko      # the leave-one-kind-out report, shipped records

Needs the ``bench`` extra (scikit-learn).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

import numpy as np

from duckask.utils.eval.records import read_records
from duckask.utils.trust.confidence import FEATURES, WEIGHTS, features

ROOT = Path(__file__).resolve().parents[1]


def labelled(paths: list[str]) -> list[dict]:
    """Records with signals whose question was answered (the confidence of a non-answer is always low).
    A path may be given as KIND=PATH: its records get ``kind`` (for the leave-one-kind-out report)."""
    out = []
    for p in paths:
        kind, _, path = p.rpartition("=") if "=" in p else ("", "", p)
        out += [{**r, "kind": kind or Path(path).stem,
                 "with": "candidates" if (r.get("signals") or {}).get("drafts", 0) >= 2 else "one draft"}
                for r in read_records(path)
                if r.get("signals") and r["signals"].get("status") == "answered"
                and r["signals"].get("rows") is not None and not r.get("gold_error")]
    return out


def right(r: dict) -> bool:
    """Whether a record's answer was right as a user reads it (``holds``: the question's answer columns, extra
    columns allowed, issue 53) where the record was scored so, else by strict EX (a Spider question keeps its own)."""
    return bool(r["holds"]) if r.get("holds") is not None else bool(r["correct"])


def impute_values(recs: list[dict]) -> dict[str, float]:
    """The fit set's mean of every feature that can go unmeasured (stands in where it is missing)."""
    out = {}
    for f in FEATURES:
        vals = [v for v in (f.value(r["signals"]) for r in recs) if v is not None]
        if len(vals) < len(recs):
            out[f.name] = float(np.mean(vals)) if vals else 0.0
    return out


def thresholds(scores: np.ndarray, right: np.ndarray, high_target: float, low_target: float,
               min_count: int = 20) -> dict[str, float]:
    """The lowest score above which at least ``high_target`` were right, the highest below which at most
    ``low_target`` were (each over at least ``min_count`` answers)."""
    order = np.argsort(-scores)
    s, y = scores[order], right[order]
    high = 1.01
    for k in range(min_count, len(s) + 1):      # the top k answers
        if y[:k].mean() >= high_target:
            high = float(s[k - 1])
    low = 0.0
    for k in range(min_count, len(s) + 1):      # the bottom k answers
        if y[len(s) - k:].mean() <= low_target:
            low = float(s[len(s) - k]) + 1e-9
    return {"high": round(high, 4), "low": round(min(low, high), 4)}


def fit(recs: list[dict], *, c: float = 0.5, high_target: float = 0.91, low_target: float = 0.30,
        drop: set[str] = frozenset()) -> dict:
    """The model over every feature but ``drop`` (their coefficients are 0)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    impute = impute_values(recs)
    keep = np.array([f.name not in drop for f in FEATURES])
    x = np.array([features(r["signals"], impute) for r in recs]) * keep
    y = np.array([right(r) for r in recs])
    model = LogisticRegression(C=c, max_iter=5000)
    # five 5-fold splits, averaged: one split's top answers wander by 2-3 points (the curve is flat near 0.91)
    cv = np.mean([cross_val_predict(model, x, y, cv=StratifiedKFold(5, shuffle=True, random_state=seed),
                                    method="predict_proba")[:, 1] for seed in range(22, 27)], axis=0)
    model.fit(x, y)
    t = thresholds(cv, y, high_target, low_target)
    buckets = {name: (cv >= t["high"]) if name == "high" else (cv < t["low"]) if name == "low"
               else (cv >= t["low"]) & (cv < t["high"]) for name in ("high", "medium", "low")}
    return {
        "features": [f.name for f in FEATURES], "coef": [round(float(v), 5) for v in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 5), "means": [round(float(v), 5) for v in x.mean(axis=0)],
        "impute": {k: round(v, 5) for k, v in impute.items()}, "thresholds": t,
        "fit": {"n": len(recs), "ex": round(float(y.mean()), 4), "C": c, "high_target": high_target,
                "low_target": low_target,
                "cv_buckets": {k: {"n": int(m.sum()), "ex": round(float(y[m].mean()), 4) if m.any() else None}
                               for k, m in buckets.items()}},
    }


def levels_of(weights: dict, recs: list[dict]) -> list[str]:
    """Each record's level under ``weights``, with the rules of ``confidence.assess`` on top."""
    from duckask.utils.trust.confidence import assess

    return [assess(r["signals"], weights)["level"] for r in recs]


def table(recs: list[dict], levels: list[str]) -> dict:
    """{level: {"n", "share", "ex"}}, the overall share right (``ex``: by ``right``, the user's ruler where scored)
    and ``wrong_low``: the share of the wrong answers that are ``low``."""
    out = {"n": len(recs), "ex": round(float(np.mean([right(r) for r in recs])), 3) if recs else None}
    for name in ("high", "medium", "low"):
        ok = [right(r) for r, lv in zip(recs, levels) if lv == name]
        out[name] = {"n": len(ok), "share": round(len(ok) / max(len(recs), 1), 3),
                     "ex": round(float(np.mean(ok)), 3) if ok else None}
    wrong = [lv for r, lv in zip(recs, levels) if not right(r)]
    out["wrong_low"] = round(wrong.count("low") / len(wrong), 3) if wrong else None
    return out


def leave_one_kind_out(recs: list[dict], **kw) -> dict[str, dict]:
    """For each kind of database: fit on the other kinds (thresholds from their cross-validated scores),
    then the levels of the left-out kind's answers."""
    out = {}
    for kind in sorted({r["kind"] for r in recs}):
        train, test = [r for r in recs if r["kind"] != kind], [r for r in recs if r["kind"] == kind]
        w = fit(train, **kw)
        levels = levels_of(w, test)
        out[kind] = table(test, levels)
        for how in sorted({r["with"] for r in test}):     # answers with candidates' agreement, and without
            pick = [i for i, r in enumerate(test) if r["with"] == how]
            out[f"{kind}, {how}"] = table([test[i] for i in pick], [levels[i] for i in pick])
    return out


def screen(recs: list[dict]) -> list[dict]:
    """Per feature: the share of its variance that lies between kinds (eta squared) against its correlation
    with being right within a kind (mean over kinds). A feature that mostly tells the kind apart and barely
    the answer's rightness is one to drop."""
    impute = impute_values(recs)
    x = np.array([features(r["signals"], impute) for r in recs])
    y = np.array([right(r) for r in recs], dtype=float)
    kinds = np.array([r["kind"] for r in recs])
    rows = []
    for j, f in enumerate(FEATURES):
        v = x[:, j]
        total = ((v - v.mean()) ** 2).sum()
        between = sum((kinds == k).sum() * (v[kinds == k].mean() - v.mean()) ** 2 for k in set(kinds))
        rs = [np.corrcoef(v[kinds == k], y[kinds == k])[0, 1] for k in set(kinds)
              if v[kinds == k].std() > 0 and y[kinds == k].std() > 0]
        rows.append({"feature": f.name, "eta2": round(float(between / total), 3) if total else 0.0,
                     "r_within": round(float(np.mean(rs)), 3) if rs else 0.0})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", nargs="*", default=json.loads(WEIGHTS.read_text())["fitted_on"])
    ap.add_argument("--out", default=str(WEIGHTS))
    ap.add_argument("--c", type=float, default=0.5)
    ap.add_argument("--high-target", type=float, default=0.91)
    ap.add_argument("--low-target", type=float, default=0.30)
    ap.add_argument("--drop", default="", help="comma-separated features to leave out (coefficient 0)")
    ap.add_argument("--loko", metavar="FILE", help="also write the leave-one-kind-out report (JSON) and print it")
    a = ap.parse_args(argv)
    recs = labelled(a.records)
    drop = {d for d in a.drop.split(",") if d}
    if a.loko:
        kw = dict(c=a.c, high_target=a.high_target, low_target=a.low_target, drop=drop)
        report = {"screen": screen(recs), "dropped": sorted(drop), "loko": leave_one_kind_out(recs, **kw)}
        Path(a.loko).write_text(json.dumps(report, indent=1) + "\n")
        print("| feature | between kinds (eta2) | with rightness, within kinds (r) |\n|---|---:|---:|")
        for row in report["screen"]:
            print(f"| {row['feature']} | {row['eta2']} | {row['r_within']} |")
        print("\n| left out | answers | right | high: share, right | medium: share, right | low: share, right | "
              "wrong that are low |\n|---|---:|---:|---|---|---|---:|")
        for kind, t in report["loko"].items():
            cells = [f"{t[lv]['share']:.0%}, " + ("-" if t[lv]["ex"] is None else f"{t[lv]['ex']:.0%}")
                     for lv in ("high", "medium", "low")]
            low = "-" if t["wrong_low"] is None else f"{t['wrong_low']:.0%}"
            print(f"| {kind} | {t['n']} | {t['ex']:.0%} | " + " | ".join(cells) + f" | {low} |")
    if len(recs) < 50:
        ap.error(f"{len(recs)} labelled records with signals in {a.records}: too few to fit (run "
                 "bench/run.py run spider-fit400 first)")
    w = fit(recs, c=a.c, high_target=a.high_target, low_target=a.low_target, drop=drop)
    w["fitted_on"] = [str(Path(p).resolve().relative_to(ROOT)) if Path(p).resolve().is_relative_to(ROOT) else p
                      for p in a.records]
    w["date"] = dt.date.today().isoformat()
    Path(a.out).write_text(json.dumps(w, indent=1) + "\n")
    print(json.dumps({k: w[k] for k in ("thresholds", "fit")}, indent=1))
    for f, c in sorted(zip(w["features"], w["coef"]), key=lambda t: -abs(t[1])):
        print(f"{f:20s} {c:+.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
