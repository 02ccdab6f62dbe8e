"""Deterministic table pre-ranking for schema linking, without an LLM.

A table scores from
- question words found in its name (strong), its column names, and its comments/descriptions, each
  weighted by how rare the word is across the catalog (IDF), with light stemming and joined bigrams
  ("home runs" also matches "homeruns");
- literal values from the question found among its columns' distinct values ("Lakers" →
  ``team.nickname``), strongest of all;
- a small bonus for tables joined by a foreign key to a strong candidate (bridge tables).

``keep_columns`` chooses the columns of a wide table worth showing the model; ``sure_tables`` says
when the ranking alone can choose (TableSelector then skips its LLM call), and ``with_parents`` adds
the tables the chosen ones reference.

See each table's score and why for a question (``explain``)::

    duckask schema --db PATH --rank "question" [--top 8]
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

from duckask.utils.schema.catalog import Catalog, per_catalog
from duckask.utils.schema.terms import bigram_parts, question_terms, split_ident, stem, text_terms
from duckask.utils.schema.values import ValueMatch, match_flags, match_values


@dataclass
class Ranked:
    table: str
    score: float
    reasons: list[str] = field(default_factory=list)


@per_catalog
def _term_index(catalog: Catalog) -> tuple[dict[str, dict[str, set[str]]], dict[str, int]]:
    """Per table: the terms of its name, column names and descriptions; and each term's table count.
    Built once per catalog object (it is most of the ranking cost on wide catalogs)."""
    docs: dict[str, dict[str, set[str]]] = {}
    df: dict[str, int] = defaultdict(int)
    for t in catalog.tables.values():
        # A synonym from the semantic file counts as much as the name it stands for.
        name_terms = set(split_ident(t.name)) | {w for s in t.synonyms for w in text_terms(s)}
        col_terms = {w for c in t.columns for w in split_ident(c.name)}
        col_terms |= {stem("".join(split_ident(c.name))) for c in t.columns}
        col_terms |= {w for c in t.columns for s in c.synonyms for w in text_terms(s)}
        doc_terms = {w for text in [t.comment] + [c.comment for c in t.columns] for w in text_terms(text)}
        docs[t.name] = {"name": name_terms, "col": col_terms, "doc": doc_terms}
        for w in name_terms | col_terms | doc_terms:
            df[w] += 1
    return docs, dict(df)


def rank_tables(catalog: Catalog, question: str, value_matches: list[ValueMatch] | None = None) -> list[Ranked]:
    """All tables, best first, with the reasons for their scores."""
    terms = question_terms(question)
    bigrams = bigram_parts(question)
    n = max(1, len(catalog.tables))
    docs, df = _term_index(catalog)
    concept_parts = {w for b, parts in bigrams.items() if df.get(b) for w in parts}
    ranked: dict[str, Ranked] = {}
    for t in catalog.tables.values():
        d = docs[t.name]
        r = Ranked(t.name, 0.0)
        for w in set(terms):
            idf = math.log(1 + n / (1 + df.get(w, 0)))
            if w in bigrams:
                idf *= 2    # "home runs" as one concept is stronger evidence than "home" alone
            elif w in concept_parts:
                idf *= 0.5  # ...and then "home" on its own counts less
            if w in d["name"]:
                r.score += 3 * idf
                r.reasons.append(f"name~{w}")
            elif w in d["col"]:
                r.score += 1.5 * idf
                r.reasons.append(f"column~{w}")
            elif w in d["doc"]:
                r.score += 0.75 * idf
                r.reasons.append(f"doc~{w}")
        ranked[t.name] = r
    credited: set[tuple[str, str]] = set()
    for vm in value_matches if value_matches is not None else match_values(catalog, question):
        hit = ranked.get(vm.table)
        if hit is not None and (vm.table, vm.phrase.lower()) not in credited:
            credited.add((vm.table, vm.phrase.lower()))
            hit.score += 1.0 if vm.value.replace(".", "").replace("-", "").isdigit() else 4.0
            hit.reasons.append(f"value {vm.column}='{vm.value}'")
    # Bridge bonus: a table linked by a foreign key to one of the top-3 gets a share of its score.
    top = sorted(ranked.values(), key=lambda r: -r.score)[:3]
    top_names = {r.table for r in top if r.score > 0}
    for fk in catalog.foreign_links():
        for x, y in ((fk.table, fk.ref_table), (fk.ref_table, fk.table)):
            if x in top_names and y in ranked and y not in top_names:
                ranked[y].score += 0.25 * ranked[x].score
                ranked[y].reasons.append(f"joins {x}")
    return sorted(ranked.values(), key=lambda r: (-r.score, r.table))


def stable_order(catalog: Catalog, tables: list[str], example_tables: list[list[str]]) -> list[str]:
    """``tables`` in an order that does not depend on the question: the tables the database's example
    pairs use most first, then the most referenced (``people`` before ``batting``), then by name. Two
    questions whose tables overlap then share the start of their schema text, which the embedded
    model's prompt states reuse."""
    use: dict[str, int] = defaultdict(int)
    for names in example_tables:
        for t in set(names):
            use[t] += 1
    refs: dict[str, int] = defaultdict(int)
    for fk in catalog.foreign_links():
        if fk.ref_table != fk.table:
            refs[fk.ref_table] += 1
    return sorted(tables, key=lambda t: (-use[t], -refs[t], t))


