"""sqlglot's tree of a DuckDB query: the one tree duckask reads a query's meaning from (the checks, the grounding,
the templates, the examples, the trust signals, the descriptions, a model's reads).

DuckDB's own parse (``db.ast``) stays only for security reads and the in-place rules' offsets (why: its docstring
and docs/design.md, "Layers"; an import contract in pyproject.toml holds who may import it). ``sql_tree(sql)`` is a
fresh tree each call (a caller may edit it), None when sqlglot cannot read the text.
"""
from __future__ import annotations

import functools

import sqlglot
from sqlglot import exp


@functools.lru_cache(maxsize=256)
def _parsed(sql: str) -> exp.Expr | None:
    try:
        return sqlglot.parse_one(sql, read="duckdb")
    except (sqlglot.errors.SqlglotError, ValueError, RecursionError):
        return None


def sql_tree(sql: str | None) -> exp.Expr | None:
    """sqlglot's tree of the first statement of ``sql`` in DuckDB's dialect, or None when it does not parse. The
    checks read one query many times: it is parsed once and each caller gets its own copy."""
    tree = _parsed(sql or "")
    return tree.copy() if tree is not None else None


def _nodes(tree: exp.Expr | None):
    """Every node below ``tree``, depth first in the order the text reads (the WITH clause first)."""
    return tree.walk(bfs=False) if tree is not None else iter(())


def _start(node: exp.Expr) -> int:
    """Where a node's name starts in the text (the end when the tree was built, not parsed)."""
    return node.this.meta.get("start", 1 << 62) if isinstance(node.this, exp.Expr) else 1 << 62


def table_names(tree: exp.Expr | None) -> list[str]:
    """Every table name the query reads from (a CTE's name where it is read too), in the order the text names
    them, without repeats; table functions (``range(10)``, ``read_csv(...)``) are no table."""
    out: list[str] = []
    tables = [n for n in _nodes(tree) if isinstance(n, exp.Table) and isinstance(n.this, exp.Identifier)]
    for node in sorted(tables, key=_start):
        if node.name not in out:
            out.append(node.name)
    return out


def cte_names(tree: exp.Expr | None) -> set[str]:
    """The names (lower-case) of every CTE defined anywhere in the query."""
    return {cte.alias.lower() for cte in _nodes(tree) if isinstance(cte, exp.CTE) and cte.alias}


def base_tables(tree: exp.Expr | None) -> list[str]:
    """The tables of the database the query reads (CTE names left out), in order of first appearance."""
    ctes = cte_names(tree)
    return [t for t in table_names(tree) if t.lower() not in ctes]


def column_names(tree: exp.Expr | None) -> set[str]:
    """The column names (lower-case, unqualified) a query mentions (those a ``* EXCLUDE (...)`` leaves out are
    not mentioned)."""
    left_out = {id(c) for star in _nodes(tree) if isinstance(star, exp.Star)
                for c in star.args.get("except_") or []}
    return {node.name.lower() for node in _nodes(tree)
            if isinstance(node, exp.Column) and node.name and id(node) not in left_out}


#: sqlglot's ranking and navigation functions: aggregate-like in its classes, computed per row in a window.
_PER_ROW = (exp.Rank, exp.DenseRank, exp.PercentRank, exp.CumeDist, exp.Ntile, exp.Lag, exp.Lead, exp.FirstValue,
            exp.LastValue, exp.NthValue, exp.Grouping, exp.GroupingId)


def aggregates(tree: exp.Expr | None, names: set[str]) -> set[str]:
    """The aggregate functions the query calls (lower-case names), those sqlglot knows and any other whose name
    is in ``names`` (DuckDB's own: ``fsum``, ``histogram``, ...)."""
    out = set()
    for node in _nodes(tree):
        if isinstance(node, exp.AggFunc) and not isinstance(node, _PER_ROW):
            out.add(node.sql_name().lower())
        elif isinstance(node, exp.Anonymous) and node.name.lower() in names:
            out.add(node.name.lower())
    return out


def nested_selects(tree: exp.Expr | None) -> int:
    """SELECTs inside the outer one (a CTE's, a subquery's, each side of a UNION after the first)."""
    return max(0, sum(1 for node in _nodes(tree) if isinstance(node, exp.Select)) - 1)


def top_level_order_by(tree: exp.Expr | None) -> bool:
    """Whether the outermost query (a SELECT or a set operation) sorts its result."""
    return tree is not None and tree.args.get("order") is not None
