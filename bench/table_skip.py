"""When is TableSelector's pre-ranker "sure"? Rules to skip its LLM call, measured without any LLM.

``nodes/table_selector.py`` ranks every table deterministically (``_rank``: the example pairs
``knowledge.retrieve`` finds, ``match_values`` + ``rank_tables``, an ``EXAMPLE_BONUS`` for the
retrieved pairs' tables); on catalogs of more than ``table_llm_threshold`` tables one LLM call
(~10-30 s on a laptop CPU) then picks from the top ``table_shortlist`` and ``with_parents`` adds the
referenced parent tables. This script rebuilds exactly what ``TableSelector.exec`` sees before that
call -- the catalog from ``duckask.utils.app.api.prepare`` (with a dummy LLM that is never called; the
Lahman demo gets its demo knowledge there), the pairs from ``knowledge.examples_for``, ``retrieve``
with the settings' ``example_count``/``example_threshold`` and the node's own ``_rank`` -- and
evaluates candidate "sure" rules over the ranking. A rule that fires selects some tables (then
``with_parents``, as the node does) instead of asking the LLM:

- ``top<k>``: always the top k (reference points: a rule that always fires);
- ``gap(r, kmax)``: the first k in 1..kmax whose score is at least r times the next one's
  (score[k-1] >= r * score[k]); selects the top k;
- ``ex(s)``: the most similar retrieved pair has similarity >= s; selects that pair's tables;
- ``gap|ex``: ``ex(s)`` if it fires, else ``gap(r, kmax)``;
- ``gap&ex``: ``gap(r, kmax)`` fires and every table of the pairs retrieved with similarity >= s
  is in its top k (the ranking and the examples agree);
- ``gap+ex``: ``gap(r, kmax)`` fires; selects its top k plus the tables of the pairs retrieved with
  similarity >= s;
- ``band(f, n)``: the tables scoring more than f times the top score number at most n; selects them
  (``band(f, n, pad)``: and the next ``pad`` tables of the ranking too).

Per rule and question set: the share of questions where it fires (the LLM call skipped); among
those, the share whose selection holds every gold table (gold = ``knowledge.examples.tables_of`` of
the gold SQL), and the mean number of tables selected. For reference, all@8: the share of questions
with every gold table in the plain top-8 shortlist the LLM would choose from.

Question sets. Tuning (the rule is chosen on these only):
  nba      bench/nba_questions.yaml on ../shared/data/nba, descriptions=bench/nba_semantic.yaml,
           examples=bench/nba_examples.yaml, column_pruning=wide (the "semantic" NBA configuration);
  lahman-examples  the 31 pairs of data/lahman_examples.yaml asked as questions on data/lahman.duckdb
           (default options, so the demo's examples and semantic file), leave-one-out: a question's
           own pair is removed from the example pairs before retrieval.
Held-out (the chosen rule, ``CHOSEN`` below, fixed before these were looked at, evaluated once):
  lahman   bench/lahman_questions.yaml on data/lahman.duckdb (default options);
  nba-heldout  bench/nba_questions_heldout.yaml on NBA, options as for nba.
On the held-out sets the rule's selections are also compared with what the LLM chose in recorded
runs (the records' "tables", after with_parents): docs/results/lahman/taught.jsonl and
docs/results/nba_ablation/nba_questions_heldout-semantic.jsonl (made with the same knowledge and
options, but possibly an earlier ranker, so their shortlists may differ slightly from today's).

Rule choice (``pick``): among the candidates whose fired questions are fully covered >= 95% of the
time on the two tuning sets pooled (>= 90% on each) and that select at most 4 tables on average
(about what the node's own fallback, the top 3 + with_parents, selects: 3.8 on the tuning sets;
padding every selection to 5-6 tables fires more but shows the SQLGenerator twice the tables), the
one that fires most often; ties go to the simpler family, then to fewer selected tables. ``CHOSEN``
records the pick, made with ``--tuning-only`` before the held-out sets were evaluated.

No LLM and no model is loaded; the whole run takes a few seconds of one core (catalogs come from
duckask's cache). Run (from the repository root)::

    .venv/bin/python bench/table_skip.py --out docs/results/table_skip/table_skip.json \\
        --md docs/results/table_skip/table_skip.md [--tuning-only] [--verbose]

Outputs: the tables on stdout; ``--out`` a JSON of every candidate's numbers per set, the chosen
rule's per-question selections on every set and the held-out comparison with the recorded LLM
choices; ``--md`` a short report. ``--tuning-only`` leaves the held-out sets out (for choosing);
``--verbose`` prints, for the chosen rule, every fired question and what it selected.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from duckask.nodes.table_selector import _rank
from duckask.utils.app.api import prepare
from duckask.utils.eval.questions import load_questions
from duckask.utils.knowledge import examples_for
from duckask.utils.knowledge.examples import load_examples, tables_of
from duckask.utils.knowledge.retrieve import retrieve
from duckask.utils.schema.ranker import with_parents

ROOT = Path(__file__).resolve().parents[1]
NBA_DB = ROOT.parent / "shared" / "data" / "nba"
LAHMAN_DB = ROOT / "data" / "lahman.duckdb"
NBA_OPTIONS = {"descriptions": str(ROOT / "bench" / "nba_semantic.yaml"),
               "examples": str(ROOT / "bench" / "nba_examples.yaml"), "column_pruning": "wide"}
RECORDED = {"lahman": ROOT / "docs" / "results" / "lahman" / "taught.jsonl",
            "nba-heldout": ROOT / "docs" / "results" / "nba_ablation" / "nba_questions_heldout-semantic.jsonl"}
SHORTLIST_K = 8           # the default table_shortlist (checked against the settings below)
TARGET = 0.95             # pooled tuning coverage of fired questions the chosen rule must reach
TARGET_EACH = 0.90        # ... and on each tuning set
MAX_MEAN_TABLES = 4.0     # ... selecting at most this many tables on average (pooled)

#: The rule chosen on the tuning sets (by ``pick``; see the module docstring). None: use ``pick``'s choice.
CHOSEN: str | None = "band(f=0.3,n=5)"


class NoLLM:
    """Stands in for the LLM in ``prepare``: the benchmark never calls it."""
    name = "none"
    is_endpoint = True

    def complete(self, *args, **kwargs):
        raise RuntimeError("bench/table_skip.py makes no LLM call")


# --------------------------------------------------------------------------- question sets
@dataclass
class Item:
    id: str
    question: str
    gold: list[str]
    ranked: list            # Ranked (table, score, reasons), best first
    examples: list          # (Example, similarity), most similar first
    catalog: object
    left_out: int = 0       # example pairs removed for leave-one-out


@dataclass
class QSet:
    name: str
    role: str               # tuning | held-out
    items: list[Item] = field(default_factory=list)
    tables: int = 0
    pairs: int = 0


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def build(name: str, role: str, db: Path, options: dict, questions: list[tuple[str, str, str]]) -> QSet:
    """Rank every question as ``TableSelector`` does before its LLM call (leave-one-out on the pairs)."""
    prep = prepare(str(db), llm=NoLLM(), **options)
    s, cat = prep.settings, prep.catalog
    if s.table_shortlist != SHORTLIST_K or len(cat.tables) <= s.table_llm_threshold:
        raise SystemExit(f"{name}: unexpected settings (shortlist {s.table_shortlist}, "
                         f"{len(cat.tables)} tables, threshold {s.table_llm_threshold})")
    pairs = examples_for(prep.database, s)
    lookup = {t.lower(): t for t in cat.tables}
    out = QSet(name, role, tables=len(cat.tables), pairs=len(pairs))
    for qid, question, gold_sql in questions:
        pool = [e for e in pairs if _norm(e.question) != _norm(question)]
        found = retrieve(question, pool, s.example_count, s.example_threshold)
        ranked = _rank(cat, question, found)["ranked"]
        gold = list(dict.fromkeys(lookup.get(g.lower(), g) for g in tables_of(gold_sql)))
        missing = [g for g in gold if g not in cat.tables]
        if missing:
            raise SystemExit(f"{name} {qid}: gold tables not in the catalog: {missing}")
        out.items.append(Item(qid, question, gold, ranked, found, cat, len(pairs) - len(pool)))
    return out


def question_sets(tuning_only: bool) -> list[QSet]:
    nba, _ = load_questions(ROOT / "bench" / "nba_questions.yaml")
    lahman_pairs = load_examples(ROOT / "data" / "lahman_examples.yaml")
    sets = [build("nba", "tuning", NBA_DB, NBA_OPTIONS, [(q.id, q.question, q.gold_sql) for q in nba]),
            build("lahman-examples", "tuning", LAHMAN_DB, {}, [(e.id, e.question, e.sql) for e in lahman_pairs])]
    if any(it.left_out != 1 for it in sets[1].items):
        raise SystemExit("lahman-examples: leave-one-out did not remove exactly one pair per question")
    if not tuning_only:
        lah, _ = load_questions(ROOT / "bench" / "lahman_questions.yaml")
        held, _ = load_questions(ROOT / "bench" / "nba_questions_heldout.yaml")
        sets += [build("lahman", "held-out", LAHMAN_DB, {}, [(q.id, q.question, q.gold_sql) for q in lah]),
                 build("nba-heldout", "held-out", NBA_DB, NBA_OPTIONS,
                       [(q.id, q.question, q.gold_sql) for q in held])]
    return sets


# --------------------------------------------------------------------------- rules
# A rule maps an item to the tables it selects before with_parents, or None (not sure: ask the LLM).
RuleFn = Callable[[Item], "list[str] | None"]


@dataclass
class Rule:
    name: str
    family: str
    complexity: int         # tie-break: simpler first
    fn: RuleFn


def _gap_k(it: Item, r: float, kmax: int) -> int | None:
    sc = [x.score for x in it.ranked]
    for k in range(1, min(kmax, len(sc) - 1) + 1):
        if sc[k - 1] > 0 and sc[k - 1] >= r * sc[k]:
            return k
    return None


def _top(it: Item, k: int) -> list[str]:
    return [x.table for x in it.ranked[:k]]


def _ex_tables(it: Item, s: float, first_only: bool = False) -> list[str]:
    found = [ex for ex, sim in it.examples if sim >= s][: 1 if first_only else None]
    return list(dict.fromkeys(t for ex in found for t in ex.tables if t in it.catalog.tables))


def top_rule(k: int) -> Rule:
    return Rule(f"top{k}", "top", 0, lambda it: _top(it, k))


def gap_rule(r: float, kmax: int) -> Rule:
    def fn(it):
        k = _gap_k(it, r, kmax)
        return _top(it, k) if k else None
    return Rule(f"gap(r={r:g},kmax={kmax})", "gap", 1, fn)


def ex_rule(s: float) -> Rule:
    return Rule(f"ex(s={s:g})", "ex", 1, lambda it: _ex_tables(it, s, first_only=True) or None)


def gap_or_ex(r: float, kmax: int, s: float) -> Rule:
    g, e = gap_rule(r, kmax).fn, ex_rule(s).fn
    return Rule(f"ex(s={s:g})|gap(r={r:g},kmax={kmax})", "gap|ex", 2, lambda it: e(it) or g(it))


def gap_and_ex(r: float, kmax: int, s: float) -> Rule:
    def fn(it):
        k = _gap_k(it, r, kmax)
        if not k:
            return None
        top = _top(it, k)
        return top if set(_ex_tables(it, s)) <= set(top) else None
    return Rule(f"gap(r={r:g},kmax={kmax})&ex(s={s:g})", "gap&ex", 2, fn)


def gap_plus_ex(r: float, kmax: int, s: float) -> Rule:
    def fn(it):
        k = _gap_k(it, r, kmax)
        return list(dict.fromkeys(_top(it, k) + _ex_tables(it, s))) if k else None
    return Rule(f"gap(r={r:g},kmax={kmax})+ex(s={s:g})", "gap+ex", 2, fn)


RATIOS = (1.2, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0)
KMAX = (1, 2, 3, 4)
SIMS = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def band_rule(f: float, n: int, pad: int = 0) -> Rule:
    def fn(it):
        top = it.ranked[0].score if it.ranked else 0.0
        m = sum(1 for x in it.ranked if x.score > f * top)
        return _top(it, m + pad) if 0 < m <= n else None
    name = f"band(f={f:g},n={n}" + (f",pad={pad})" if pad else ")")
    return Rule(name, "band+pad" if pad else "band", 2 if pad else 1, fn)


FRACTIONS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
BAND_N = (1, 2, 3, 4, 5, 6)
PADS = (0, 1, 2)


def candidates() -> list[Rule]:
    rules = [top_rule(k) for k in (1, 2, 3, 4)]
    rules += [gap_rule(r, k) for r in RATIOS for k in KMAX]
    rules += [band_rule(f, n, p) for f in FRACTIONS for n in BAND_N for p in PADS]
    rules += [ex_rule(s) for s in SIMS]
    for r in RATIOS:
        for k in KMAX:
            for s in SIMS:
                rules += [gap_or_ex(r, k, s), gap_and_ex(r, k, s), gap_plus_ex(r, k, s)]
    return rules


# --------------------------------------------------------------------------- evaluation
def select(rule: Rule, it: Item) -> list[str] | None:
    chosen = rule.fn(it)
    return with_parents(it.catalog, list(dict.fromkeys(chosen))) if chosen else None


def covers(selection: list[str] | None, gold: list[str]) -> bool:
    return selection is not None and {g.lower() for g in gold} <= {t.lower() for t in selection}


def score(rule: Rule, items: list[Item]) -> dict:
    sel = [select(rule, it) for it in items]
    fired = [(s, it) for s, it in zip(sel, items) if s is not None]
    ok = sum(covers(s, it.gold) for s, it in fired)
    return {"questions": len(items), "fired": len(fired), "covered": ok,
            "fire_rate": len(fired) / len(items) if items else 0.0,
            "coverage": ok / len(fired) if fired else None,
            "mean_tables": statistics.mean(len(s) for s, _ in fired) if fired else None}


def shortlist_recall(items: list[Item]) -> dict:
    all8 = [covers(_top(it, SHORTLIST_K), it.gold) for it in items]
    rec = [len({g for g in it.gold} & set(_top(it, SHORTLIST_K))) / len(it.gold) for it in items]
    return {"all@8": statistics.mean(all8), "recall@8": statistics.mean(rec)}


def evaluate(rules: list[Rule], tuning: list[QSet]) -> list[dict]:
    pooled = [it for qs in tuning for it in qs.items]
    rows = []
    for rule in rules:
        row = {"rule": rule.name, "family": rule.family, "complexity": rule.complexity,
               "pooled": score(rule, pooled), "sets": {qs.name: score(rule, qs.items) for qs in tuning}}
        rows.append(row)
    return rows


def eligible(row: dict) -> bool:
    p = row["pooled"]
    return (p["fired"] > 0 and p["coverage"] >= TARGET and p["mean_tables"] <= MAX_MEAN_TABLES
            and all(s["coverage"] is None or s["coverage"] >= TARGET_EACH for s in row["sets"].values()))


def _params(name: str) -> dict[str, str]:
    inner = name[name.index("(") + 1:name.rindex(")")] if "(" in name else ""
    return dict(kv.split("=") for kv in inner.split(",") if "=" in kv)


def _neighbour(a: str, b: str) -> bool:
    """Same family and parameter names, exactly one parameter value different."""
    pa, pb = _params(a), _params(b)
    return a.split("(")[0] == b.split("(")[0] and pa.keys() == pb.keys() and sum(pa[k] != pb[k] for k in pa) == 1


def criterion() -> str:
    return (f"fired questions fully covered >= {pct(TARGET)}% pooled (>= {pct(TARGET_EACH)}% per set), "
            f"mean selected tables <= {MAX_MEAN_TABLES:g}")


def order_key(row: dict):
    p = row["pooled"]
    return (-p["fired"], row["complexity"], p["mean_tables"], row["rule"])


def pick(rows: list[dict]) -> dict:
    ok = sorted((r for r in rows if eligible(r) and r["family"] != "top"), key=order_key)
    if not ok:
        raise SystemExit("no candidate rule reaches the tuning target")
    return ok[0]


def per_question(rule: Rule, qs: QSet, recorded: dict | None) -> list[dict]:
    out = []
    for it in qs.items:
        sel = select(rule, it)
        row = {"id": it.id, "question": it.question, "gold": it.gold, "fired": sel is not None,
               "selection": sel, "covered": covers(sel, it.gold) if sel is not None else None,
               "top": [[x.table, round(x.score, 2)] for x in it.ranked[:4]],
               "examples": [[ex.id, sim, ex.tables] for ex, sim in it.examples]}
        if recorded is not None:
            llm = recorded.get(it.id)
            row["llm_tables"] = llm
            row["llm_covered"] = covers(llm, it.gold) if llm else None
        out.append(row)
    return out


def load_recorded(path: Path) -> dict[str, list[str]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["id"]: r.get("tables") or [] for r in rows}


def compare(rows: list[dict]) -> dict:
    """The rule vs the recorded LLM choice: on all questions, and on those where the rule fires."""
    fired = [r for r in rows if r["fired"]]
    has = [r for r in rows if r.get("llm_tables")]
    fired_has = [r for r in fired if r.get("llm_tables")]

    def share(xs, key):
        return sum(1 for x in xs if x[key]) / len(xs) if xs else None

    return {"questions": len(rows), "fired": len(fired), "fire_rate": len(fired) / len(rows),
            "rule_coverage_fired": share(fired, "covered"),
            "llm_coverage_fired": share(fired_has, "llm_covered"), "llm_records_fired": len(fired_has),
            "llm_coverage_all": share(has, "llm_covered"), "llm_records": len(has),
            "rule_mean_tables_fired": statistics.mean(len(r["selection"]) for r in fired) if fired else None,
            "llm_mean_tables_fired": (statistics.mean(len(r["llm_tables"]) for r in fired_has)
                                      if fired_has else None),
            "llm_mean_tables_all": statistics.mean(len(r["llm_tables"]) for r in has) if has else None,
            "rule_misses": [r["id"] for r in fired if not r["covered"]],
            "llm_misses_fired": [r["id"] for r in fired_has if not r["llm_covered"]]}


# --------------------------------------------------------------------------- output
def pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def num(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def candidates_md(rows: list[dict], names: list[str]) -> str:
    head = "| rule | " + " | ".join(f"{n} fired | {n} covered | {n} tables" for n in ["pooled", *names]) + " |"
    out = [head, "|" + "---|" * (1 + 3 * (1 + len(names)))]
    for r in rows:
        cells = []
        for s in [r["pooled"], *(r["sets"][n] for n in names)]:
            cells += [f"{s['fired']}/{s['questions']} ({pct(s['fire_rate'])}%)",
                      f"{s['covered']}/{s['fired']} ({pct(s['coverage'])}%)", num(s["mean_tables"])]
        out.append(f"| {r['rule']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def heldout_md(comp: dict[str, dict]) -> str:
    out = ["| set | fired | rule: fired fully covered | LLM (recorded): fired fully covered | "
           "LLM: all fully covered | rule tables (fired) | LLM tables (fired) | rule misses | LLM misses (fired) |",
           "|" + "---|" * 9]
    for name, c in comp.items():
        n_fired_llm = c["llm_records_fired"]
        out.append(f"| {name} | {c['fired']}/{c['questions']} ({pct(c['fire_rate'])}%) | "
                   f"{round((c['rule_coverage_fired'] or 0) * c['fired'])}/{c['fired']} "
                   f"({pct(c['rule_coverage_fired'])}%) | "
                   f"{round((c['llm_coverage_fired'] or 0) * n_fired_llm)}/{n_fired_llm} "
                   f"({pct(c['llm_coverage_fired'])}%) | "
                   f"{round((c['llm_coverage_all'] or 0) * c['llm_records'])}/{c['llm_records']} "
                   f"({pct(c['llm_coverage_all'])}%) | {num(c['rule_mean_tables_fired'])} | "
                   f"{num(c['llm_mean_tables_fired'])} | {', '.join(c['rule_misses']) or '-'} | "
                   f"{', '.join(c['llm_misses_fired']) or '-'} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Rules for skipping TableSelector's LLM call, measured without an LLM.")
    ap.add_argument("--out", help="write the results as JSON here (e.g. docs/results/table_skip/table_skip.json)")
    ap.add_argument("--md", help="write a short Markdown report here")
    ap.add_argument("--tuning-only", action="store_true", help="leave out the held-out sets (for choosing the rule)")
    ap.add_argument("--top", type=int, default=15, help="candidate rules to show (default 15)")
    ap.add_argument("--verbose", action="store_true", help="print the chosen rule's fired questions")
    args = ap.parse_args(argv)

    sets = question_sets(args.tuning_only)
    tuning = [qs for qs in sets if qs.role == "tuning"]
    heldout = [qs for qs in sets if qs.role == "held-out"]
    names = [qs.name for qs in tuning]
    rules = candidates()
    by_name = {r.name: r for r in rules}
    rows = evaluate(rules, tuning)
    auto = pick(rows)
    chosen_name = CHOSEN or auto["rule"]
    chosen = by_name[chosen_name]
    chosen_row = next(r for r in rows if r["rule"] == chosen_name)

    shown = sorted((r for r in rows if eligible(r) and r["family"] != "top"), key=order_key)[: args.top]
    # Per family: its pick when it has an eligible rule, else its best-covering rule (then most firing).
    best_by_family = {}
    for r in sorted(rows, key=lambda r: (not eligible(r), 0 if eligible(r) else -(r["pooled"]["coverage"] or 0),
                                         *order_key(r))):
        if r["family"] != "top":
            best_by_family.setdefault(r["family"], r)
    refs = [r for r in rows if r["family"] == "top"]
    family_rows = [{**r, "rule": r["rule"] + ("" if eligible(r) else " (not eligible)")}
                   for r in best_by_family.values()] + refs
    # Sensitivity: the chosen family around the chosen parameters.
    sens = [r for r in rows if r["family"] == chosen.family and r["rule"] != chosen_name
            and _neighbour(r["rule"], chosen_name)]
    sens = sorted(sens + [chosen_row], key=lambda r: r["rule"])
    baseline = {qs.name: shortlist_recall(qs.items) for qs in sets}

    print("## Sets\n")
    for qs in sets:
        b = baseline[qs.name]
        print(f"- {qs.name} ({qs.role}): {len(qs.items)} questions, {qs.tables} tables, {qs.pairs} example pairs; "
              f"top-8 shortlist: all gold in it {pct(b['all@8'])}%, recall@8 {pct(b['recall@8'])}%")
    print(f"\n## Tuning: {criterion()} ({sum(eligible(r) for r in rows if r['family'] != 'top')} of "
          f"{len(rules) - 4} candidates), most firing first\n")
    print(candidates_md(shown, names))
    print("\n## Tuning: best rule per family (eligible, else best covering), and the always-firing references\n")
    print(candidates_md(family_rows, names))
    print(f"\n## Tuning: {chosen_name} and its neighbours (one parameter changed)\n")
    print(candidates_md(sens, names))
    print(f"\nAutomatic pick: {auto['rule']}; CHOSEN: {chosen_name}")

    doc_sets = {qs.name: {"role": qs.role, "questions": len(qs.items), "tables": qs.tables, "pairs": qs.pairs,
                          "left_out_pairs": sum(it.left_out for it in qs.items),
                          "shortlist": baseline[qs.name]} for qs in sets}
    detail = {qs.name: per_question(chosen, qs, None) for qs in tuning}
    comp = {}
    if heldout:
        held_rows = {qs.name: score(chosen, qs.items) for qs in heldout}
        for qs in heldout:
            detail[qs.name] = per_question(chosen, qs, load_recorded(RECORDED[qs.name]))
            comp[qs.name] = compare(detail[qs.name])
        comp["both"] = compare([r for qs in heldout for r in detail[qs.name]])
        print(f"\n## Held-out: {chosen_name} vs the recorded LLM choices\n")
        print(heldout_md(comp))
    else:
        held_rows = {}
    if args.verbose:
        for name, rows_q in detail.items():
            print(f"\n### {name}: fired questions of {chosen_name}\n")
            for r in rows_q:
                if r["fired"]:
                    llm = f" LLM {r['llm_tables']}" if "llm_tables" in r else ""
                    print(f"- {'ok  ' if r['covered'] else 'MISS'} {r['id']} gold {r['gold']} -> {r['selection']}"
                          f"{llm}  top {r['top'][:3]}")

    md = ["# Skipping TableSelector's LLM call when the pre-ranker is sure",
          "",
          "Generated by `bench/table_skip.py` (no LLM; the script's docstring defines the rules). "
          f"Chosen on the tuning sets: **{chosen_name}** (eligible: {criterion()}; then the most firing, "
          "the simplest, the fewest tables).",
          "",
          "## Sets (top-8 shortlist = what the LLM chooses from)",
          "",
          *[f"- {n} ({d['role']}): {d['questions']} questions, {d['tables']} tables, {d['pairs']} pairs; "
            f"all gold in top 8: {pct(d['shortlist']['all@8'])}%" for n, d in doc_sets.items()],
          "",
          "## Tuning: top candidates",
          "",
          candidates_md(shown[:8], names),
          "",
          "## Tuning: best rule per family (eligible, else best covering), and always-firing references",
          "",
          candidates_md(family_rows, names),
          "",
          f"## Tuning: {chosen_name} and its neighbours (one parameter changed)",
          "",
          candidates_md(sens, names)]
    if comp:
        shared_misses = sorted(set(comp["both"]["rule_misses"]) & set(comp["both"]["llm_misses_fired"]))
        md += ["", f"## Held-out: {chosen_name}, evaluated once, vs the recorded LLM choices", "",
               heldout_md(comp), "",
               "LLM columns: `tables` of docs/results/lahman/taught.jsonl and "
               "docs/results/nba_ablation/nba_questions_heldout-semantic.jsonl (after with_parents). "
               "Rule misses the recorded LLM choice missed too: "
               f"{', '.join(shared_misses) or 'none'}."]
    md += ["", "Rerun: `.venv/bin/python bench/table_skip.py --out docs/results/table_skip/table_skip.json "
               "--md docs/results/table_skip/table_skip.md`"]

    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        doc = {"benchmark": "table_skip",
               "command": "python bench/table_skip.py " + " ".join(sys.argv[1:] if argv is None else argv),
               "target": {"pooled": TARGET, "each": TARGET_EACH}, "sets": doc_sets,
               "chosen": chosen_name, "automatic_pick": auto["rule"],
               "chosen_tuning": {k: chosen_row[k] for k in ("pooled", "sets")},
               "chosen_heldout": held_rows, "heldout_vs_llm": comp,
               "candidate_columns": ["rule", "eligible"] + [f"{n} {c}" for n in ["pooled", *names]
                                                            for c in ("fired", "covered", "mean_tables")],
               "candidates": "@CANDIDATES@", "per_question": detail,
               "grid": {"ratios": RATIOS, "kmax": KMAX, "similarities": SIMS, "fractions": FRACTIONS,
                        "band_n": BAND_N, "pads": PADS},
               "environment": {"python": platform.python_version(), "duckdb": duckdb.__version__,
                               "machine": platform.machine(), "cpus": os.cpu_count()}}
        # One line per candidate rule (785 of them), most firing eligible ones first.
        cand = [[r["rule"], eligible(r)] + [x for sc in [r["pooled"], *(r["sets"][n] for n in names)]
                                            for x in (sc["fired"], sc["covered"],
                                                      None if sc["mean_tables"] is None
                                                      else round(sc["mean_tables"], 3))]
                for r in sorted(rows, key=lambda r: (not eligible(r), *order_key(r)))]
        text = json.dumps(doc, indent=1, ensure_ascii=False)
        text = text.replace('"@CANDIDATES@"', "[\n  " + ",\n  ".join(json.dumps(c) for c in cand) + "\n ]")
        out.write_text(text + "\n")
        print(f"\nwrote {out}")
    if args.md:
        p = Path(args.md)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("\n".join(md) + "\n")
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
