"""Split the DuckDB-idioms questions into bench/idioms_dev.yaml and bench/idioms_heldout.yaml.

The split is fixed by a seed: the questions (from any number of files, e.g. the two halves themselves) are
sorted by id and each database's are shuffled with ``random.Random(SEED)``; the first half of each goes to
dev. Then, one database at a time, the half of its questions that best evens out the tags between the
files (given the other databases' halves) replaces it, until nothing improves. The imbalance is the
difference of every tag's count between the files: a ``kind:`` tag weighs 10, a feature of at most 4
questions 3, any other tag 1. So every database gives exactly half its questions to each file, and the
kinds and the rare features fall evenly where the questions allow it.
Running it again on the two files it wrote rewrites them unchanged.

    .venv/bin/python bench/idioms_split.py QUESTIONS.yaml [...]      # writes bench/idioms_{dev,heldout}.yaml
    .venv/bin/python bench/idioms_split.py bench/idioms_dev.yaml bench/idioms_heldout.yaml --check
"""
from __future__ import annotations

import argparse
import itertools
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

BENCH = Path(__file__).resolve().parent
SEED = 20240611
DB_DIR = "/tmp/duckask_idioms"       # bench/idioms_dbs.py's default --out

HEADER = """\
# DuckDB-idioms {which} set: {n} questions over the six databases bench/idioms_dbs.py builds
# (events: JSON payloads; catalog: LIST, STRUCT and MAP columns; trips: timestamps; survey: one wide
# 43-column extract; sales_star: a star schema; logs: text to split).{warning}
#
#     .venv/bin/python bench/idioms_dbs.py --replace          # builds /tmp/duckask_idioms/*.duckdb (seconds)
#     .venv/bin/duckask eval bench/idioms_{name}.yaml
#
# How the questions were written: from DuckDB's documentation (friendly SQL: GROUP BY ALL, SELECT *
# EXCLUDE / REPLACE, COLUMNS('regex'), DESCRIBE, SUMMARIZE, PIVOT; JSON extraction with -> / ->> and
# JSON paths; list indexing and slicing (1-based, negative from the end), list functions and unnest;
# struct fields; map lookup; date_diff / date_trunc / date_sub and intervals; split_part, string_split,
# regexp_extract, parse_filename) and from a read-only look at the generated data; none from Spider,
# bench/dialect_questions.yaml or any other set in bench/. They are worded as an analyst would ask them,
# never naming a DuckDB function or operator (but "summarize table t", whose gold is SUMMARIZE t, scored
# on its result). Tags: the feature(s), and one kind: kind:feature (needs a DuckDB idiom), kind:grain
# (the one-row-per-group shape is the trap) or kind:plain (ordinary SQL).
#
# Conventions: each gold SQL is one DuckDB query returning only the asked-for columns; "most"/"highest"
# questions were checked for ties at the top (the gold uses rank() = 1, so a tie would show as extra
# rows); a top-level ORDER BY only where the question asks for an order (then `ordered: true`); a fixed
# "today" is always given as a date. Every gold was run through duckask's safe executor
# (open_database(path).run) and returns rows, the same rows on two independent builds of the databases
# (tests/test_idioms_set.py runs them all). Sampling questions were left out: their answers are random.
#
# How the set was split: {total} questions, split by bench/idioms_split.py (seed {seed}): every
# database gives half of its questions to idioms_dev.yaml and half to idioms_heldout.yaml, with the
# kinds and the rare features spread as evenly as the questions allow. Made before any prompt work.
#
# This file: {counts}
"""
WARNINGS = {"dev": "",
            "heldout": "\n#\n# HELD OUT: do not read these questions, or their failures, while working on prompts,"
                       "\n# examples or rules; run them only to measure, after the work on idioms_dev.yaml is done."}


def db_name(db: str) -> str:
    return Path(str(db)).stem


def kind_of(q: dict[str, Any]) -> str:
    kinds = [t for t in q["tags"] if t.startswith("kind:")]
    if len(kinds) != 1:
        raise ValueError(f"{q['id']} needs exactly one kind: tag, has {kinds}")
    return kinds[0]


def _weight(tag: str, total: int) -> int:
    return 10 if tag.startswith("kind:") else 3 if total <= 4 else 1


def _cost(half: tuple[int, ...], start: list[int], moves: list[list[int]], weights: list[int]) -> int:
    """The weighted imbalance over one database's tags when the questions ``half`` go to dev: ``start`` is the
    dev-minus-held count of each tag with all of them held out, ``moves`` the tags (indexes) of each."""
    v = list(start)
    for j in half:
        for i in moves[j]:
            v[i] += 2
    return sum(w * abs(x) for w, x in zip(weights, v))


def imbalance(dev: list[dict], held: list[dict]) -> int:
    """How unevenly the tags fall: the difference in each tag's count between the halves, a kind weighing 10,
    a rare feature (at most 4 questions) 3, any other tag 1."""
    a = Counter(t for q in dev for t in q["tags"])
    b = Counter(t for q in held for t in q["tags"])
    return sum(_weight(t, a[t] + b[t]) * abs(a[t] - b[t]) for t in set(a) | set(b))


