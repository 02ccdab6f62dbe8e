"""The summary of an eval run: EX overall, by database and by tag; median/p90 seconds; LLM calls and
tokens per question; first-draft EX; grader recall and false-fail rate; EX and coverage per confidence
level (high, medium, low); the baseline beside it.
``render_markdown`` and ``write_report`` (FILE.md + FILE.json).
"""
from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any


def _pct(xs: list[bool]) -> float | None:
    return round(100.0 * sum(xs) / len(xs), 1) if xs else None


def _quantile(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))], 2)


def level_of(r: dict[str, Any]) -> str | None:
    """A record's confidence level: the one recorded, else read from its signals by the shipped model."""
    if r.get("confidence"):
        return r["confidence"]["level"]
    if r.get("signals"):
        from duckask.utils.trust.confidence import assess

        return assess(r["signals"])["level"]
    return None


def by_confidence(records: list[dict[str, Any]]) -> dict[str, Any]:
    """EX and share of answers per confidence level (records without a confidence are left out)."""
    levels = [(level_of(r), r) for r in records]
    levels = [(lv, r) for lv, r in levels if lv]
    out: dict[str, Any] = {}
    for lv in ("high", "medium", "low"):
        rs = [r for x, r in levels if x == lv]
        out[lv] = {"n": len(rs), "share": _pct([x == lv for x, _ in levels]), "ex": _pct([r["correct"] for r in rs]),
                   **({"holds": _pct([bool(r["holds"]) for r in rs])} if all(r.get("holds") is not None for r in rs)
                      and rs else {})}
    out["assessed"] = len(levels)
    return out


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(records)
    s: dict[str, Any] = {"questions": n}
    if not n:
        return s
    secs = [r["seconds"] for r in records]
    held = [bool(r["holds"]) for r in records if r.get("holds") is not None]
    s["pipeline"] = {
        "ex": _pct([r["correct"] for r in records]),
        # the answer holds what was asked (its columns row for row, extra columns allowed), where the question file
        # says which columns it asks for (``answer_columns``); None where it does not
        "holds": _pct(held) if len(held) == n else None,
        "first_draft_ex": _pct([bool(r.get("first_correct")) for r in records]),
        # any candidate right (the chosen answer or another group's): what a perfect choice would score
        "oracle_ex": _pct([bool(r["correct"]) or any(c.get("correct") for c in r.get("candidates") or [])
                           for r in records]),
        "median_s": _quantile(secs, 0.5), "p90_s": _quantile(secs, 0.9),
        "llm_calls_per_q": round(statistics.mean(r["llm_calls"] for r in records), 2),
        "median_llm_calls": statistics.median(r["llm_calls"] for r in records),
        "prompt_tokens_per_q": round(statistics.mean(r["prompt_tokens"] for r in records), 1),
        "completion_tokens_per_q": round(statistics.mean(r["completion_tokens"] for r in records), 1),
        "errors": sum(1 for r in records if r["status"] == "error"),
        "sql_did_not_run": _pct([r["status"] == "error" for r in records]),
    }
    paths = defaultdict(list)
    for r in records:
        paths[r.get("path") or "none"].append(r)
    s["paths"] = {p: {"questions": len(rs), "share": _pct([True] * len(rs) + [False] * (n - len(rs))),
                      "ex": _pct([r["correct"] for r in rs]), "median_s": _quantile([r["seconds"] for r in rs], 0.5),
                      **({"holds": _pct([bool(r["holds"]) for r in rs])} if held else {})}
                  for p, rs in sorted(paths.items())}
    s["paths"]["plan_tried"] = sum(1 for r in records if (r.get("plan") or {}).get("plan") or
                                   (r.get("plan") or {}).get("reached"))
    happy = [r["llm_calls"] for r in records
             if not r.get("fixer_attempts") and not r.get("grader_rounds") and not r.get("resampled")]
    s["pipeline"]["happy_path_llm_calls_max"] = max(happy) if happy else None
    resampled = [r for r in records if r.get("resampled")]
    s["pipeline"]["resampled"] = len(resampled)
    s["pipeline"]["hit_time_budget"] = sum(1 for r in records if r.get("budget_stop"))
    s["pipeline"]["resampled_ex"] = _pct([r["correct"] for r in resampled]) if resampled else None
    wrong_first = [r for r in records if r.get("first_graded_correct") is False]
    right_first = [r for r in records if r.get("first_graded_correct") is True]
    s["grader"] = {
        "recall_on_wrong": _pct([r["grades"][0]["verdict"] == "fail" for r in wrong_first]),
        "false_fail_on_right": _pct([r["grades"][0]["verdict"] == "fail" for r in right_first]),
        "wrong_first_graded": len(wrong_first), "right_first_graded": len(right_first),
    }
    s["confidence"] = by_confidence(records)
    by_db: dict[str, list[bool]] = defaultdict(list)
    by_tag: dict[str, list[bool]] = defaultdict(list)
    for r in records:
        by_db[r["db"]].append(r["correct"])
        for t in r.get("tags") or []:
            by_tag[t].append(r["correct"])
    s["by_db"] = {k: {"n": len(v), "ex": _pct(v)} for k, v in sorted(by_db.items())}
    s["by_tag"] = {k: {"n": len(v), "ex": _pct(v)} for k, v in sorted(by_tag.items())}
    base = [r for r in records if "baseline_correct" in r]
    if base:
        bsecs = [r["baseline_seconds"] for r in base]
        s["baseline"] = {
            "name": "single-prompt", "questions": len(base),
            "ex": _pct([r["baseline_correct"] for r in base]),
            "pipeline_ex_same_questions": _pct([r["correct"] for r in base]),
            "median_s": _quantile(bsecs, 0.5), "p90_s": _quantile(bsecs, 0.9), "llm_calls_per_q": 1.0,
            "prompt_tokens_per_q": round(statistics.mean(r["baseline_prompt_tokens"] for r in base), 1),
            "sql_did_not_run": _pct([r["baseline_status"] != "ok" for r in base]),
        }
    return s


