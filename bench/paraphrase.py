"""Issue 65's paraphrase measure: does a kept pair answer the questions that mean the same, and only those? (no model)

For each pair of ``bench/paraphrase_pairs.yaml`` (the demo's database; a dev half and a held-out half, written before
any matcher work), the pair alone is kept, then MatchTemplate's matcher (``nodes.match_template.matched``: word for
word, ``knowledge.templates.match``, then by meaning, ``knowledge.reach``; ``--words``: word for word only) is asked
each question:

- a paraphrase is **reached and right** when a template is found and its query's result equals the gold (the pair's
  SQL with the paraphrase's values, ``learning_curve.substitute``); **reached wrongly** when found with another
  result; otherwise **not reached** (it goes the model's way, where the pair is a few-shot example);
- a near-miss **answered from the pair** when a template is found at all (target: 0).

Figures per half (counts; 15 paraphrases and 10 near-misses a half, so one question is 7 and 10 points).

    .venv/bin/python bench/paraphrase.py [--words] [--out docs/results/paraphrase/matcher.json] [--verbose]
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from learning_curve import score, substitute  # noqa: E402


def measure(spec: dict, verbose: bool, meaning: bool = True) -> dict:
    from duckask.nodes.match_template import matched
    from duckask.utils.api import prepare
    from duckask.utils.db.tree import sql_tree
    from duckask.utils.knowledge.examples import Example
    from duckask.utils.schema.value_index import ValueIndex

    prep = prepare(str(ROOT / spec["db"]), learned="off")
    values = ValueIndex.of(prep.database, prep.catalog)
    out: dict = {}
    for half, pairs in spec["halves"].items():
        counts = {"paraphrases": 0, "reached_right": 0, "reached_wrong": 0, "not_reached": 0,
                  "near_misses": 0, "near_answered_from_pair": 0}
        seconds = []
        by: dict[str, int] = {}
        for pair in pairs:
            kept = [Example(question=pair["question"], sql=pair["sql"], id=pair["id"])]
            for para in pair["paraphrases"]:
                t0 = time.perf_counter()
                found = matched(para["question"], kept, values, prep.catalog, meaning)
                seconds.append(time.perf_counter() - t0)
                counts["paraphrases"] += 1
                if found is None:
                    outcome = "not_reached"
                else:
                    gold = substitute(pair["sql"], para["sub"])     # the same tree is right: ties under a
                    right = sql_tree(found[0].sql) == sql_tree(gold) or \
                        score(prep.database, found[0].sql, gold)      # LIMIT may come back in another order
                    outcome = "reached_right" if right else "reached_wrong"
                    by[found[2]] = by.get(found[2], 0) + 1
                counts[outcome] += 1
                if verbose:
                    print(f"{half:8} {pair['id']:14} {outcome:14} | {para['question']}")
            for near in pair["near_misses"]:
                found = matched(near["question"], kept, values, prep.catalog, meaning)
                counts["near_misses"] += 1
                counts["near_answered_from_pair"] += found is not None
                if verbose and found is not None:
                    print(f"{half:8} {pair['id']:14} NEAR-MISS REACHED | {near['question']}")
        n = counts["paraphrases"]
        out[half] = {**counts, "reached_right_pct": round(100 * counts["reached_right"] / n, 1), "reached_as": by,
                     "ms_per_question_max": round(1000 * max(seconds), 2)}
    return out


def learning_pairs(meaning: bool) -> dict:
    """Issue 45's learning-curve pairs (``bench/learning_pairs.yaml``, NBA and Lahman), no model: variants reached
    and right, near-misses answered from a pair (both must hold under the reach by meaning)."""
    import pathlib
    import tempfile

    from learning_curve import database_of, questions

    from duckask.nodes.match_template import matched
    from duckask.utils.api import prepare
    from duckask.utils.knowledge.examples import Example
    from duckask.utils.llm import ScriptedLLM
    from duckask.utils.schema.value_index import ValueIndex

    out = {}
    for name, spec in yaml.safe_load((ROOT / "bench/learning_pairs.yaml").read_text())["sets"].items():
        if not (ROOT / database_of(spec)).exists() and spec["db"] != "demo":
            continue                                    # ../shared is absent
        opts = {k: (str(ROOT / v) if k == "descriptions" else v) for k, v in (spec.get("options") or {}).items()}
        prep = prepare(database_of(spec), llm=ScriptedLLM({}), knowledge_file=str(pathlib.Path(tempfile.mkdtemp())
                                                                                   / "k.duckdb"), **opts)
        values = ValueIndex.of(prep.database, prep.catalog)
        pairs = [Example(question=p["question"], sql=p["sql"], id=p["id"]) for p in spec["pairs"]]
        counts = {"variants": 0, "variants_right": 0, "codes": 0, "codes_right": 0, "near_misses": 0,
                  "near_answered_from_pair": 0}
        for q in questions(spec):
            found = matched(q["question"], pairs, values, prep.catalog, meaning)
            if q["kind"] == "near-miss":
                counts["near_misses"] += 1
                counts["near_answered_from_pair"] += found is not None
            else:                       # a variant, or one whose changed words stand in the SQL as a code
                kind = "codes" if q["kind"] == "code" else "variants"
                counts[kind] += 1
                counts[kind + "_right"] += bool(found) and score(prep.database, found[0].sql, q["gold"])
        out[name] = counts
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--words", action="store_true", help="word for word only (settings templates: words), the "
                    "matcher before issue 65's reach by meaning")
    ap.add_argument("--verbose", action="store_true", help="each question's outcome (do not use on the held-out half "
                    "while the matcher is being written)")
    a = ap.parse_args(argv)
    spec = yaml.safe_load((ROOT / "bench" / "paraphrase_pairs.yaml").read_text())
    halves = measure(spec, a.verbose, meaning=not a.words)
    older = learning_pairs(meaning=not a.words)
    for name, c in older.items():
        print(f"learning_pairs {name}: variants reached and right {c['variants_right']}/{c['variants']} (codes "
              f"{c['codes_right']}/{c['codes']}), "
              f"near-misses answered from a pair {c['near_answered_from_pair']}/{c['near_misses']}")
    for half, r in halves.items():
        print(f"{half:8} paraphrases reached and right {r['reached_right']}/{r['paraphrases']} "
              f"({r['reached_right_pct']} %), reached wrongly {r['reached_wrong']}, near-misses answered from the "
              f"pair {r['near_answered_from_pair']}/{r['near_misses']}")
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps({"benchmark": "paraphrase", "date": datetime.date.today().isoformat(),
                                     "command": "python bench/paraphrase.py " + " ".join(argv if argv is not None
                                                                                          else sys.argv[1:]),
                                     "halves": halves, "learning_pairs": older}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
