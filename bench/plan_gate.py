"""The plan gate (``semantic.coverage``, issue 53) on the plans the committed runs answered with, no model run.

For each record of a suite whose answer came from the plan path, the recorded plan is held to its question as
PlanQuery now holds it: would the gate have sent it to the SQL path, and was the plan's answer right (``holds``,
the question's answer columns row for row)? A fire on a wrong answer is a catch; on a right one a false alarm.
What the SQL path then answers needs the model (the suites' reruns).

    .venv/bin/python bench/plan_gate.py --out docs/results/plan-gate.md
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SETS = [("lahman:shipped", "docs/results/lahman/shipped.jsonl", "data/lahman.duckdb", {}),
        ("nba-tuning:models", "docs/results/nba-tuning/models.jsonl", "../shared/data/nba",
         {"semantic": "bench/nba_models", "column_pruning": "wide"}),
        ("nba-heldout:models", "docs/results/nba-heldout/models.jsonl", "../shared/data/nba",
         {"semantic": "bench/nba_models", "column_pruning": "wide"})]


def plan_of(recorded: dict, layer):
    from duckask.utils.semantic.plan import Plan, _filter

    return Plan(metrics=list(recorded.get("metrics") or []), group_by=list(recorded.get("group_by") or []),
                where=[_filter(w, layer) for w in recorded.get("where") or []],
                order_by=list(recorded.get("order_by") or []), limit=recorded.get("limit"))


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.api import prepare
    from duckask.utils.llm import ScriptedLLM
    from duckask.utils.schema.values import match_values
    from duckask.utils.semantic.coverage import column_words, gate
    from duckask.utils.semantic.reading import value_links

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    rows, totals = [], {"plans": 0, "right": 0, "fired": 0, "caught": 0, "false_alarms": 0}
    for name, records, db, opts in SETS:
        if db.startswith("../shared") and not (ROOT / db).exists():
            sys.exit("bench/plan_gate.py: ../shared is missing (the NBA sets read it)")
        prep = prepare(str(ROOT / db), llm=ScriptedLLM({}), **{k: str(ROOT / v) if k == "semantic" else v
                                                               for k, v in opts.items()})
        from duckask.utils.semantic.manifest import layer_for

        layer = layer_for(prep.settings)
        for line in (ROOT / records).read_text().splitlines():
            r = json.loads(line)
            recorded = (r.get("plan") or {}).get("plan")
            if r.get("path") != "plan" or not recorded:
                continue
            plan = plan_of(recorded, layer)
            linked = [v for _, v in value_links(layer, match_values(prep.catalog, r["question"]))]
            said = gate(r["question"], plan, layer, linked, column_words(prep.catalog))
            right = bool(r.get("holds"))
            totals["plans"] += 1
            totals["right"] += right
            totals["fired"] += bool(said)
            totals["caught"] += bool(said) and not right
            totals["false_alarms"] += bool(said) and right
            rows.append(f"| {name} | {r['id']} | {'right' if right else 'wrong'} | "
                        f"{said[0] + ': ' + said[1] if said else 'passes'} |")
    text = "\n".join(["| run | question | plan's answer (holds) | the gate |", "|---|---|---|---|", *rows, "",
                      f"{totals['plans']} plan answers, {totals['right']} right; the gate fires on {totals['fired']}: "
                      f"{totals['caught']} wrong (caught), {totals['false_alarms']} right (false alarms)", ""])
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
