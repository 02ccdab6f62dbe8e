"""Values a question names: literal values found in the data ("Lakers" -> ``team.nickname``), and
yes/no flag columns ("official languages" -> ``countrylanguage.IsOfficial = 'T'``). TableSelector
shows them to the model as value hints; literal matches also rank tables.

Run on its own through the ranker, which prints them before the ranking::

    python -m duckask.utils.schema.ranker --db PATH "question"
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from duckask.utils.schema.catalog import Catalog, fold, per_catalog
from duckask.utils.schema.terms import STOP, question_terms, split_ident


@dataclass
class ValueMatch:
    table: str
    column: str
    value: str
    phrase: str


def hints(values: list[dict]) -> str:
    """Values found in the data as a prompt shows them: ``table.column = 'value'; ...``."""
    return "; ".join(f"{v['table']}.{v['column']} = '{v['value']}'" for v in values)


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

