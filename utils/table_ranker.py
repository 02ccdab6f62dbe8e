"""Deterministic table pre-ranking for schema linking, without an LLM.

A table scores from
- question words found in its name (strong), its column names, and its comments/descriptions, each
  weighted by how rare the word is across the catalog (IDF), with light stemming and joined bigrams
  ("home runs" also matches "homeruns");
- literal values from the question found among its columns' distinct values ("Lakers" →
  ``team.nickname``), strongest of all;
- a small bonus for tables joined by a foreign key to a strong candidate (bridge tables).

``match_values`` also returns the literal matches, which SQLGenerator shows the model.

Run on its own::

    python -m duckask.utils.table_ranker --db PATH "question" [-k 8]
"""
from __future__ import annotations

import argparse
import functools
import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

import snowballstemmer

from duckask.utils.schema import Catalog, fold

_STEMMER = snowballstemmer.stemmer("english")

STOP = set("""a an the of in on at to for from by with and or not no is are was were be been being do does did
what which who whom whose when where why how many much all any each every list show give tell me find
return name names their its it this that these those than then there have has had as into your our
most least top more less number count total average avg sum max min maximum minimum highest lowest
order ordered sort sorted by descending ascending asc desc distinct different unique also both
""".split())

_WORD = re.compile(r"[a-z0-9]+")


#: Irregular forms the stemmer leaves apart from their base word ("won the most games" ~ wins).
IRREGULAR = {"won": "win", "lost": "loss", "lose": "loss", "best": "good", "better": "good", "worst": "bad",
             "worse": "bad", "men": "man", "women": "woman", "children": "child", "people": "person"}


@functools.lru_cache(maxsize=65536)
def _stem(w: str) -> str:
    """Snowball (Porter 2) English stem, so that "drafted" ~ draft, "scoring" ~ score, "wins" ~ win."""
    return _STEMMER.stemWord(IRREGULAR.get(w, w))


