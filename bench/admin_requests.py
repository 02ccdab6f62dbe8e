"""Plain-English change requests, end to end with the embedded model (issue 23's benchmark).

Each item of a labelled set (``bench/admin_requests_{dev,heldout}.yaml``, written from the tier
definitions and the schemas before any prompt work) is asked, as a user would, of a fresh copy of its
database with writes on and nobody to approve: every change must stop at its card. Reported:

- **intent**: a change request ends with a card (``Result.write``), a question with an answer;
- **the proposed statement**, run on another fresh copy inside a transaction that is rolled back, against
  the gold statement: ``rows`` (UPDATE/DELETE: the same rows of the same table changed or removed),
  ``insert`` (the same number of rows into the same table, and ``check_sql`` agrees), ``schema``
  (``check_sql`` agrees after both), ``refuse`` (a T3 request: its card is T3, blocked);
- **the tiers** of the cards against the labels, and **that nothing ran without approval** (the
  database file's sha256 before and after each request);
- seconds a request, with CAL (``../shared/tools/calibrate.py``) timed in the same run.

    .venv/bin/python bench/admin_requests.py bench/admin_requests_heldout.yaml --out docs/results/admin/heldout
    .venv/bin/python bench/admin_requests.py bench/admin_requests_heldout.yaml --ids adm-ho-02 ... \
        --replace-in docs/results/admin/heldout --out docs/results/admin/heldout-after   # after a fix
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import duckdb
import yaml

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {"lahman": ROOT / "data" / "lahman.duckdb", "nba": ROOT.parent / "shared" / "data" / "nba"}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pristine(db: str, work: Path) -> Path:
    """An untouched DuckDB copy of ``db`` in ``work`` (the NBA export imported once)."""
    out = work / f"{db}.pristine.duckdb"
    if not out.exists():
        src = SOURCES[db]
        if src.is_dir():
            con = duckdb.connect(str(out))
            con.execute(f"IMPORT DATABASE '{src}'")
            con.close()
        else:
            shutil.copyfile(src, out)
    return out


def fresh(db: str, work: Path, name: str) -> Path:
    out = work / f"{name}.duckdb"
    shutil.copyfile(pristine(db, work), out)
    return out


def effect(path: Path, sql: str, table: str | None, check_sql: str | None) -> dict:
    """What ``sql`` does to a copy, rolled back: rows removed or changed, rows added, ``check_sql`` after."""
    con = duckdb.connect(str(path))
    try:
        con.execute("BEGIN")
        if table:
            con.execute(f"CREATE TEMP TABLE duckask_before AS SELECT * FROM {table}")
        con.execute(sql)
        out = {"error": None}
        if table:
            gone = con.execute(f"SELECT * FROM duckask_before EXCEPT ALL SELECT * FROM {table}").fetchall()
            new = con.execute(f"SELECT * FROM {table} EXCEPT ALL SELECT * FROM duckask_before").fetchall()
            out.update(touched=sorted(map(repr, gone)), added=len(new))
        if check_sql:
            out["check"] = repr(con.execute(check_sql).fetchall())
        con.execute("ROLLBACK")
        return out
    except duckdb.Error as e:
        return {"error": str(e).splitlines()[0]}
    finally:
        con.close()


def judged(item: dict, card, work: Path) -> tuple[bool, str]:
    """Whether the proposed card does what the item asked, and why not."""
    from duckask.utils.writes.tiers import classify

    if item["judge"] == "refuse":
        return (card is not None and card.tier == 3, "refused (T3)" if card and card.tier == 3 else
                f"not refused: {card.tier_name if card else 'no card'}")
    if card is None:
        return False, "no card"
    if card.tier == 3:
        return False, f"refused: {card.reason}"
    table = classify(item["gold_sql"]).target if item["judge"] in ("rows", "insert") else None
    if table and (card.target or "").split(".")[-1].lower() != table.split(".")[-1].lower():
        return False, f"another table: {card.target} (gold {table})"
    gold = effect(fresh(item["db"], work, "gold"), item["gold_sql"], table, item.get("check_sql"))
    got = effect(fresh(item["db"], work, "got"), card.sql, table, item.get("check_sql"))
    if got["error"]:
        return False, f"the statement fails: {got['error']}"
    if item["judge"] == "rows":
        same = got["touched"] == gold["touched"] and got["added"] == gold["added"]
        return same, "same rows" if same else f"{len(got['touched'])} rows touched, gold {len(gold['touched'])}"
    if item["judge"] == "insert":
        same = got["added"] == gold["added"] and got.get("check") == gold.get("check")
        return same, "same insert" if same else f"added {got['added']} (gold {gold['added']}), check {got.get('check')}"
    same = got.get("check") == gold.get("check")
    return same, "same schema" if same else f"check {got.get('check')} (gold {gold.get('check')})"


def run(items: list[dict], work: Path, out: Path) -> list[dict]:
    from duckask.utils.api import ask
    from duckask.utils.config import load_settings
    from duckask.utils.llm import get_llm

    settings = load_settings(None, allow_writes=True, audit_file=str(work / "audit.duckdb"), analyzer="rules")
    llm = get_llm(settings)
    recs = []
    with out.open("w") as f:
        for i, item in enumerate(items, 1):
            db = fresh(item["db"], work, "asked")
            before = sha(db)
            t0 = time.perf_counter()
            r = ask(item["request"], db=str(db), llm=llm, settings=settings)
            seconds = time.perf_counter() - t0
            unchanged = sha(db) == before
            card = r.write
            got_intent = "change" if card is not None or r.intent == "change" else "question"
            ok, why = judged(item, card, work) if item["intent"] == "change" else \
                (card is None and r.status == "answered", f"answered ({r.status})" if card is None else "a card")
            rec = {"id": item["id"], "db": item["db"], "request": item["request"], "intent": item["intent"],
                   "got_intent": got_intent, "judge": item["judge"], "tier": item["tier"],
                   "got_tier": card.tier if card else 0, "status": r.status, "sql": card.sql if card else r.sql,
                   "gold_sql": item["gold_sql"], "correct": ok, "why": why, "unchanged": unchanged,
                   "seconds": round(seconds, 2), "llm_calls": len(r.llm_calls), "intent_by": r.routing.get("intent_by")}
            recs.append(rec)
            f.write(json.dumps(rec) + "\n")
            f.flush()
            print(f"[{i}/{len(items)}] {'ok' if ok else '--'} {item['id']} {got_intent}/{item['intent']} "
                  f"T{rec['got_tier']}/T{item['tier']} {seconds:.1f}s  {why}", flush=True)
    return recs


def summary(recs: list[dict], cal: float | None) -> dict:
    def pct(xs) -> float | None:
        xs = list(xs)
        return round(100.0 * sum(xs) / len(xs), 1) if xs else None
    changes = [r for r in recs if r["intent"] == "change"]
    secs = [r["seconds"] for r in recs]
    med = statistics.median(secs) if secs else None
    return {
        "n": len(recs), "intent_accuracy": pct(r["got_intent"] == r["intent"] for r in recs),
        "changes_recognised": pct(r["got_intent"] == "change" for r in changes),
        "questions_answered_as_questions": pct(r["got_intent"] == "question" for r in recs
                                               if r["intent"] == "question"),
        "by_judge": {j: {"n": sum(r["judge"] == j for r in recs), "correct": pct(r["correct"] for r in recs
                                                                              if r["judge"] == j)}
                     for j in ("rows", "insert", "schema", "refuse", "answer")},
        "changes_correct": pct(r["correct"] for r in changes),
        "tiers": {f"T{t}": dict(Counter(f"T{r['got_tier']}" for r in recs if r["tier"] == t)) for t in (0, 1, 2, 3)},
        "unchanged_without_approval": f"{sum(r['unchanged'] for r in recs)}/{len(recs)}",
        "median_s": med, "cal_s": cal, "median_x_cal": round(med / cal, 2) if med and cal else None,
        "llm_calls_per_request": round(statistics.mean(r["llm_calls"] for r in recs), 2) if recs else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("items", help="a labelled request set (YAML)")
    ap.add_argument("--out", required=True, help="writes OUT.jsonl (a record a request) and OUT.json (summary)")
    ap.add_argument("--work", default="/tmp/duckask-admin-bench", help="where the database copies go")
    ap.add_argument("--ids", nargs="*", help="only these ids")
    ap.add_argument("--replace-in", metavar="BASE", help="with --ids: the summary is BASE.jsonl's records with "
                    "these ids' replaced (a rerun of the requests a fix changed)")
    a = ap.parse_args(argv)
    items = [i for i in yaml.safe_load(Path(a.items).read_text()) if not a.ids or i["id"] in a.ids]
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT.parent / "shared" / "tools"))
    from calibrate import calibrate

    cal = calibrate()
    Path(str(out) + ".cal").write_text(f"{cal}\n")
    recs = run(items, work, Path(str(out) + ".jsonl"))
    if a.replace_in:
        again = {r["id"]: r for r in recs}
        recs = [again.get(r["id"], r) for r in map(json.loads, Path(a.replace_in + ".jsonl").read_text().splitlines())]
        Path(str(out) + ".jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    s = summary(recs, cal)
    Path(str(out) + ".json").write_text(json.dumps(s, indent=1) + "\n")
    print(json.dumps(s, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
