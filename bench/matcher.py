"""What a question's matching against kept pairs costs at 0 to 20,000 pairs, with a hostile pair at the caps (issue 52).

Matching is MatchTemplate's choice (``nodes.match_template.matched``: word for word, then by meaning since issue 65)
and TableSelector's few-shot retrieval (``knowledge.retrieve.retrieve``), the two places every question reads the
kept pairs. "before" is the way they read
them until issue 52 (every pair matched, every pair scored: ``templates.match`` over the whole list and
``retrieve.ranked`` with the terms of the last 4,096 pairs cached, as they were), timed in the same run; "after"
reads the word index (``knowledge.index``). The pairs are made here over the Lahman demo (real tables and columns,
distinct questions: a player's name or a year, a statistic, a team), with one hostile pair at the caps (a
400-character question, an 8,000-character SQL); the questions are 20, half of them a pair's question with another
year (a template; none at 0 pairs), half unrelated. For each size: the first question (the index built: "cold")
and the median and largest of the other 19 ("warm"). CAL (``../shared/tools/calibrate.py``) is timed in the same
run.

    .venv/bin/python bench/matcher.py --out docs/results/matcher.json
"""
from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZES = [0, 2_000, 5_000, 20_000]
STATS = [("home runs", "hr"), ("runs batted in", "rbi"), ("stolen bases", "sb"), ("hits", "h"), ("walks", "bb"),
         ("strikeouts", "so"), ("doubles", "doubles"), ("triples", "triples"), ("games", "g"), ("at bats", "ab")]
VERBS = ["How many {s} did {n} have in {y}?", "What was the total of {s} for {n} in {y}?",
         "Show the {s} of {n} in {y}", "List {n}'s {s} in {y} by team"]