_NAME_LIKE = re.compile(r"(^|_)(name|title|full_name|first_name|last_name|name_first|name_last)$", re.I)


def keep_columns(catalog: Catalog, tables: list[str], question: str, value_matches: list[ValueMatch] | None = None,
                 max_columns: int = 12, example_columns: set[str] | None = None) -> dict[str, list[str]]:
    """For each table wider than ``max_columns``: the columns worth showing the model, in table order.

    Kept first: keys (primary, foreign, and columns other chosen tables reference), columns whose
    name or description matches a question word, columns holding a value from the question, columns
    the retrieved example pairs use (``example_columns``, lower-case names), and name/title columns;
    then the leftmost others until ``max_columns``.
    """
    used = example_columns or set()
    terms = set(question_terms(question))
    valued = {(v.table, v.column) for v in value_matches or []}
    referenced = {(fk.ref_table, fk.ref_column) for fk in catalog.foreign_links() if fk.table in tables}
    out: dict[str, list[str]] = {}
    for name in tables:
        t = catalog.tables[name]
        if len(t.columns) <= max_columns:
            continue
        scored = []
        for i, c in enumerate(t.columns):
            words = set(split_ident(c.name)) | {stem("".join(split_ident(c.name)))} | set(split_ident(c.comment))
            words |= {w for s in c.synonyms for w in text_terms(s)}
            score = 0.0
            if c.pk or c.ref or (name, c.name) in referenced:
                score += 4
            if (name, c.name) in valued:
                score += 4
            if c.name.lower() in used:
                score += 3
            score += 2 * len(words & terms)
            if _NAME_LIKE.search(c.name):
                score += 1.5
            scored.append((-score, i, c.name))
        keep = {n for _, _, n in sorted(scored)[:max_columns]}
        out[name] = [c.name for c in t.columns if c.name in keep]
    return out


MAX_TABLES = 6



def choice_without_llm(cat, ranked: list, settings) -> tuple[list[str], str] | None:
    """TableSelector's choice when no model is asked (``warm`` predicts prompts with it too): (tables, how):
    every candidate of a small schema (``all``: ``table_llm_threshold`` or fewer), or the sure choice with its
    parents (``ranker``: ``sure_tables``); None when the model is to pick from the shortlist."""
    if len(ranked) <= settings.table_llm_threshold:
        return [r.table for r in ranked], "all"
    sure = sure_tables(ranked, settings.table_sure_band)
    return (with_parents(cat, sure), "ranker") if sure else None


def with_parents(cat, chosen: list[str]) -> list[str]:
    """Add the tables the chosen ones reference (one hop), e.g. people for batting, so that names
    behind ids are reachable; at most MAX_TABLES in all."""
    out = list(chosen)
    for fk in cat.foreign_links():
        if fk.table in chosen and fk.ref_table not in out and len(out) < MAX_TABLES:
            out.append(fk.ref_table)
    return out


#: The pre-ranker is sure when at most this many tables score over ``table_sure_band`` x the top score.
SURE_MAX = 5


def sure_tables(ranked: list, band: float) -> list[str] | None:
    """The tables scoring more than ``band`` times the top score, when they are 1 to ``SURE_MAX``;
    else None (the LLM chooses)."""
    if band <= 0 or not ranked or ranked[0].score <= 0:
        return None
    top = [r.table for r in ranked if r.score > band * ranked[0].score]
    return top if 1 <= len(top) <= SURE_MAX else None



def explain(catalog: Catalog, question: str, k: int = 8) -> str:
    """The values a question names and the ``k`` best tables with their scores and reasons, one a line."""
    vm = match_values(catalog, question)
    lines = [f"value: {m.table}.{m.column} = {m.value!r} (from {m.phrase!r})"
             for m in vm + match_flags(catalog, question)]
    lines += [f"{r.score:6.2f}  {r.table}  {', '.join(r.reasons[:6])}" for r in rank_tables(catalog, question, vm)[:k]]
    return "\n".join(lines)
