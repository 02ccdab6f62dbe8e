"""What the checks compare an answer with (``Facts``), what a failed check says (``Critique``), and the readings of
a query more than one kind of check makes (the text values it filters on).

``Facts`` is built once per turn (``trust.grounding.facts_for``) and handed to every check: the database's names, the
text a literal may come from (``given``), the value index, each table's words (``table_words``) and the values the
question names. A check reads only the fields its registry entry says it ``needs`` (``checks.registry``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp

from duckask.utils.schema.catalog import per_catalog
from duckask.utils.schema.terms import split_ident, stem

if TYPE_CHECKING:
    from duckask.utils.schema.value_index import ValueIndex


@dataclass
class Facts:
    """What every check may compare with; each check's registry entry says which fields it needs."""
    names: set[str] = field(default_factory=set)
    given: str = ""
    values: ValueIndex | None = None      # the database's value index (columns(table), values(table, column))
    tables: dict = field(default_factory=dict)    # table (lower) -> the stemmed words that tie it to a question
    named: list = field(default_factory=list)     # the values the question names ({phrase, table, column, value})


class Critique(str):
    """A check's critique that also names the tables a corrected query may read (``reach``): where the database
    holds what the query's own tables lack (``checks.grounding.year_outside_span``). SQLGenerator shows those
    tables' schema on the retry. A plain ``str`` everywhere else."""
    reach: tuple[str, ...] = ()

    def __new__(cls, text: str, reach=()):
        made = super().__new__(cls, text)
        made.reach = tuple(reach)
        return made


YES = {"y", "yes", "true", "t"}
NO = {"n", "no", "false", "f"}
LIST_ASKED = re.compile(r"^\s*(list|show|find all|give all|what are|which \w+s\b|who are|name all)", re.I)


def stems(text: str) -> set[str]:
    """The stems of a text's words."""
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())}


def filter_texts(tree) -> list[str]:
    """Text values the query filters on (=, <>, IN, LIKE in WHERE and HAVING), LIKE's wildcards dropped."""
    out = []
    for clause in list(tree.find_all(exp.Where)) + list(tree.find_all(exp.Having)):
        for cmp in clause.find_all(exp.EQ, exp.NEQ, exp.In, exp.Like, exp.ILike):
            # The compared values themselves: not a map key or JSON path inside an operand (m['color']).
            for lit in [cmp.args.get("expression"), cmp.this, *(cmp.args.get("expressions") or [])]:
                if isinstance(lit, exp.Literal) and lit.is_string:
                    out.append(lit.this.strip("%_ "))
    return out


#: Words of a table's name, columns and description too common to tie it to a question.
GENERIC_TABLE_WORDS = {stem(w) for w in (
    "id ids key code name names first last full short display type kind num number no count total stat stats info "
    "information common detail details history data table log logs list record records summary summaries value "
    "values date time day year season seasons yr created updated flag status note notes desc description the of a "
    "and per by in on at to for from with is has url link slug abbreviation abbrev").split()}


@per_catalog
def table_words(catalog) -> dict[str, tuple[set[str], set[str]]]:
    """Each table's (and model's) words: (its name's and synonyms', everything that ties it to a question: name,
    synonyms, comment, columns and their comments), stemmed, the generic ones left out."""
    out = {}
    for name, t in catalog.tables.items():
        named = {*split_ident(name), *(w for s in t.synonyms for w in split_ident(s))}
        text = " ".join([t.comment or "", *(c.comment or "" for c in t.columns)]).lower()
        words = {*named, *(stem(w) for w in re.findall(r"[a-z]+", text)),
                 *(w for c in t.columns for w in split_ident(c.name))}
        out[name.lower()] = ({w for w in named if len(w) > 2} - GENERIC_TABLE_WORDS,
                             {w for w in words if len(w) > 2} - GENERIC_TABLE_WORDS)
    return out