def split_ident(name: str) -> list[str]:
    """'teamID' / 'team_id' / 'TeamsFranchises' -> ['team', 'id'] etc. (lower-case, stemmed)."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [_stem(w) for w in _WORD.findall(spaced.lower())]


def question_terms(question: str) -> list[str]:
    words = [w for w in _WORD.findall(question.lower())]
    terms = [_stem(w) for w in words if w not in STOP and len(w) > 1]
    # joined bigrams catch "home runs" vs "homeruns", "first name" vs "firstname"
    terms += [_stem(a + b) for a, b in zip(words, words[1:]) if a not in STOP and b not in STOP]
    return terms


def _doc_terms(text: str) -> set[str]:
    """Stemmed words of a description, and its adjacent pairs joined, as question bigrams are
    ("true shooting percentage" matches the question's "true shooting")."""
    if not text:
        return set()
    words = _WORD.findall(text.lower())
    return {_stem(w) for w in words} | {_stem(a + b) for a, b in zip(words, words[1:])}


def _bigram_parts(question: str) -> dict[str, set[str]]:
    """{joined bigram: its two stemmed words}, so a bigram match can outrank its parts."""
    words = _WORD.findall(question.lower())
    return {_stem(a + b): {_stem(a), _stem(b)} for a, b in zip(words, words[1:])
            if a not in STOP and b not in STOP}


@dataclass
class ValueMatch:
    table: str
    column: str
    value: str
    phrase: str


@dataclass
class Ranked:
    table: str
    score: float
    reasons: list[str] = field(default_factory=list)


def match_values(catalog: Catalog, question: str, limit: int = 40) -> list[ValueMatch]:
    """Literal values in the question (quoted strings and 1-4 word phrases) found in the data."""
    text = question.strip()
    phrases: list[str] = [m.group(1) or m.group(2) for m in re.finditer(r"'([^']+)'|\"([^\"]+)\"", text)]
    tokens = re.findall(r"[\w\-\.&']+", text)
    tokens = [t.strip(".'") for t in tokens]
    for n in (4, 3, 2, 1):
        for i in range(len(tokens) - n + 1):
            gram = tokens[i:i + n]
            # A lone word counts only when it looks like a name or a code ("Lakers", "JFK", "2019"),
            # not a common word that happens to be stored somewhere ("team", "total").
            if n == 1 and (gram[0].lower() in STOP or len(gram[0]) < 3 or i == 0
                           or not (gram[0][0].isupper() or any(ch.isdigit() for ch in gram[0]))):
                continue
            if n > 1 and all(w.lower() in STOP for w in gram):
                continue
            phrases.append(" ".join(gram))
    out: list[ValueMatch] = []
    seen: set[tuple[str, str, str]] = set()
    covered: set[str] = set()
    for ph in phrases:
        low = fold(ph)
        if any(low in c for c in covered):   # a longer phrase already matched this text
            continue
        for table, column, value in catalog.values.get(low, []):
            key = (table, column, value)
            if key not in seen:
                seen.add(key)
                out.append(ValueMatch(table, column, value, ph))
                covered.add(low)
        if len(out) >= limit:
            break
    # Prefer values matched by longer phrases, and few columns per phrase.
    return out[: limit]


#: The "yes" value of a two-valued flag column, by its pair of stored values (lower-case).
_FLAG_YES = {frozenset(p): y for p, y in ((("t", "f"), "t"), (("y", "n"), "y"), (("1", "0"), "1"),
                                          (("yes", "no"), "yes"), (("true", "false"), "true"))}
_FLAG_WORDS = {"is", "has", "yn", "flag"}


_FLAGS: dict[int, tuple[Catalog, list[tuple[str, str, str, set[str]]]]] = {}


def _flag_columns(catalog: Catalog) -> list[tuple[str, str, str, set[str]]]:
    """(table, column, its "yes" value as stored, its name words) for every flag column; built
    once per catalog object."""
    hit = _FLAGS.get(id(catalog))
    if hit is not None and hit[0] is catalog:
        return hit[1]
    out = []
    for t, tb in catalog.tables.items():
        for c in tb.columns:
            words = split_ident(c.name)
            boolean = c.type.upper() == "BOOLEAN"
            if not boolean and not (_FLAG_WORDS & set(words)):
                continue
            yes = "true" if boolean else _FLAG_YES.get(frozenset(str(v).lower() for v in c.samples))
            named = {w for w in words if w not in _FLAG_WORDS}
            if yes is not None and named:
                value = next((str(v) for v in c.samples if str(v).lower() == yes), yes)
                out.append((t, c.name, value, named))
    if len(_FLAGS) > 32:
        _FLAGS.clear()
    _FLAGS[id(catalog)] = (catalog, out)
    return out


def match_flags(catalog: Catalog, question: str) -> list[ValueMatch]:
    """Yes/no flag columns the question names ("official languages" -> countrylanguage.IsOfficial
    = 'T', "dogs who have been abandoned" -> Dogs.abandoned_yn = 1). A flag column is named like
    one (is_/has_ prefix, _yn/_flag suffix) or is BOOLEAN, and holds just two values such as T/F,
    Y/N, 1/0. The model otherwise rarely filters on the flag: it sees only the column's name."""
    terms = set(question_terms(question))
    return [ValueMatch(t, c, value, " ".join(sorted(named)))
            for t, c, value, named in _flag_columns(catalog) if named <= terms]


_INDEX: dict[int, tuple[Catalog, dict, dict]] = {}


def _term_index(catalog: Catalog) -> tuple[dict[str, dict[str, set[str]]], dict[str, int]]:
    """Per table: the terms of its name, column names and descriptions; and each term's table count.
    Built once per catalog object (it is most of the ranking cost on wide catalogs)."""
    hit = _INDEX.get(id(catalog))
    if hit is not None and hit[0] is catalog:
        return hit[1], hit[2]
    docs: dict[str, dict[str, set[str]]] = {}
    df: dict[str, int] = defaultdict(int)
    for t in catalog.tables.values():
        name_terms = set(split_ident(t.name))
        col_terms = {w for c in t.columns for w in split_ident(c.name)}
        col_terms |= {_stem("".join(split_ident(c.name))) for c in t.columns}
        doc_terms = {w for text in [t.comment] + [c.comment for c in t.columns] for w in _doc_terms(text)}
        docs[t.name] = {"name": name_terms, "col": col_terms, "doc": doc_terms}
        for w in name_terms | col_terms | doc_terms:
            df[w] += 1
    if len(_INDEX) > 32:
        _INDEX.clear()
    _INDEX[id(catalog)] = (catalog, docs, dict(df))
    return docs, dict(df)


def rank_tables(catalog: Catalog, question: str, value_matches: list[ValueMatch] | None = None) -> list[Ranked]:
    """All tables, best first, with the reasons for their scores."""
    terms = question_terms(question)
    bigrams = _bigram_parts(question)
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
        r = ranked.get(vm.table)
        if r is not None and (vm.table, vm.phrase.lower()) not in credited:
            credited.add((vm.table, vm.phrase.lower()))
            r.score += 1.0 if vm.value.replace(".", "").replace("-", "").isdigit() else 4.0
            r.reasons.append(f"value {vm.column}='{vm.value}'")
    # Bridge bonus: a table linked by a foreign key to one of the top-3 gets a share of its score.
    top = sorted(ranked.values(), key=lambda r: -r.score)[:3]
    top_names = {r.table for r in top if r.score > 0}
    for a, _, b, _ in catalog.foreign_links():
        for x, y in ((a, b), (b, a)):
            if x in top_names and y in ranked and y not in top_names:
                ranked[y].score += 0.25 * ranked[x].score
                ranked[y].reasons.append(f"joins {x}")
    return sorted(ranked.values(), key=lambda r: (-r.score, r.table))


_NAME_LIKE = re.compile(r"(^|_)(name|title|full_name|first_name|last_name|name_first|name_last)$", re.I)


def keep_columns(catalog: Catalog, tables: list[str], question: str, value_matches: list[ValueMatch] | None = None,
                 max_columns: int = 12) -> dict[str, list[str]]:
    """For each table wider than ``max_columns``: the columns worth showing the model, in table order.

    Kept first: keys (primary, foreign, and columns other chosen tables reference), columns whose
    name or description matches a question word, columns holding a value from the question, and
    name/title columns; then the leftmost others until ``max_columns``.
    """
    terms = set(question_terms(question))
    valued = {(v.table, v.column) for v in value_matches or []}
    referenced = {(b, bc) for a, _, b, bc in catalog.foreign_links() if a in tables}
    out: dict[str, list[str]] = {}
    for name in tables:
        t = catalog.tables[name]
        if len(t.columns) <= max_columns:
            continue
        scored = []
        for i, c in enumerate(t.columns):
            words = set(split_ident(c.name)) | {_stem("".join(split_ident(c.name)))} | set(split_ident(c.comment))
            score = 0.0
            if c.pk or c.ref or (name, c.name) in referenced:
                score += 4
            if (name, c.name) in valued:
                score += 4
            score += 2 * len(words & terms)
            if _NAME_LIKE.search(c.name):
                score += 1.5
            scored.append((-score, i, c.name))
        keep = {n for _, _, n in sorted(scored)[:max_columns]}
        out[name] = [c.name for c in t.columns if c.name in keep]
    return out


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.schema import get_catalog

    ap = argparse.ArgumentParser(description="Rank a database's tables for a question (no LLM).")
    ap.add_argument("--db", required=True)
    ap.add_argument("question")
    ap.add_argument("-k", type=int, default=8)
    args = ap.parse_args(argv)
    cat = get_catalog(args.db)
    vm = match_values(cat, args.question)
    for m in vm:
        print(f"value: {m.table}.{m.column} = {m.value!r} (from {m.phrase!r})")
    for r in rank_tables(cat, args.question, vm)[: args.k]:
        print(f"{r.score:6.2f}  {r.table}  {', '.join(r.reasons[:6])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