def make_pairs(names: list[tuple[str, str]], n: int) -> list:
    """``n`` distinct pairs over the demo (a name, a statistic, a year), the newest last."""
    from duckask.utils.knowledge.examples import Example

    out = []
    i = 0
    while len(out) < n:
        first, last = names[i % len(names)]
        word, col = STATS[(i // len(names)) % len(STATS)]
        year = 1950 + (i // (len(names) * len(STATS))) % 70
        shape = VERBS[(i // 7) % len(VERBS)]
        q = shape.format(s=word, n=f"{first} {last}", y=year)
        sql = (f"SELECT sum(b.{col}) FROM batting b JOIN people p ON p.player_id = b.player_id "
               f"WHERE p.name_first = '{first}' AND p.name_last = '{last}' AND b.year_id = {year}")
        out.append(Example(question=q, sql=sql, id=str(len(out) + 1), tables=["batting", "people"]))
        i += 1
    return out


def hostile() -> object:
    """One pair at the caps: a 400-character question, an 8,000-character SQL."""
    from duckask.utils.knowledge.examples import Example
    from duckask.utils.knowledge.keep import MAX_PAIR_QUESTION, MAX_PAIR_SQL

    words = ("how many home runs did the player hit in the year when the team won the most games at home "
             "and away ").split()
    q = " ".join(words[i % len(words)] for i in range(200))[:MAX_PAIR_QUESTION]
    ors = " OR ".join(f"b.hr = {i}" for i in range(2000))
    sql = f"SELECT count(*) FROM batting b WHERE {ors}"[:MAX_PAIR_SQL - 1] + "0"
    return Example(question=q, sql=sql, id="hostile", tables=["batting"])


@functools.lru_cache(maxsize=4096)
def _old_terms(question: str, sql: str) -> frozenset[str]:
    """A pair's terms as they were kept before issue 52: the last 4,096 pairs' (``retrieve.pair_terms``' cache)."""
    from duckask.utils.knowledge.index import terms_of

    return terms_of(question, sql)


def before(question, pairs, values, k=3, threshold=0.3):
    """The matching as it was: every pair matched (the same choice rule), every pair scored."""
    from duckask.utils.knowledge.retrieve import ranked
    from duckask.utils.knowledge.templates import match

    found = [(t, ex, -i) for i, ex in enumerate(pairs) if (t := match(question, ex, values)) is not None]
    best = min(found, key=lambda f: (len(f[0].slots), f[2]))[:2] if found else None
    return best, ranked(question, pairs, k, threshold, terms=_old_terms)


def after(question, pairs, values, k=3, threshold=0.3):
    from duckask.nodes.match_template import matched
    from duckask.utils.knowledge.retrieve import retrieve

    found = matched(question, pairs, values, _catalog())
    return (found[:2] if found else None), retrieve(question, pairs, k, threshold)


_CATALOG: list = []


def _catalog():
    """The demo's catalog (MatchTemplate's reach by meaning reads it), set by ``main``."""
    return _CATALOG[0] if _CATALOG else None


def timed(fn, questions, pairs, values) -> dict:
    seconds, picks = [], []
    for q in questions:
        t0 = time.perf_counter()
        got, similar = fn(q, pairs, values)
        seconds.append(time.perf_counter() - t0)
        picks.append([got[1].id if got else None, [ex.id for ex, _ in similar]])
    warm = seconds[1:]
    return {"cold_s": round(seconds[0], 4), "warm_median_s": round(statistics.median(warm), 4),
            "warm_max_s": round(max(warm), 4), "picks": picks}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--sizes", type=int, nargs="*", default=SIZES)
    ap.add_argument("--no-before-above", type=int, default=20_000,
                    help="skip the old full scan above this many pairs (it takes minutes)")
    args = ap.parse_args(argv)

    from duckask.data.lahman import DEFAULT_PATH
    from duckask.utils.api import prepare
    from duckask.utils.llm import ScriptedLLM
    from duckask.utils.schema.value_index import ValueIndex

    sys.path.insert(0, str(ROOT.parent / "shared" / "tools"))
    from calibrate import calibrate

    cal = calibrate()
    prep = prepare(str(DEFAULT_PATH), llm=ScriptedLLM({}))
    values = ValueIndex.of(prep.database, prep.catalog)
    _CATALOG[:] = [prep.catalog]
    names = prep.database.run("SELECT DISTINCT name_first, name_last FROM people WHERE name_first IS NOT NULL "
                              "AND name_last IS NOT NULL AND name_last NOT LIKE '%''%' AND name_first NOT LIKE "
                              "'%''%' ORDER BY 2, 1 LIMIT 500", row_cap=500).df.values.tolist()
    every = make_pairs(names, max(args.sizes))
    questions = []
    for i in range(10):                      # variants of a pair among the first 2,000: another year
        pair = every[(i * 173) % min(2_000, len(every))]
        year = pair.sql.rsplit("= ", 1)[1]
        questions.append(pair.question.replace(year, str(int(year) + 5)))
    questions += ["Which team won the World Series in 2016?", "Who hit the most home runs in 1998?",
                  "How many players were born in Canada?", "What is the average salary by team in 2010?",
                  "List the pitchers with an ERA under 2 in 1968", "Which players played for both the Yankees and "
                  "the Red Sox?", "How many games did the Cubs win in 2016?", "Who stole the most bases ever?",
                  "What was Babe Ruth's batting average in 1927?", "Count the managers who were also players"]
    rows = []
    for size in args.sizes:
        pairs = every[:size] + ([hostile()] if size else [])
        row = {"pairs": len(pairs), "after": timed(after, questions, pairs, values)}
        row["templates_found"] = sum(1 for got, _ in row["after"]["picks"] if got)
        if size <= args.no_before_above:
            row["before"] = timed(before, questions, pairs, values)
            row["same_choices"] = row["before"].pop("picks") == row["after"]["picks"]
        row["after"].pop("picks")
        rows.append(row)
        print(json.dumps(row), flush=True)
    result = {"date": dt.date.today().isoformat(), "cal_s": round(cal, 2), "questions": len(questions),
              "command": "bench/matcher.py --out docs/results/matcher.json", "rows": rows}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