def render_markdown(s: dict[str, Any], title: str = "duckask eval") -> str:
    lines = [f"# {title}", "", f"Questions: {s['questions']}", ""]
    if "pipeline" not in s:
        return "\n".join(lines)
    p = s["pipeline"]
    lines += ["| system | EX % | median s | p90 s | LLM calls/q | prompt tokens/q | SQL did not run % |",
              "|---|---:|---:|---:|---:|---:|---:|",
              f"| duckask graph | {p['ex']} | {p['median_s']} | {p['p90_s']} | {p['llm_calls_per_q']} | "
              f"{p['prompt_tokens_per_q']} | {p['sql_did_not_run']} |"]
    if "baseline" in s:
        b = s["baseline"]
        lines.append(f"| single prompt | {b['ex']} | {b['median_s']} | {b['p90_s']} | {b['llm_calls_per_q']} | "
                     f"{b['prompt_tokens_per_q']} | {b['sql_did_not_run']} |")
    g = s["grader"]
    if p.get("holds") is not None:
        lines += ["", f"Holds what was asked (the question's answer columns row for row, extra columns allowed): "
                  f"{p['holds']} %, beside strict EX {p['ex']} %."]
    lines += ["", f"First draft EX: {p['first_draft_ex']} %; any candidate right (oracle): {p['oracle_ex']} %. "
              "Most LLM calls on a happy path (no retry or resample): "
              f"{p['happy_path_llm_calls_max']}. Resampled after a failed or empty first query: "
              f"{p.get('resampled', 0)} questions (EX {p.get('resampled_ex')} % of them).",
              f"Grader: recall on wrong first results {g['recall_on_wrong']} % (of {g['wrong_first_graded']}), "
              f"false-fail on right ones {g['false_fail_on_right']} % (of {g['right_first_graded']}).", ""]
    c = s.get("confidence") or {}
    if c.get("assessed"):
        lines += ["| confidence | n | share of answers % | EX % |", "|---|---:|---:|---:|"]
        lines += [f"| {lv} | {c[lv]['n']} | {c[lv]['share']} | {c[lv]['ex']} |" for lv in ("high", "medium", "low")]
        lines.append("")
    for key, name in (("by_db", "database"), ("by_tag", "tag")):
        if s.get(key):
            lines += [f"| {name} | n | EX % |", "|---|---:|---:|"]
            lines += [f"| {k} | {v['n']} | {v['ex']} |" for k, v in s[key].items()]
            lines.append("")
    return "\n".join(lines)


def write_report(summary: dict[str, Any], path: str | Path) -> tuple[Path, Path]:
    p = Path(path)
    md = p if p.suffix == ".md" else p.with_suffix(".md")
    js = md.with_suffix(".json")
    md.parent.mkdir(parents=True, exist_ok=True)
    md.write_text(render_markdown(summary) + "\n")
    js.write_text(json.dumps(summary, indent=2) + "\n")
    return md, js
