"""Does duckask say "the data cannot answer this" where it should, and only there? (issue 64; no model is run)

``utils/trust/answerable.reach`` decides from the catalog, the semantic files and the taught pairs alone, so the
whole measure runs in seconds:

- the unanswerable sets (bench/unanswerable_dev.yaml, where the rules were written; bench/unanswerable_heldout.yaml,
  written first and only measured): the share said "cannot", by kind (world, missing, wrong_db) and by rule, and
  the share said "cannot" or attempted with a thing tied to nothing (``absent``: the answer is then ``low`` and says
  what is missing, which the issue's target counts);
- every answerable question of the committed suites (Spider dev's 1,028, Lahman's 25 with the demo's knowledge,
  the NBA's 50 through bench/nba_models, the idioms' 96): the share wrongly refused (target: at most 2 points),
  the share with a content word tied to nothing (the ``missing`` words the confidence reads), and the share made
  ``low`` by an ``absent`` thing.

    .venv/bin/python bench/answerable.py --out docs/results/answerable/answerable.json [--verbose]
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
IDIOMS = Path("/tmp/duckask_idioms")
NBA = (str(SHARED / "data" / "nba"), str(ROOT / "bench" / "nba_models"))


def _db_ref(ref: str) -> tuple[str, str | None]:
    """(database, semantic folder) of an unanswerable item's ``db``."""
    if ref == "lahman":
        return str(ROOT / "data" / "lahman.duckdb"), None
    if ref == "nba":
        return NBA
    kind, _, name = ref.partition(":")
    if kind == "spider":
        return str(SHARED / "benchmarks" / "spider_dev" / "dbs" / name), None
    if kind == "idioms":
        return str(IDIOMS / f"{name}.duckdb"), None
    raise SystemExit(f"unknown db {ref!r}")


def unanswerable(path: Path) -> list[dict]:
    return [{"question": i["text"], "db": _db_ref(i["db"]), "kind": i["kind"], "id": f"{path.stem}-{n}",
             "answerable": False} for n, i in enumerate(yaml.safe_load(path.read_text())["items"])]


def answerable() -> dict[str, list[dict]]:
    from duckask.utils.eval.questions import load_questions, resolve_db
    sets: dict[str, list[dict]] = {}
    spider, folder = load_questions(SHARED / "benchmarks" / "spider_dev")
    sets["spider-dev"] = [{"question": q.question, "db": (resolve_db(q, db_dir=folder), None), "id": q.id}
                          for q in spider]
    lahman, _ = load_questions(ROOT / "bench" / "lahman_questions.yaml")
    sets["lahman"] = [{"question": q.question, "db": (str(ROOT / "data" / "lahman.duckdb"), None), "id": q.id}
                      for q in lahman]
    sets["nba"] = [{"question": q.question, "db": NBA, "id": q.id}
                   for f in ("nba_questions.yaml", "nba_questions_heldout.yaml")
                   for q in load_questions(ROOT / "bench" / f)[0]]
    idioms = [q for f in ("idioms_dev.yaml", "idioms_heldout.yaml") for q in load_questions(ROOT / "bench" / f)[0]]
    sets["idioms"] = [{"question": q.question, "db": (q.db, None), "id": q.id} for q in idioms]
    for items in sets.values():
        for i in items:
            i["answerable"] = True
    return sets


_VOCAB: dict = {}


def judge(item: dict):
    from duckask.utils.api import examples_for, prepare
    from duckask.utils.trust.answerable import reach, taught_vocabulary
    if item["db"] not in _VOCAB:
        db, semantic = item["db"]
        prep = prepare(db, semantic=semantic, learned="off") if semantic else prepare(db, learned="off")
        taught = tuple(ex.question for ex in examples_for(prep.database, prep.settings))
        _VOCAB[item["db"]] = taught_vocabulary(prep.catalog, taught)
    return reach(item["question"], _VOCAB[item["db"]])


def measure(items: list[dict], verbose: bool) -> dict:
    said = collections.Counter()
    kinds: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    partial = low = 0
    seconds = []
    for item in items:
        t0 = time.perf_counter()
        r = judge(item)
        seconds.append(time.perf_counter() - t0)
        said[r.rule or "answered"] += 1
        kinds[item.get("kind", "answerable")][r.outcome] += 1
        partial += bool(r.missing) and r.outcome == "answerable"
        low += bool(r.absent) and r.outcome == "answerable"
        wrong = (r.outcome == "cannot") == item["answerable"]
        if verbose and (wrong or not item["answerable"]):
            mark = "WRONG" if wrong else "ok"
            print(f"{mark:5} {item['id']:>24} {r.outcome:10} {r.rule:14} missing={r.missing} absent={r.absent} | "
                  f"{item['question']}")
    n = len(items)
    cannot = sum(v for k, v in said.items() if k != "answered")
    return {"n": n, "said_cannot": cannot, "said_cannot_pct": round(100 * cannot / n, 1), "by_rule": dict(said),
            "by_kind": {k: dict(v) for k, v in kinds.items()},
            "attempted_with_missing_words_pct": round(100 * partial / n, 1),
            "attempted_low_pct": round(100 * low / n, 1), "said_cannot_or_low_pct": round(100 * (cannot + low) / n, 1),
            "ms_per_question_p50": round(1000 * sorted(seconds)[n // 2], 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args(argv)
    if not (SHARED / "benchmarks" / "spider_dev").is_dir() or not (IDIOMS / "events.duckdb").is_file():
        sys.exit("needs ../shared (Spider dev, NBA) and the idioms databases (python bench/idioms_dbs.py)")
    sets = {"unanswerable-dev": unanswerable(ROOT / "bench" / "unanswerable_dev.yaml"),
            "unanswerable-heldout": unanswerable(ROOT / "bench" / "unanswerable_heldout.yaml"), **answerable()}
    out = {"benchmark": "answerable", "date": datetime.date.today().isoformat(),
           "command": "python bench/answerable.py --out docs/results/answerable/answerable.json", "sets": {}}
    for name, items in sets.items():
        if a.verbose:
            print(f"--- {name}")
        out["sets"][name] = measure(items, a.verbose)
        r = out["sets"][name]
        print(f"{name:22} n={r['n']:5} said cannot {r['said_cannot_pct']:5.1f} %, "
              f"or low {r['said_cannot_or_low_pct']:5.1f} %  {r['by_rule']}")
    if a.out:
        a.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
