"""duckask's own overhead: everything a question costs except the LLM's thinking time.

(a) Full graph on the NBA warehouse (../shared/data/nba, 52 tables). ``duckask.ask`` runs every
    question of bench/nba_questions.yaml with a zero-latency ``ScriptedLLM`` whose TableSelector
    reply is ``tables: [<gold tables>]`` and whose SQLGenerator reply is the gold SQL, so every node
    runs for real: ClarifyQuery (rules), TableSelector (pre-ranker + one scripted pick), SchemaLookup,
    SQLGenerator, SQLExecutor (the real query), DataAnalyzer (rules), ResponseGrader (rules).
    One untimed call warms the import and catalog caches; then each question runs ``--repeat``
    times and its median is kept. Reported: median and p90 over questions of the wall time of
    ``ask`` (Result.seconds: settings, database and catalog lookup, graph) and of each node (from
    Result.trace). Target: median <= 30 ms per question.

(b) Table selection at scale: an in-memory ``duckask.utils.schema.catalog.Catalog`` of 5,000 synthetic
    tables (names from a word list, 5-15 columns, keys and foreign keys, some comments, a value
    index of a few thousand entries), and ~50 questions each written about one random table. Timed:
    ``match_values`` + ``rank_tables`` per question (target < 1 s). Also shown: the prompt stays
    bounded, because the TableSelector prompt lists only the ``table_shortlist`` (8) best candidates
    (its length in characters, built with ``PROMPT`` and ``table_line`` from
    duckask.nodes.table_selector), and the schema the generator sees is ``render_ddl`` of the
    selected tables (the top 2 plus their referenced parents, as ``with_parents`` adds them), cut
    to relevant columns by ``keep_columns`` when over ``schema_char_budget``, as SchemaLookup does.
    For scale, the length of the whole catalog's table list and DDL is printed too.

Run (from the repository root)::

    .venv/bin/python bench/overhead.py --out docs/results/overhead.json

Options: ``--repeat N`` (default 3), ``--tables N`` (default 5000), ``--questions N`` (default 50),
``--seed``, ``--cache-dir`` (duckask cache; default the usual one).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path

import duckdb
import yaml

import duckask
from duckask.nodes.table_selector import PROMPT
from duckask.utils.config import load_settings
from duckask.utils.llm import ScriptedLLM
from duckask.utils.schema.catalog import Catalog, Column, Reference, Table
from duckask.utils.schema.ddl import render_ddl, table_line
from duckask.utils.schema.ranker import keep_columns, rank_tables, with_parents
from duckask.utils.schema.values import match_values
from duckask.utils.semantic import get_catalog
from duckask.utils.sql.describe import describe_sql

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
NBA_DB = SHARED / "data" / "nba"
NBA_QUESTIONS = ROOT / "bench" / "nba_questions.yaml"
NODES = ["ClarifyQuery", "TableSelector", "SchemaLookup", "SQLGenerator", "SQLExecutor", "DataAnalyzer",
         "ResponseGrader"]


def quantile(xs: list[float], q: float) -> float:
    """Linear-interpolated quantile (q in [0, 1])."""
    s = sorted(xs)
    if not s:
        return float("nan")
    pos = (len(s) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


# --------------------------------------------------------------------------- (a) NBA full graph
def scripted_llm(gold_tables: list[str], gold_sql: str) -> ScriptedLLM:
    reply = "tables: [" + ", ".join(gold_tables) + "]"
    return ScriptedLLM({"TableSelector": lambda _m: reply, "SQLGenerator": lambda _m: "```sql\n" + gold_sql + "\n```"})


def run_nba(settings, repeat: int) -> dict:
    questions = yaml.safe_load(NBA_QUESTIONS.read_text())
    db = str(NBA_DB)
    cat = get_catalog(db, settings)
    # Warm-up (untimed): imports the EXPORT folder if needed, loads the catalog, DuckDB keywords...
    q0 = questions[0]
    duckask.ask(q0["question"], db=db, settings=settings,
                llm=scripted_llm(describe_sql(q0["gold_sql"]).tables, q0["gold_sql"]))
    per_q = []
    for q in questions:
        gold = describe_sql(q["gold_sql"]).tables
        runs = []
        for _ in range(repeat):
            res = duckask.ask(q["question"], db=db, settings=settings, llm=scripted_llm(gold, q["gold_sql"]))
            nodes: dict[str, float] = {}
            for t in res.trace:
                nodes[t["node"]] = nodes.get(t["node"], 0.0) + t["ms"]
            runs.append({"total": res.seconds * 1000, "nodes": nodes, "status": res.status,
                         "rows": 0 if res.df is None else len(res.df), "tables": res.tables,
                         "selector_calls": sum(1 for c in res.llm_calls if c["node"] == "TableSelector"),
                         "generator_calls": sum(1 for c in res.llm_calls if c["node"] == "SQLGenerator"),
                         "grade_status": res.grade_status, "path": [t["node"] for t in res.trace]})
        med = lambda f, runs=runs: statistics.median(f(r) for r in runs)  # noqa: E731
        last = runs[-1]
        per_q.append({
            "id": q["id"], "question": q["question"], "status": last["status"], "rows": last["rows"],
            "total_ms": med(lambda r: r["total"]),
            "nodes_ms": {n: med(lambda r, n=n: r["nodes"].get(n, 0.0)) for n in NODES},
            "outside_nodes_ms": med(lambda r: r["total"] - sum(r["nodes"].values())),
            "gold_tables": gold, "selected_tables": last["tables"],
            "gold_selected": all(g in last["tables"] for g in gold),
            "selector_llm_calls": last["selector_calls"], "generator_llm_calls": last["generator_calls"],
            "grade_status": last["grade_status"], "path": last["path"]})
    totals = [p["total_ms"] for p in per_q]
    summary = {"questions": len(per_q), "repeat": repeat, "tables": len(cat.tables),
               "answered": sum(p["status"] == "answered" for p in per_q),
               "gold_tables_selected": sum(p["gold_selected"] for p in per_q),
               "selector_fallbacks": sum(p["selector_llm_calls"] > 1 for p in per_q),
               "median_ms": statistics.median(totals), "p90_ms": quantile(totals, 0.9), "max_ms": max(totals),
               "nodes": {n: {"median_ms": statistics.median(p["nodes_ms"][n] for p in per_q),
                             "p90_ms": quantile([p["nodes_ms"][n] for p in per_q], 0.9)} for n in NODES},
               "outside_nodes": {"median_ms": statistics.median(p["outside_nodes_ms"] for p in per_q),
                                 "p90_ms": quantile([p["outside_nodes_ms"] for p in per_q], 0.9)},
               "target_median_ms": 30, "target_met": statistics.median(totals) <= 30}
    return {"summary": summary, "questions": per_q}


# --------------------------------------------------------------------------- (b) synthetic catalog
WORDS = """account address agent airline airport album allocation amount appointment artist asset
audit author award balance bank batch benefit bid bill booking branch brand budget building bus
campaign candidate capacity card carrier cart case category certificate channel charge city claim
class client clinic coach code collection comment commission company competition complaint component
contract contact country coupon course court credit currency customer cycle dataset deal debt
delivery department deposit depot device diagnosis discount dispatch district doctor document
donation driver election employee engine enrollment equipment event exam expense factory fare
feedback festival file fleet flight forecast fund game garage genre goal grade grant group guest
hospital hotel household incident income invoice item journal kitchen label lab language lease
lesson library license line loan location lot machine manager manufacturer market match meal
member membership menu message meter mission model module movie museum network note nurse office
order organization owner package parcel partner party patient payment payroll period permit
pharmacy phone plan platform player policy portfolio position post premium prescription price
product professor profile program project property provider purchase quota race rate reading
recipe record region registration rental repair report reservation resource restaurant result
review reward risk road room route salary sale schedule school score season section sector
segment sensor service session shift shipment shop site skill song source speaker sponsor
station stock store student subject subscription supplier survey table target task tax team
teacher ticket tier timesheet tournament track trade training transaction transfer trip tutor
unit user vehicle vendor venue version visit voucher warehouse warranty wave website workshop
zone""".split()
ATTRS = """name title status type amount date created_at updated_at description code price quantity
total rate score level email phone city country start_date end_date duration weight height color
category rating notes balance currency source channel priority region year month capacity""".split()
TYPES = {"name": "VARCHAR", "title": "VARCHAR", "status": "VARCHAR", "type": "VARCHAR", "description": "VARCHAR",
         "code": "VARCHAR", "email": "VARCHAR", "phone": "VARCHAR", "city": "VARCHAR", "country": "VARCHAR",
         "category": "VARCHAR", "notes": "VARCHAR", "currency": "VARCHAR", "source": "VARCHAR",
         "channel": "VARCHAR", "priority": "VARCHAR", "region": "VARCHAR", "color": "VARCHAR",
         "date": "DATE", "start_date": "DATE", "end_date": "DATE", "created_at": "TIMESTAMP",
         "updated_at": "TIMESTAMP", "year": "INTEGER", "month": "INTEGER", "quantity": "INTEGER",
         "capacity": "INTEGER", "level": "INTEGER"}
SYLLABLES = ("ka lo mi ra ten vo su bel dar fin gor hal ith jun kes lum mor nev ost pra quil ros sel tor ulm var wen "
             "xan yor zel").split()
TEMPLATES = ["How many {T} records have {A} {V}?", "What is the average {A} of {T} entries?",
             "List the {A} of every {T} for {V}.", "Which {T} has the highest {A}?",
             "Show the {T} {A} by {A2}.", "What is the total {A} per {A2} for each {T}?"]


def build_catalog(n_tables: int, rng: random.Random) -> tuple[Catalog, dict[str, list[str]]]:
    """A synthetic catalog and, per table, the values indexed from it."""
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < n_tables:
        k = rng.choice((1, 2, 2, 2, 3))
        name = "_".join(rng.sample(WORDS, k))
        if name not in seen:
            seen.add(name)
            names.append(name)
    tables: dict[str, Table] = {}
    for name in names:
        head = name.split("_")[-1]
        cols = [Column(name=f"{head}_id", type="INTEGER", pk=True, samples=["1", "2"])]
        for _ in range(rng.randint(0, 3)):       # foreign keys to random other tables
            other = rng.choice(names)
            if other != name:
                oh = other.split("_")[-1]
                cname = f"{oh}_id" if all(c.name != f"{oh}_id" for c in cols) else f"{other}_id"
                if all(c.name != cname for c in cols):
                    cols.append(Column(name=cname, type="INTEGER", ref=Reference(other, f"{oh}_id")))
        want = rng.randint(5, 15)
        for attr in rng.sample(ATTRS, len(ATTRS)):
            if len(cols) >= want:
                break
            typ = TYPES.get(attr, "DOUBLE")
            samples = (["Alpha", "Beta", "Gamma"] if typ == "VARCHAR"
                       else ["2024-01-05"] if typ in ("DATE", "TIMESTAMP")
                       else ["12.5", "40.0"])
            cols.append(Column(name=attr, type=typ, samples=samples,
                               comment=(f"{attr.replace('_', ' ')} of the {name.replace('_', ' ')}"
                                        if rng.random() < 0.15 else "")))
        comment = (f"One row per {head}: {' '.join(rng.sample(WORDS, 3))} details" if rng.random() < 0.3 else "")
        tables[name] = Table(name=name, columns=cols[:15], comment=comment, rows=rng.randint(10, 10**6),
                             pk=[cols[0].name])
    values: dict[str, list[list[str]]] = {}
    by_table: dict[str, list[str]] = {}
    n_values = 4000
    text_cols = [(t.name, c.name) for t in tables.values() for c in t.columns if c.type == "VARCHAR"]
    for _ in range(n_values):
        v = "".join(rng.sample(SYLLABLES, rng.randint(2, 3))).capitalize()
        if rng.random() < 0.4:
            v += " " + "".join(rng.sample(SYLLABLES, 2)).capitalize()
        t, c = rng.choice(text_cols)
        values.setdefault(v.lower(), []).append([t, c, v])
        by_table.setdefault(t, []).append(v)
    return Catalog(key="synthetic", tables=tables, values=values), by_table


def make_questions(cat: Catalog, by_table: dict[str, list[str]], n: int, rng: random.Random) -> list[dict]:
    out = []
    with_values = [t for t in cat.tables if t in by_table]
    for i in range(n):
        target = rng.choice(with_values if i % 2 == 0 else list(cat.tables))
        t = cat.tables[target]
        attrs = [c.name.replace("_", " ") for c in t.columns if not c.pk and not c.ref] or ["name"]
        tmpl = TEMPLATES[i % len(TEMPLATES)]
        if "{V}" in tmpl and target not in by_table:
            tmpl = "Which {T} has the highest {A}?"
        q = tmpl.format(T=target.replace("_", " "), A=rng.choice(attrs), A2=rng.choice(attrs),
                        V=rng.choice(by_table.get(target, ["x"])))
        out.append({"question": q, "target": target})
    return out


def run_synthetic(settings, n_tables: int, n_questions: int, seed: int) -> dict:
    rng = random.Random(seed)
    t0 = time.perf_counter()
    cat, by_table = build_catalog(n_tables, rng)
    build_s = time.perf_counter() - t0
    questions = make_questions(cat, by_table, n_questions, rng)
    shortlist_n, budget = settings.table_shortlist, settings.schema_char_budget
    rows = []
    for q in questions:
        t0 = time.perf_counter()
        vm = match_values(cat, q["question"])
        ranked = rank_tables(cat, q["question"], vm)
        rank_ms = (time.perf_counter() - t0) * 1000
        shortlist = [r.table for r in ranked[:shortlist_n]]
        prompt = PROMPT.format(tables="\n".join(table_line(cat.tables[t]) for t in shortlist), question=q["question"])
        # The LLM's pick is simulated as the two best candidates; parents are added as TableSelector does.
        selected = with_parents(cat, shortlist[:2])
        t1 = time.perf_counter()
        ddl = render_ddl(cat, selected)
        full_ddl_chars = len(ddl)
        pruned = False
        if len(ddl) > budget:
            ddl = render_ddl(cat, selected, columns=keep_columns(cat, selected, q["question"], vm))
            pruned = True
        ddl_ms = (time.perf_counter() - t1) * 1000
        pos = next((i for i, r in enumerate(ranked, 1) if r.table == q["target"]), None)
        rows.append({"question": q["question"], "target": q["target"], "target_rank": pos, "rank_ms": rank_ms,
                     "value_matches": len(vm), "prompt_chars": len(prompt), "selected": selected,
                     "ddl_chars_unpruned": full_ddl_chars, "ddl_chars": len(ddl), "ddl_pruned": pruned,
                     "ddl_ms": ddl_ms})
    all_list = "\n".join(table_line(t) for t in cat.tables.values())
    all_ddl = render_ddl(cat)
    ms = [r["rank_ms"] for r in rows]
    summary = {
        "tables": len(cat.tables), "columns": sum(len(t.columns) for t in cat.tables.values()),
        "foreign_keys": len(cat.foreign_links()),
        "tables_with_comment": sum(bool(t.comment) for t in cat.tables.values()),
        "value_index_entries": len(cat.values), "build_s": build_s, "questions": len(rows),
        "rank_ms_median": statistics.median(ms), "rank_ms_p90": quantile(ms, 0.9), "rank_ms_max": max(ms),
        "target_met": max(ms) < 1000,
        "target_in_top8": sum(1 for r in rows if r["target_rank"] and r["target_rank"] <= shortlist_n) / len(rows),
        "prompt_chars_median": statistics.median(r["prompt_chars"] for r in rows),
        "prompt_chars_max": max(r["prompt_chars"] for r in rows),
        "ddl_chars_median": statistics.median(r["ddl_chars"] for r in rows),
        "ddl_chars_max": max(r["ddl_chars"] for r in rows),
        "ddl_chars_unpruned_max": max(r["ddl_chars_unpruned"] for r in rows),
        "ddl_pruned_share": sum(r["ddl_pruned"] for r in rows) / len(rows),
        "selected_tables_max": max(len(r["selected"]) for r in rows),
        "shortlist": shortlist_n, "schema_char_budget": budget,
        "all_tables_list_chars": len(all_list), "all_tables_ddl_chars": len(all_ddl),
    }
    return {"summary": summary, "questions": rows}


# --------------------------------------------------------------------------- output
def print_report(a: dict, b: dict) -> None:
    s = a["summary"]
    print(f"## (a) Full graph on the NBA warehouse ({s['tables']} tables), zero-latency ScriptedLLM\n")
    print(f"{s['questions']} questions x {s['repeat']} runs (median per question), after one untimed warm-up call; "
          f"answered {s['answered']}/{s['questions']}, gold tables selected {s['gold_tables_selected']}/"
          f"{s['questions']} (TableSelector fell back to the pre-ranker's top 3 for {s['selector_fallbacks']}).\n")
    print("| step | median ms | p90 ms |")
    print("|---|---|---|")
    print(f"| **ask() total** | **{s['median_ms']:.1f}** | **{s['p90_ms']:.1f}** |")
    for n in NODES:
        print(f"| {n} | {s['nodes'][n]['median_ms']:.2f} | {s['nodes'][n]['p90_ms']:.2f} |")
    print(f"| outside nodes (settings, db + catalog lookup, flow build) | {s['outside_nodes']['median_ms']:.2f} | "
          f"{s['outside_nodes']['p90_ms']:.2f} |")
    print(f"\nTarget median <= 30 ms: {'met' if s['target_met'] else 'MISSED'} ({s['median_ms']:.1f} ms; max "
          f"{s['max_ms']:.1f} ms).")
    t = b["summary"]
    print(f"\n## (b) Table selection on a synthetic catalog of {t['tables']:,} tables\n")
    print(f"{t['columns']:,} columns, {t['foreign_keys']:,} foreign keys, {t['tables_with_comment']:,} table comments, "
          f"{t['value_index_entries']:,} indexed values; {t['questions']} questions, each about one random table.\n")
    print("| measure | median | p90 / max |")
    print("|---|---|---|")
    print(f"| match_values + rank_tables, ms | {t['rank_ms_median']:.0f} | "
          f"{t['rank_ms_p90']:.0f} / {t['rank_ms_max']:.0f} |")
    print(f"| TableSelector prompt ({t['shortlist']} candidates), chars | {t['prompt_chars_median']:.0f} | "
          f"max {t['prompt_chars_max']} |")
    print(f"| schema DDL of the selected tables (<= {t['selected_tables_max']} tables), chars | "
          f"{t['ddl_chars_median']:.0f} | max {t['ddl_chars_max']} (unpruned max {t['ddl_chars_unpruned_max']}) |")
    print(f"| for scale: all {t['tables']:,} tables as a list / as DDL, chars | {t['all_tables_list_chars']:,} | "
          f"{t['all_tables_ddl_chars']:,} |")
    print(f"\nTarget < 1 s per question: {'met' if t['target_met'] else 'MISSED'} (max {t['rank_ms_max']:.0f} ms). "
          f"Target table in the top {t['shortlist']}: {100 * t['target_in_top8']:.0f}% of questions. "
          f"DDL over the {t['schema_char_budget']}-char budget and pruned by keep_columns: "
          f"{100 * t['ddl_pruned_share']:.0f}% of questions. (The synthetic questions reuse their table's name words, "
          f"so this part measures time and prompt size, not recall.)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="duckask overhead without the LLM: full graph on NBA, ranking at 5,000 tables.")
    ap.add_argument("--out", help="write the results as JSON here (e.g. docs/results/overhead.json)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per NBA question (median kept)")
    ap.add_argument("--tables", type=int, default=5000, help="synthetic catalog size")
    ap.add_argument("--questions", type=int, default=50, help="synthetic questions")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cache-dir", help="duckask cache dir (default: duckask's usual cache)")
    args = ap.parse_args(argv)
    settings = load_settings(cache_dir=args.cache_dir)

    a = run_nba(settings, args.repeat)
    b = run_synthetic(settings, args.tables, args.questions, args.seed)
    print_report(a, b)
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        doc = {"benchmark": "overhead",
               "command": "python bench/overhead.py " + " ".join(sys.argv[1:] if argv is None else argv),
               "nba_full_graph": a, "synthetic_table_selection": b,
               "settings": {"table_shortlist": settings.table_shortlist,
                            "schema_char_budget": settings.schema_char_budget,
                            "table_llm_threshold": settings.table_llm_threshold, "clarify": settings.clarify,
                            "grader": settings.grader, "analyzer": settings.analyzer},
               "environment": {"python": platform.python_version(), "duckdb": duckdb.__version__,
                               "machine": platform.machine(), "cpus": os.cpu_count()}}
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False, default=str) + "\n")
        print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
