"""Checks of a result against its question, without an LLM: ResponseGrader's rules (``rule_check``).

Each check is a small named function ``check(question, sql, df, facts) -> critique or None`` in ``CHECKS``;
the first critique wins: ResponseGrader moves to the next candidate group, or sends it back to SQLGenerator as
the reason. ``facts.names`` are the stemmed words of the database's table and column names (a "per zone" names
a column, "per order" in "revenue per order" may be a ratio), ``facts.given`` the text a literal may come from.
``CHECKS`` is the one registry: the shape rules below, the checks of ``sql.answer_checks`` (an answer against
its question and its own rows), of ``sql.grounding_checks`` (an answer against the question's words and the
data) and of ``sql.entity_checks`` (what a count counts), in the order they speak. Every check's cases are in
``tests/fixtures/checks.yaml``, one format.

- ``literal_not_a_value`` (``sql.grounding_checks``): a text literal compared with a column that does not hold it,
  when the column holds values it was likely meant as (offered in the critique: 'F' for 'Forward');
- ``no_rows``: an empty result (naming a contradictory filter ``x = 'a' AND x = 'b'`` when there is one);
- ``all_null``: only NULLs;
- ``self_comparison``: a join condition comparing a column with itself;
- ``one_number_asked``: "how many ..." without "each/per" answered with several rows;
- ``average_without_aggregate``: "the average X" answered by a per-row value (no aggregate anywhere);
- ``per_group_without_grouping``: "for each Y" / "per Y" answered by one aggregate row over everything
  (no GROUP BY, no PARTITION BY anywhere in the query).
"""
from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
from sqlglot import exp

from duckask.utils.db.tree import aggregates, base_tables, sql_tree
from duckask.utils.lexicon import SUPERLATIVES, one_of
from duckask.utils.schema.terms import split_ident, stem
from duckask.utils.sql import answer_checks as ac
from duckask.utils.sql import entity_checks as ec
from duckask.utils.sql import grounding_checks as gc
from duckask.utils.sql.answer_checks import Critique, Facts
from duckask.utils.sql.tidy import self_comparisons

_COUNT_Q = re.compile(r"^\s*(how many|count\b|what is the (total )?number of|what's the number of|"
                      r"find the (total )?number of|show the number of|return the number of)", re.I)
_GROUPED = re.compile(r"\b(each|per|every|by|respectively|different|various|all)\b", re.I)
_EQ_LITERAL = re.compile(r"([\w.\"]+)\s*=\s*('(?:[^']|'')*')")
_AVERAGE = re.compile(r"\b(average|mean|avg)\b", re.I)
_EACH = re.compile(r"\b(?:for|in|of|by) (?:each|every) (\w+)|\beach (\w+)(?:'s)?\b", re.I)
_PER = re.compile(r"\bper (\w+)", re.I)
_AGGREGATES = {"avg", "mean", "sum", "count", "count_star", "min", "max", "median", "quantile_cont", "quantile_disc",
               "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop", "arg_max", "arg_min",
               "max_by", "min_by", "string_agg", "list", "array_agg", "mode", "any_value", "first", "last",
               "fsum", "favg", "sumkahan", "kahan_sum", "count_if", "bool_and", "bool_or", "product", "histogram",
               "approx_count_distinct", "entropy", "corr", "covar_pop", "regr_slope"}
_SUPERLATIVE = re.compile(r"\b(which|what|who)\b.*\b" + one_of(SUPERLATIVES) + r"\b", re.I)

Check = Callable[[str, str, "pd.DataFrame | None", Facts], "str | None"]


def contradiction(sql: str) -> str | None:
    """'X = 'a' AND X = 'b'' in one WHERE can never hold: the classic "both a and b" slip."""
    seen: dict[str, str] = {}
    for col, lit in _EQ_LITERAL.findall(sql or ""):
        key = col.lower().replace('"', "")
        if key in seen and seen[key] != lit and " OR " not in sql.upper():
            return (f"{col} cannot equal both {seen[key]} and {lit} in the same row. For rows that have both "
                    f"values, write two queries (one per value) combined with INTERSECT.")
        seen.setdefault(key, lit)
    return None


def _shape(sql: str) -> tuple[set[str], bool, bool]:
    """(aggregate functions called, any GROUP BY, any PARTITION BY) anywhere in the query."""
    node = sql_tree(sql)
    if node is None:
        return set(), True, True          # unreadable: claim nothing about it
    grouped = isinstance(node, exp.Describe | exp.Summarize) or any(
        isinstance(n, exp.Group | exp.Pivot) for n in node.walk())      # GROUP BY ..., GROUP BY ALL, PIVOT
    partitioned = any(isinstance(n, exp.Window) and n.args.get("partition_by") for n in node.walk())
    return aggregates(node, _AGGREGATES), grouped, partitioned


def no_rows(question: str, sql: str, df, facts: Facts) -> str | None:
    """An empty result is no answer; a contradictory filter is named when there is one."""
    if df is None or len(df) == 0:
        if (why := contradiction(sql)):
            return "The query returned no rows. " + why
        return ("The query returned no rows. Check that filter values match the data exactly (see the "
                "sample values and their case) and that joins and conditions are not too strict.")
    return None


