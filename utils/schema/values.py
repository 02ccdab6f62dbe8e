"""Values a question names: literal values found in the data ("Lakers" -> ``team.nickname``), and
yes/no flag columns ("official languages" -> ``countrylanguage.IsOfficial = 'T'``). TableSelector
shows them to the model as value hints; literal matches also rank tables.

Run on its own through the ranker, which prints them before the ranking::

    duckask schema --db PATH --rank "question"
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from duckask.utils.schema.catalog import Catalog, fold, is_text, per_catalog
from duckask.utils.schema.terms import STOP, question_terms, split_ident


@dataclass
class ValueMatch:
    table: str
    column: str
    value: str
    phrase: str
    how: str = "equal"      # equal | same (case, accents, plurals aside) | contains (the value holds the phrase)


def hints(values: list[dict]) -> str:
    """Values found in the data as a prompt shows them: ``table.column = 'value'; ...``, and a phrase only part of
    longer values as ``table.column LIKE '%phrase%' (e.g. 'value')``."""
    return "; ".join(f"{v['table']}.{v['column']} LIKE '%{v['phrase']}%' (e.g. '{v['value']}')"
                     if v.get("how") == "contains" else f"{v['table']}.{v['column']} = '{v['value']}'" for v in values)


@per_catalog
def _normal_index(catalog: Catalog) -> tuple[dict[str, list[list[str]]], dict[str, set[str]]]:
    """The catalog's indexed values by their normal form (``value_index.normal``: case, accents, punctuation and
    plural endings aside), and each word of a value of two words or more to those values' normal forms (what
    finds 'University of North Carolina' for "North Carolina" without scanning every value)."""
    from duckask.utils.schema.value_index import normal

    by_normal: dict[str, list[list[str]]] = {}
    by_word: dict[str, set[str]] = {}
    seen: dict[str, str] = {}
    for entries in catalog.values.values():
        for entry in entries:
            n = seen.get(entry[2])
            if n is None:
                n = seen[entry[2]] = normal(entry[2])
            if not n:
                continue
            by_normal.setdefault(n, []).append(entry)
            if " " in n:
                for w in set(n.split()):
                    by_word.setdefault(w, set()).add(n)
    return by_normal, by_word


def _near(catalog: Catalog, phrase: str, n_words: int) -> list[tuple[list[str], str]]:
    """Values a phrase matches once normalised (``same``), or, for a phrase of two words or more, values holding
    it as a run of whole words (``contains``, at most 3)."""
    from duckask.utils.schema.value_index import normal

    by_normal, by_word = _normal_index(catalog)
    key = normal(phrase)
    if not key:
        return []
    found = [(e, "same") for e in by_normal.get(key, [])]
    if not found and n_words >= 2:
        words = key.split()
        pool = set.intersection(*(by_word.get(w, set()) for w in words)) if words else set()
        hits = sorted((v for v in pool if f" {key} " in f" {v} "), key=len)[:3]
        found = [(e, "contains") for v in hits for e in by_normal[v][:1]]
    return found


def match_values(catalog: Catalog, question: str, limit: int = 40) -> list[ValueMatch]:
    """Literal values in the question (quoted strings and 1-4 word phrases) found in the data: as stored (fold),
    else once case, accents and plural endings are set aside, else (a phrase of two words or more) inside longer
    values ("North Carolina" in 'University of North Carolina')."""
    text = question.strip()
    phrases: list[str] = [m.group(1) or m.group(2) for m in re.finditer(r"'([^']+)'|\"([^\"]+)\"", text)]
    tokens = _tokens(text)
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
    first = tokens[0] if tokens else ""
    for ph in phrases:
        low = fold(ph)
        if any(low in c for c in covered):   # a longer phrase already matched this text
            continue
        exact = [(e, "equal") for e in catalog.values.get(low, [])]
        n_words = len(ph.split())
        # Normalised forms only for what looks like a name (a capital, a digit, or several words): "forwards",
        # "North Carolina"; a lone common word stays unmatched, as before.
        words = ph.lower().split()
        named = not _common(ph, first) and words[0] not in STOP and words[-1] not in STOP   # a name, not words
        near = [] if exact or not named else _near(catalog, ph, n_words)
        for (table, column, value), how in exact or near:
            key = (table, column, value)
            if key not in seen:
                seen.add(key)
                out.append(ValueMatch(table, column, value, ph, how))
                covered.add(low)
        if len(out) >= limit:
            break
    # Prefer values matched by longer phrases, and few columns per phrase.
    return out[: limit]


#: The "yes" value of a two-valued flag column, by its pair of stored values (lower-case).
_FLAG_YES = {frozenset(p): y for p, y in ((("t", "f"), "t"), (("y", "n"), "y"), (("1", "0"), "1"),
                                          (("yes", "no"), "yes"), (("true", "false"), "true"))}
_FLAG_WORDS = {"is", "has", "yn", "flag"}


@per_catalog
def _flag_columns(catalog: Catalog) -> list[tuple[str, str, str, set[str]]]:
    """(table, column, its "yes" value as stored, its name words) for every flag column; built
    once per catalog object."""
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
    return out


def match_flags(catalog: Catalog, question: str) -> list[ValueMatch]:
    """Yes/no flag columns the question names ("official languages" -> countrylanguage.IsOfficial
    = 'T', "dogs who have been abandoned" -> Dogs.abandoned_yn = 1). A flag column is named like
    one (is_/has_ prefix, _yn/_flag suffix) or is BOOLEAN, and holds just two values such as T/F,
    Y/N, 1/0. The model otherwise rarely filters on the flag: it sees only the column's name."""
    terms = set(question_terms(question))
    return [ValueMatch(t, c, value, " ".join(sorted(named)))
            for t, c, value, named in _flag_columns(catalog) if named <= terms]