def split(questions: list[dict[str, Any]], seed: int = SEED) -> tuple[list[dict], list[dict]]:
    """Shuffle each database's questions (seeded), start with the first half of each in dev, then, one
    database at a time, take the half of its questions that best evens out the tags given the others'
    choice (the first such half in a fixed enumeration), until no database's choice improves."""
    by_db: dict[str, list[dict]] = {}
    for q in sorted(questions, key=lambda q: q["id"]):
        kind_of(q)
        by_db.setdefault(db_name(q["db"]), []).append(q)
    rng = random.Random(seed)
    names = sorted(by_db)
    for name in names:
        rng.shuffle(by_db[name])
    totals = Counter(t for q in questions for t in q["tags"])
    chosen = {name: tuple(range(len(by_db[name]) // 2 + (len(by_db[name]) % 2) * (i % 2)))
              for i, name in enumerate(names)}

    def diff_without(skip: str) -> Counter:          # dev count minus held-out count, other databases
        d: Counter = Counter()
        for name in names:
            if name != skip:
                for j, q in enumerate(by_db[name]):
                    for t in q["tags"]:
                        d[t] += 1 if j in chosen[name] else -1
        return d

    def cost(d: Counter) -> int:
        return sum(_weight(t, totals[t]) * abs(v) for t, v in d.items())

    improved = True
    while improved:
        improved = False
        for name in names:
            base, group = diff_without(name), by_db[name]
            mine = sorted({t for q in group for t in q["tags"]})
            rest = cost(Counter({t: v for t, v in base.items() if t not in mine}))
            weights = [_weight(t, totals[t]) for t in mine]
            start = [base[t] - sum(q["tags"].count(t) for q in group) for t in mine]   # all held out
            moves = [[mine.index(t) for t in q["tags"]] for q in group]               # one moved to dev
            current = rest + _cost(chosen[name], start, moves, weights)
            for half in itertools.combinations(range(len(group)), len(chosen[name])):
                if (s := rest + _cost(half, start, moves, weights)) < current:
                    chosen[name], current, improved = half, s, True
    dev = [q for name in names for j, q in enumerate(by_db[name]) if j in chosen[name]]
    held = [q for name in names for j, q in enumerate(by_db[name]) if j not in chosen[name]]
    key = lambda q: (db_name(q["db"]), q["id"])     # noqa: E731
    return sorted(dev, key=key), sorted(held, key=key)


def _scalar(s: str) -> str:
    out = yaml.safe_dump(s, width=10**6, allow_unicode=True).rstrip("\n")
    return out[:-4].rstrip("\n") if out.endswith("\n...") else out


def render(which: str, qs: list[dict], total: int, db_dir: str = DB_DIR) -> str:
    per_db = Counter(db_name(q["db"]) for q in qs)
    kinds = Counter(kind_of(q) for q in qs)
    counts = (f"{len(qs)} questions; " + ", ".join(f"{k} {v}" for k, v in sorted(per_db.items())) + "; "
              + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ".")
    out = [HEADER.format(which="development" if which == "dev" else "held-out", n=len(qs), name=which,
                         warning=WARNINGS[which], total=total, seed=SEED, counts=counts)]
    current = None
    for q in qs:
        name = db_name(q["db"])
        if name != current:
            out.append(f"\n# {'-' * 64} {name}\n")
            current = name
        out.append(f"- id: {q['id']}\n  question: {_scalar(q['question'])}\n  gold_sql: |\n")
        out += [f"    {line}".rstrip() + "\n" for line in q["gold_sql"].rstrip("\n").splitlines()]
        if q.get("ordered"):
            out.append("  ordered: true\n")
        out.append(f"  tags: [{', '.join(q['tags'])}]\n  db: {db_dir}/{name}.duckdb\n\n")
    return "".join(out).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Split the DuckDB-idioms questions into dev and held-out halves.")
    ap.add_argument("files", nargs="+", help="YAML question lists (e.g. the two halves)")
    ap.add_argument("--out", default=str(BENCH), help="folder for idioms_dev.yaml and idioms_heldout.yaml")
    ap.add_argument("--check", action="store_true", help="only check that the files on disk are this split")
    args = ap.parse_args(argv)
    questions = [q for f in args.files for q in yaml.safe_load(Path(f).read_text())]
    ids = Counter(q["id"] for q in questions)
    if dupes := [i for i, n in ids.items() if n > 1]:
        print(f"duplicate ids: {dupes}", file=sys.stderr)
        return 1
    dev, held = split(questions)
    texts = {"dev": render("dev", dev, len(questions)), "heldout": render("heldout", held, len(questions))}
    out = Path(args.out)
    for which, text in texts.items():
        path = out / f"idioms_{which}.yaml"
        if args.check:
            if not path.exists() or path.read_text() != text:
                print(f"{path} is not the split {Path(__file__).name} makes", file=sys.stderr)
                return 1
        else:
            path.write_text(text)
    print(f"dev {len(dev)}, heldout {len(held)}, imbalance {imbalance(dev, held)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