def all_null(question: str, sql: str, df, facts: Facts) -> str | None:
    """A result of only NULL values answers nothing."""
    return "The query returned only NULL values; check the filters and the joins." if df.isna().all().all() else None


def self_comparison(question: str, sql: str, df, facts: Facts) -> str | None:
    """A join condition comparing a column with itself joins every row with every row."""
    if (same := self_comparisons(sql or "")):
        return (f"The condition {same[0]} compares a column with itself, so every row is joined with every "
                "row; join on the columns that link the two tables (REFERENCES in the schema).")
    return None


def one_number_asked(question: str, sql: str, df, facts: Facts) -> str | None:
    """"How many ..." with no each/per asks for one number, not a list of them."""
    if _COUNT_Q.search(question) and not _GROUPED.search(question) and len(df) != 1:
        return (f"The question asks for one number, but the query returned {len(df)} rows; "
                "aggregate into a single row with COUNT.")
    return None


def average_without_aggregate(question: str, sql: str, df, facts: Facts) -> str | None:
    """"The average X" answered by per-row values: no aggregate anywhere in the query (a column whose
    name says average, such as avg_points, is the average itself and passes)."""
    if not _AVERAGE.search(question) or re.search(r"(?i)avg|average|mean", sql or ""):
        return None
    calls, _, _ = _shape(sql)
    if calls:
        return None
    return ("The question asks for an average, but the query computes none: it returns one value per row. "
            "Use avg(...), with GROUP BY for an average per group.")


def _group_word(question: str, names: set[str]) -> str | None:
    """The Y of "for each Y" / "each Y", or of "per Y" when Y names a table or column."""
    for m in _EACH.finditer(question):
        return m.group(1) or m.group(2)
    for m in _PER.finditer(question):
        if stem(m.group(1).lower()) in names:
            return m.group(1)
    return None


def per_group_without_grouping(question: str, sql: str, df, facts: Facts) -> str | None:
    """"For each Y" / "per Y" answered by one aggregate over everything: one row, no GROUP BY or PARTITION BY
    anywhere (a superlative such as "which Y has the highest ..." may rightly give one row; an average per Y
    over the table of Y's own rows is one already)."""
    word = _group_word(question, facts.names)
    if word is None or len(df) != 1 or _SUPERLATIVE.search(question):
        return None
    if stem(word.lower()) in {w for t in base_tables(sql_tree(sql)) for w in split_ident(t)}:
        return None           # "the average total per order" over the orders table: one row per order already
    calls, grouped, partitioned = _shape(sql)
    if not calls or grouped or partitioned:
        return None
    return (f"The question asks for a value for each {word}, but the query aggregates everything into one row; "
            f"GROUP BY the {word} column (and select it) to get one row per {word}.")


#: Every check the grader runs, tried in this order; the first critique wins. A literal that is no value of its
#: column first (its critique offers the values), then the result's shape, then the answer against its question
#: and its rows, then against the question's words and the data.
CHECKS: tuple[Check, ...] = (
    gc.literal_not_a_value, gc.year_outside_span,
    no_rows, all_null, self_comparison, one_number_asked, average_without_aggregate, per_group_without_grouping,
    ac.flag_contradicts_question, ac.grouped_by_named_flag, ac.count_not_a_count, ac.one_asked_many_returned,
    ac.many_asked_one_kept, ac.unasked_literal,
    gc.count_for_a_list, gc.unasked_date, gc.table_not_asked_about, gc.constraint_dropped, ec.count_not_of_entity)


def rule_check(question: str, df: pd.DataFrame | None, sql: str = "", names: set[str] | None = None,
               given: str | None = None, values=None) -> str | None:
    """A critique when the result is certainly not an answer to the question, else None. ``given``: the text a
    filter's literal may come from besides the question (None: not known, so literals are not checked);
    ``values``: the database's value index (``schema.value_index``; None: literals are not checked against it)."""
    return failed_check(question, df, sql, names, given, values)[1]


def failed_check(question: str, df: pd.DataFrame | None, sql: str = "", names: set[str] | None = None,
                 given: str | None = None, values=None, *, facts: Facts | None = None,
                 given_known: bool | None = None) -> tuple[str | None, Critique | None]:
    """(the name of the first check that fails, its critique), or (None, None). ``facts``: all the checks compare
    with (``trust.grounding.facts_for``), else built from ``names``, ``given`` and ``values``; ``given_known``:
    whether the text literals may come from is known (else ``unasked_literal`` and ``unasked_date`` are not run)."""
    facts = facts or Facts(names or set(), given or "", values)
    known = given is not None if given_known is None else given_known
    for check in CHECKS:
        if not known and check.__name__ in ("unasked_literal", "unasked_date"):   # the plan path: the file's
            continue
        if (critique := check(question, sql, df, facts)):
            return check.__name__, critique if isinstance(critique, Critique) else Critique(critique)
    return None, None