_SUFFIXES = {"jr", "sr", "ii", "iii", "iv"}
#: At most this many columns holding a name's leading part are asked about its rest (one query each).
MAX_NAME_QUERIES = 8
_NAME = re.compile(r"\b([A-Z][\w'\-.]*(?:\s+[A-Z][\w'\-.]*){1,3})")


def _name_phrases(question: str) -> list[str]:
    """Runs of two to four capitalised words ("Rickey Henderson", "Ken Griffey Jr."), the question's first word
    left out when it is a capitalised opener ("Who", "How")."""
    out = []
    for m in _NAME.finditer(question):
        words = [re.sub(r"'s$", "", w) for w in m.group(1).rstrip(".").split()]     # "Henderson's"
        if m.start() == len(question) - len(question.lstrip()) and words[0].lower() in STOP | {"how", "who"}:
            words = words[1:]
        if len(words) >= 2:
            out.append(" ".join(words))
    return out


def whole_names(database, catalog: Catalog, question: str, matches: list[ValueMatch]) -> list[ValueMatch]:
    """Issue 53: a name links to the columns its whole phrase is, before any column that holds one of its words.

    For a capitalised phrase of two to four words that no one column holds whole ("Rickey Henderson"), each split
    into a leading part that an indexed column holds (``people.name_first = 'Rickey'``) and the rest is tried on the
    other text columns of that table, in the rows where the leading part is: the column holding the rest in the
    most such rows (``name_last``, which has too many values to index) links with it, both from the whole phrase.
    The links of the phrase's parts in other columns ('Henderson' as ``birth_city``, ``death_city``,
    ``schools.city``) are dropped. One query a (phrase, table, column), on ``database`` as its reader may read it
    (a refusal links nothing), at most ``MAX_NAME_QUERIES`` a split; none without a database. A phrase one column
    holds whole is left as ``match_values`` linked it."""
    from duckask.utils.db.quoting import quote_ident, quote_literal
    from duckask.utils.schema.value_index import check_read

    out = list(matches)
    for phrase in _name_phrases(question) if database is not None else []:
        if any(fold(m.phrase) == fold(phrase) and m.how != "contains" for m in out):
            continue
        words = phrase.split()
        if len(words) > 2 and fold(words[-1]).rstrip(".") in _SUFFIXES:    # "Ken Griffey Jr.": its own column
            words = words[:-1]
        found = None
        for cut in range(1, len(words)):
            lead, rest = " ".join(words[:cut]), " ".join(words[cut:])
            for table, column, value in catalog.values.get(fold(lead), [])[:MAX_NAME_QUERIES]:
                tb = catalog.tables.get(table)
                others = [c.name for c in tb.columns if c.name != column and is_text(c.type)] if tb else []
                if not others:
                    continue
                same = [f"lower(CAST({quote_ident(c)} AS VARCHAR)) = lower({quote_literal(rest)})" for c in others]
                counts = ", ".join(f"count(*) FILTER (WHERE {w}) AS n{i}, min(CAST({quote_ident(c)} AS VARCHAR)) "
                                   f"FILTER (WHERE {w}) AS v{i}" for i, (c, w) in enumerate(zip(others, same)))
                res = check_read(database, f"SELECT {counts} FROM {quote_ident(table)} "
                                           f"WHERE {quote_ident(column)} = {quote_literal(value)}", row_cap=1)
                if not res.ok or res.df is None or not len(res.df):
                    continue
                row = res.df.iloc[0]
                best = max(range(len(others)), key=lambda i: int(row[f"n{i}"] or 0))
                if int(row[f"n{best}"] or 0):
                    found = [ValueMatch(table, column, value, phrase),
                             ValueMatch(table, others[best], str(row[f"v{best}"]), phrase)]
                    break
            if found:
                break
        if found:
            whole = phrase.split()
            parts = {fold(" ".join(whole[i:j])) for i in range(len(whole)) for j in range(i + 1, len(whole) + 1)}
            out = found + [m for m in out if fold(m.phrase) not in parts]
    return out


