"""Checks of an answer against its question and its own rows (issue 32): the rules that catch a result that
looks like an answer and is not. Each is a small named function ``check(question, sql, df, facts)`` in the
one registry of ``sql.checks`` (``CHECKS``), with cases in ``tests/fixtures/checks.yaml``:

- ``flag_contradicts_question``: a yes/no column the question talks about reads "no" in every row
  ("Which team won the World Series in 2016?" answered by a row whose ``won_world_series`` is 'N');
- ``grouped_by_named_flag``: the query groups by a yes/no column the question names as a condition,
  so both its values come back (filter on it instead);
- ``count_not_a_count``: "how many" answered by text, a negative number or a fraction;
- ``one_asked_many_returned``: "which X has the most ..." (one X) answered by many rows;
- ``many_asked_one_kept``: "list the X that ..." answered by ``LIMIT 1``;
- ``unasked_literal``: a filter on a text value that neither the question, the conversation, the examples
  nor the data hints gave ("show me the u9s players" filtered on ``name = 'Hornets'``).

The checks that tie an answer to the question's words and the data (issue 44) are in ``sql.grounding_checks``.

``facts`` carries what the checks may compare with: ``names`` (stemmed words of the database's table and
column names) and ``given`` (the text the literals may come from: the question, earlier turns, the shown
examples, the values found in the data). Run on its own::

    python -m duckask.utils.sql.answer_checks "Which team won the World Series in 2016?" \\
        "SELECT name, won_ws FROM teams WHERE year = 2016 GROUP BY ALL LIMIT 1" --rows "Chicago,N"
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd
from sqlglot import exp

from duckask.utils.db.tree import sql_tree
from duckask.utils.lexicon import ORDINALS, SUPERLATIVES, one_of
from duckask.utils.schema.terms import split_ident, stem

if TYPE_CHECKING:
    from duckask.utils.schema.value_index import ValueIndex

_YES = {"y", "yes", "true", "t"}
_NO = {"n", "no", "false", "f"}
#: Words of a flag column's name too common to tie it to the question ("team" in team_won_ws).
_GENERIC = {stem(w) for w in "team player season year game name id flag is has was the of total number".split()}
_NEGATED = re.compile(r"\b(not|never|no|without|didn't|did not|wasn't|weren't|isn't|aren't|lost|fail\w*|miss\w*)\b",
                      re.I)
_HOW_MANY = re.compile(r"^\s*(how many|what is the (total )?number of|count the)\b", re.I)
_MEASURE = re.compile(r"\b(average|mean|per|rate|ratio|percent\w*|share|proportion|hours?|minutes?|seconds?|days?|"
                      r"weeks?|months?|years?|miles?|km|kilo\w*|pounds?|kg|dollars?|euros?|times)\b", re.I)
_ONE_SUPERLATIVE = re.compile(r"^\s*(which|what|who)\s+(\w+\s+)?(has|had|have|is|was|did|does|got|scored|won|hit|"
                              r"made|earned|sold|spent|\w+ed)\b.*\b(" + one_of(SUPERLATIVES) + r")\b", re.I)
_SEVERAL = re.compile(r"\b(each|per|every|all|top \d+|top (two|three|four|five|ten)|\d+ (most|best|highest)|list|"
                      r"ranks?|respectively|both)\b", re.I)
_LIST_ASKED = re.compile(r"^\s*(list|show|find all|give all|what are|which \w+s\b|who are|name all)", re.I)
_SINGLE = re.compile(r"\b(" + one_of(SUPERLATIVES, ORDINALS, ("max", "min", "one", "single")) + r"|\w+est)\b", re.I)
#: At most this many rows still answer "which X has the most ..." (ties at the top).
MAX_TIES = 5


@dataclass
class Facts:
    names: set[str] = field(default_factory=set)
    given: str = ""
    values: ValueIndex | None = None      # the database's value index (columns(table), values(table, column))
    tables: dict = field(default_factory=dict)    # table (lower) -> the stemmed words that tie it to a question
    named: list = field(default_factory=list)     # the values the question names ({phrase, table, column, value})


class Critique(str):
    """A check's critique that also names the tables a corrected query may read (``reach``): where the database
    holds what the query's own tables lack (``grounding_checks.year_outside_span``). SQLGenerator shows those
    tables' schema on the retry. A plain ``str`` everywhere else."""
    reach: tuple[str, ...] = ()

    def __new__(cls, text: str, reach=()):
        made = super().__new__(cls, text)
        made.reach = tuple(reach)
        return made


def _words(text: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())}


def _flags(col: pd.Series) -> set[str] | None:
    """The values of a yes/no column, lower-cased ('y', 'n', 'true', ...); None when it is not one."""
    vals = col.dropna()
    if len(vals) == 0:
        return None
    if pd.api.types.is_bool_dtype(col):
        return {"true" if v else "false" for v in vals}
    if (pd.api.types.is_string_dtype(col) or col.dtype == object) and all(isinstance(v, str) for v in vals):
        seen = {v.strip().lower() for v in vals}
        return seen if seen <= _YES | _NO else None
    return None


