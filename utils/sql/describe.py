"""``describe_sql(sql)``: what a query does, in plain words, to say how an answer was derived (the SQL path's
counterpart of the plan path's ``semantic.plan.describe``); ``has_top_level_order_by`` for scoring.

Read with sqlglot (DuckDB dialect), outermost SELECT only: the tables it reads (their names, not the aliases),
each condition of WHERE and HAVING as a phrase ("year_id is 2018", "hr at least 40", "name contains 'Ruth'"),
the grouping ("per team"), the order ("highest hr first") and the limit ("top 1"). Column names stay as the
schema spells them (a reader may look them up) without the table qualifier, unless two tables' columns of that
name both appear. A condition with no phrase of its own is shown as SQL. A set operation at the top (UNION, ...)
gives its tables, its order and its limit; a query sqlglot cannot read gives an empty shape.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from sqlglot import exp

from duckask.utils.db.tree import base_tables, sql_tree, top_level_order_by
from duckask.utils.lexicon import OPERATOR_WORDS, first_words


@dataclass
class SQLShape:
    tables: list[str] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    group_by: list[str] = field(default_factory=list)
    order_by: list[str] = field(default_factory=list)
    limit: str | None = None


_COMPARE = {kind: OPERATOR_WORDS[op] for kind, op in ((exp.EQ, "="), (exp.NEQ, "!="), (exp.GT, ">"),
                                                      (exp.GTE, ">="), (exp.LT, "<"), (exp.LTE, "<="))}
_NEGATED = {"is": "is not", "is not": "is", "above": "at most", "at least": "below", "below": "at least",
            "at most": "above"}
_AGGREGATES = {exp.Sum: "sum", exp.Avg: "average", exp.Max: "highest", exp.Min: "lowest", exp.Count: "number"}


def describe_sql(sql: str) -> SQLShape:
    """The shape of the outermost SELECT in words (empty when sqlglot cannot read it)."""
    tree = sql_tree(sql)
    if isinstance(tree, exp.Select):
        return _words_shape(tree)
    return _outer_shape(tree) if tree is not None else SQLShape()


def _words_shape(select: exp.Select) -> SQLShape:
    ctes = {c.alias_or_name.lower() for c in select.find_all(exp.CTE)}
    own = [t for t in _own_tables(select) if t.name.lower() not in ctes]
    names = _column_names(select, {t.alias_or_name.lower(): t.name for t in own})
    shape = SQLShape(tables=list(dict.fromkeys(t.name for t in own)) or
                     list(dict.fromkeys(t.name for t in select.find_all(exp.Table) if t.name.lower() not in ctes)))
    for clause in (select.args.get("where"), select.args.get("having")):
        if clause is not None:
            shape.filters += [condition_words(c, names) for c in _operands(clause.this, exp.And)]
    group = select.args.get("group")
    if group is not None:
        shape.group_by = [term_words(g, names, select) for g in group.expressions]
    order = select.args.get("order")
    if order is not None:
        for o in order.expressions:
            first = first_words(bool(o.args.get("desc")))
            shape.order_by.append(f"{first} {term_words(o.this, names, select)} first")
    limit = select.args.get("limit")
    if limit is not None and limit.expression is not None:
        shape.limit = limit.expression.sql(dialect="duckdb")
    return shape


def _own_tables(select: exp.Select) -> list[exp.Table]:
    """The base tables in this SELECT's own FROM and JOINs (not in subqueries)."""
    sources = [select.args.get("from_") or select.args.get("from")] + list(select.args.get("joins") or [])
    return [s.this for s in sources if s is not None and isinstance(s.this, exp.Table)]


class Names(NamedTuple):
    """How a column is shown: bare, or with its table (the alias read as its table: ``b.year_id`` is
    ``batting.year_id``) when its name is in ``ambiguous`` (two qualifiers use it)."""
    ambiguous: set[str]
    tables: dict[str, str]          # {alias or name (lower-case): table}

    def column(self, c: exp.Column) -> str:
        if c.table and c.name.lower() in self.ambiguous:
            return f"{self.tables.get(c.table.lower(), c.table)}.{c.name}"
        return c.name


def _column_names(select: exp.Select, tables: dict[str, str]) -> Names:
    seen: dict[str, set[str]] = {}
    for c in select.find_all(exp.Column):
        if c.table:
            seen.setdefault(c.name.lower(), set()).add(c.table.lower())
    return Names({n for n, qualifiers in seen.items() if len(qualifiers) > 1}, tables)


def _operands(e: exp.Expr, kind: type[exp.Connector]) -> list[exp.Expr]:
    """The operands of a chain of ANDs (or ORs), through parentheses: ``a AND (b AND c)`` is a, b, c."""
    e = e.unnest() if isinstance(e, exp.Paren) else e
    return [*_operands(e.left, kind), *_operands(e.right, kind)] if isinstance(e, kind) else [e]


def _aliases(select: exp.Select) -> dict[str, exp.Expr]:
    return {a.alias.lower(): a.this for a in select.expressions if isinstance(a, exp.Alias)}