@per_catalog
def _name_words(catalog: Catalog) -> dict[str, set[str]]:
    """Per table: the stemmed words of its name and of its synonyms (semantic file)."""
    return {t.name: set(split_ident(t.name)) | {w for s in t.synonyms for w in question_terms(s)}
            for t in catalog.tables.values()}


def _tokens(text: str) -> list[str]:
    return [t.strip(".'") for t in re.findall(r"[\w\-\.&']+", text)]


def _first_token(question: str) -> str:
    return next(iter(_tokens(question.strip())), "")


def _common(phrase: str, first: str) -> bool:
    """Whether a phrase is common words (no capital past the question's first word, no digit): "first round",
    "home", "made"; not a proper name ("Lakers", "Canada") or a code ("2019", "G7")."""
    return not any((w[:1].isupper() and w != first) or any(ch.isdigit() for ch in w) for w in phrase.split())


def from_entities(catalog: Catalog, question: str, matches: list[ValueMatch]) -> list[ValueMatch]:
    """Issue 53, item 4: a value link of common words comes from a table of the question's entities.

    A phrase of common words ("first round", "home") links only to a table the question names (a word of its name
    or of a synonym: "the first round of the playoffs" -> ``playoff_series``) or one a key joins to such a table; in
    any other table it is a word that happens to be stored there ("Who went in the first round of the 2019 draft?"
    is not about playoff series, "home games" not about playoff box scores). A proper name or a code links wherever
    its value is. When the question names no table, every link stays (nothing to judge by)."""
    terms = set(question_terms(question))
    named = {t for t, words in _name_words(catalog).items() if words & terms}
    if not named:
        return matches
    near = named | {b for fk in catalog.foreign_links() for a, b in ((fk.table, fk.ref_table), (fk.ref_table, fk.table))
                    if a in named}
    first = _first_token(question)
    return [m for m in matches if m.table in near or not _common(m.phrase, first)]
