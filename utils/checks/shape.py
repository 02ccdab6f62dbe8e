"""Checks of a result's shape against its question (kind ``shape``): what comes back (no rows, only NULLs, several
rows for one number, one row for a value per group, a count that is no count, LIMIT 1 for a list) and the query's
form (a column compared with itself, an average with no aggregate, a yes/no column that contradicts the question).
Each is ``check(question, sql, df, facts) -> critique or None``; its entry in ``checks.registry`` says what it needs
and where its cases are.
"""
from __future__ import annotations

import re

import pandas as pd
from sqlglot import exp

from duckask.utils.checks.facts import LIST_ASKED, NO, YES, Facts, stems
from duckask.utils.db.tree import aggregates, base_tables, sql_tree
from duckask.utils.lexicon import ORDINALS, SUPERLATIVES, one_of
from duckask.utils.schema.terms import split_ident, stem
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
_SINGLE = re.compile(r"\b(" + one_of(SUPERLATIVES, ORDINALS, ("max", "min", "one", "single")) + r"|\w+est)\b", re.I)


#: At most this many rows still answer "which X has the most ..." (ties at the top).
MAX_TIES = 5


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


def _flags(col: pd.Series) -> set[str] | None:
    """The values of a yes/no column, lower-cased ('y', 'n', 'true', ...); None when it is not one."""
    vals = col.dropna()
    if len(vals) == 0:
        return None
    if pd.api.types.is_bool_dtype(col):
        return {"true" if v else "false" for v in vals}
    if (pd.api.types.is_string_dtype(col) or col.dtype == object) and all(isinstance(v, str) for v in vals):
        seen = {v.strip().lower() for v in vals}
        return seen if seen <= YES | NO else None
    return None


def _named(col: str, question: str) -> set[str]:
    """The words of a column's name that the question says (beyond the generic ones)."""
    return (set(split_ident(col)) - _GENERIC) & stems(question)


def flag_contradicts_question(question: str, sql: str, df, facts: Facts) -> str | None:
    """A yes/no column the question talks about reads "no" in every row of the answer."""
    if _NEGATED.search(question):
        return None
    for col in df.columns:
        vals = _flags(df[col])
        if vals and vals <= NO and _named(str(col), question):
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
        if vals and vals & YES and vals & NO and str(col).lower() in grouped and _named(str(col), question):
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
    if tree is None or not LIST_ASKED.search(question) or _SINGLE.search(question) or _HOW_MANY.search(question):
        return None
    limit = tree.args.get("limit")
    if isinstance(limit, exp.Limit) and limit.expression.sql() == "1":
        return ("The question asks for every row that matches, but the query keeps only one (LIMIT 1); drop the "
                "LIMIT.")
    return None