def term_words(e: exp.Expr, names: Names, select: exp.Select | None = None) -> str:
    """A column, an aggregate or an output name in words: ``hr``, ``sum of hr``, ``number of rows``; an alias of
    the select list stays its name (``home_runs``)."""
    if isinstance(e, exp.Column):
        if select is not None and not e.table and e.name.lower() in _aliases(select):
            return e.name
        return names.column(e)
    for kind, word in _AGGREGATES.items():
        if isinstance(e, kind):
            inner = e.this
            if isinstance(e, exp.Count) and (inner is None or isinstance(inner, exp.Star)):
                return "number of rows"
            if isinstance(inner, exp.Distinct):
                return f"number of distinct {', '.join(term_words(x, names) for x in inner.expressions)}"
            return f"{word} of {term_words(inner, names)}"
    if isinstance(e, exp.Literal) and not e.is_string and select is not None:      # GROUP BY 1 / ORDER BY 2
        position = int(e.this) if e.this.isdigit() else 0
        if 0 < position <= len(select.expressions):
            item = select.expressions[position - 1]
            return item.alias if isinstance(item, exp.Alias) else term_words(item, names)
    return _bare_sql(e, names)


def condition_words(e: exp.Expr, names: Names) -> str:
    """One condition of WHERE or HAVING as a phrase; SQL (qualifiers dropped) when it has no phrase."""
    t = lambda x: term_words(x, names)  # noqa: E731
    v = _value_words
    e = e.unnest() if isinstance(e, exp.Paren) else e
    if isinstance(e, exp.Or):
        return "(" + " or ".join(condition_words(x, names) for x in _operands(e, exp.Or)) + ")"
    negated = isinstance(e, exp.Not)
    inner = e.this.unnest() if negated and isinstance(e.this, exp.Paren) else (e.this if negated else e)
    for kind, word in _COMPARE.items():
        if isinstance(inner, kind):
            word = _NEGATED[word] if negated else word
            return f"{t(inner.left)} {word} {v(inner.right) if _is_value(inner.right) else t(inner.right)}"
    if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
        return f"{t(inner.this)} is {'known' if negated else 'missing'}"
    if isinstance(inner, exp.Between):
        return f"{t(inner.this)} {'not ' if negated else ''}between {v(inner.args['low'])} and {v(inner.args['high'])}"
    if isinstance(inner, exp.In) and inner.expressions:
        return f"{t(inner.this)} is {'not ' if negated else ''}one of {', '.join(v(x) for x in inner.expressions)}"
    if isinstance(inner, (exp.Like, exp.ILike)) and isinstance(inner.expression, exp.Literal):
        negated ^= bool(inner.args.get("negate"))               # ``a NOT LIKE 'x'`` is one node with negate set
        return f"{t(inner.this)} {'does not match' if negated else 'matches'} {_pattern_words(inner.expression.this)}"
    return _bare_sql(e, names)


def _pattern_words(pattern: str) -> str:
    core = pattern.strip("%")
    if "%" in core or "_" in core or not core:
        return f"'{pattern}'"
    if pattern.startswith("%") and pattern.endswith("%"):
        return f"'…{core}…' (contains)"
    if pattern.endswith("%"):
        return f"'{core}…' (starts with)"
    if pattern.startswith("%"):
        return f"'…{core}' (ends with)"
    return f"'{core}'"


def _value_words(e: exp.Expr) -> str:
    """A value as written: ``DATE '2020-01-01'`` (sqlglot's CAST of a literal) shows as ``'2020-01-01'``."""
    return (e.this if isinstance(e, exp.Cast) and isinstance(e.this, exp.Literal) else e).sql(dialect="duckdb")


def _is_value(e: exp.Expr) -> bool:
    if isinstance(e, exp.Cast):
        return isinstance(e.this, exp.Literal)
    return isinstance(e, (exp.Literal, exp.Boolean, exp.Null)) or (isinstance(e, exp.Neg) and
                                                                    isinstance(e.this, exp.Literal))


def _bare_sql(e: exp.Expr, names: Names) -> str:
    """``e`` as DuckDB SQL with the table qualifiers dropped where the column name alone is clear."""
    def drop(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and node.table and node.name.lower() not in names.ambiguous:
            return exp.column(node.name, quoted=node.this.quoted)
        return node

    return e.copy().transform(drop).sql(dialect="duckdb")


def _outer_shape(tree: exp.Expr) -> SQLShape:
    """A query that is no plain SELECT (a UNION, ...): the tables it reads and its own order and limit."""
    shape = SQLShape(tables=base_tables(tree))
    order = tree.args.get("order")
    for o in order.expressions if order is not None else []:
        shape.order_by.append(o.this.sql(dialect="duckdb") + (" DESC" if o.args.get("desc") else ""))
    limit = tree.args.get("limit")
    if limit is not None and limit.expression is not None:
        shape.limit = limit.expression.sql(dialect="duckdb")
    return shape


def has_top_level_order_by(sql: str) -> bool:
    """Whether the outermost query sorts its result (scoring compares such a result in order)."""
    return top_level_order_by(sql_tree(sql))