def _named(col: str, question: str) -> set[str]:
    """The words of a column's name that the question says (beyond the generic ones)."""
    return (set(split_ident(col)) - _GENERIC) & _words(question)


def flag_contradicts_question(question: str, sql: str, df, facts: Facts) -> str | None:
    """A yes/no column the question talks about reads "no" in every row of the answer."""
    if _NEGATED.search(question):
        return None
    for col in df.columns:
        vals = _flags(df[col])
        if vals and vals <= _NO and _named(str(col), question):
            return (f"The result's {col} column is '{df[col].dropna().iloc[0]}' in every row, so these rows are not "
                    f"the ones the question asks about; filter on {col} meaning yes (e.g. WHERE {col} = 'Y') "
                    "instead of selecting or grouping by it.")
    return None


def grouped_by_named_flag(question: str, sql: str, df, facts: Facts) -> str | None:
    """The query groups by a yes/no column the question names as a condition: both values come back."""
    tree = sql_tree(sql)
    if tree is None or _NEGATED.search(question):
        return None
    grouped = {c.name.lower() for g in tree.find_all(exp.Group) for c in g.find_all(exp.Column)}
    for col in df.columns:
        vals = _flags(df[col])
        if vals and vals & _YES and vals & _NO and str(col).lower() in grouped and _named(str(col), question):
            return (f"The question names {col} as a condition, but the query groups by it, so rows where it is "
                    f"no come back too; filter with WHERE {col} = 'Y' instead of GROUP BY {col}.")
    return None


def count_not_a_count(question: str, sql: str, df, facts: Facts) -> str | None:
    """"How many ..." answered by something that cannot be a count: text, a negative number, a fraction."""
    if not _HOW_MANY.search(question) or len(df) != 1 or _MEASURE.search(question):
        return None
    nums = [v for v in df.iloc[0].tolist() if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v]
    if not nums:
        return ("The question asks how many, but the result holds no number; count the rows with COUNT(*) "
                "(or COUNT(DISTINCT ...)).")
    v = nums[-1]
    if v < 0 or float(v) != int(v):
        return (f"The question asks how many, but the answer {v} is not a count (a count is a whole number, never "
                "negative); use COUNT(*) or COUNT(DISTINCT ...) rather than an average, a sum or a difference.")
    return None


def one_asked_many_returned(question: str, sql: str, df, facts: Facts) -> str | None:
    """"Which X has the most ..." asks for one X (or a few tied), not a list of them."""
    m = _ONE_SUPERLATIVE.search(question)
    if not m or _SEVERAL.search(question) or len(df) <= MAX_TIES or (m.group(2) or "").strip().endswith("s"):
        return None
    return (f"The question asks for the one with the {m.group(4).lower()} value, but the query returned {len(df)} "
            "rows; order by that value and keep the top row (and any tied with it).")


def many_asked_one_kept(question: str, sql: str, df, facts: Facts) -> str | None:
    """"List the X that ..." answered by LIMIT 1: a list asked for, one row kept."""
    tree = sql_tree(sql)
    if tree is None or not _LIST_ASKED.search(question) or _SINGLE.search(question) or _HOW_MANY.search(question):
        return None
    limit = tree.args.get("limit")
    if isinstance(limit, exp.Limit) and limit.expression.sql() == "1":
        return ("The question asks for every row that matches, but the query keeps only one (LIMIT 1); drop the "
                "LIMIT.")
    return None


def _literals(tree) -> list[str]:
    """Text values the query filters on (=, <>, IN, LIKE in WHERE and HAVING), LIKE's wildcards dropped."""
    out = []
    for clause in list(tree.find_all(exp.Where)) + list(tree.find_all(exp.Having)):
        for cmp in clause.find_all(exp.EQ, exp.NEQ, exp.In, exp.Like, exp.ILike):
            # The compared values themselves: not a map key or JSON path inside an operand (m['color']).
            for lit in [cmp.args.get("expression"), cmp.this, *(cmp.args.get("expressions") or [])]:
                if isinstance(lit, exp.Literal) and lit.is_string:
                    out.append(lit.this.strip("%_ "))
    return out


def _close(word: str, given: list[str]) -> bool:
    """A word of a literal the question spelt nearly so ("Carribean" for 'Caribbean')."""
    return len(word) >= 5 and bool(difflib.get_close_matches(word, given, n=1, cutoff=0.85))


def unasked_literal(question: str, sql: str, df, facts: Facts) -> str | None:
    """A filter on a text value nothing gave: not the question, an earlier turn, an example or a data hint."""
    tree = sql_tree(sql)
    if tree is None:
        return None
    given = (question + " " + facts.given).lower()
    given_words = _words(given)
    for value in _literals(tree):
        low = value.lower()
        if len(low) < 3 or low in _YES | _NO or not re.search(r"[a-z]", low) or low in given:
            continue
        words = [w for w in re.findall(r"[a-z0-9]+", low) if len(w) >= 3]
        if not words or any(stem(w) in given_words or w in given or _close(w, given.split()) for w in words):
            continue
        return (f"The query filters on '{value}', a value the question never mentions; drop that condition "
                "(or say why it is needed).")
    return None

