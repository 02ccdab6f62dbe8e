"""``describe_sql(sql)``: the tables, filters, grouping, order and limit of a query, read from DuckDB's
parser, to say how an answer was derived; ``has_top_level_order_by`` for scoring.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from duckask.utils.sql.ast import base_tables, parse, span


@dataclass
class SQLShape:
    tables: list[str] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    group_by: list[str] = field(default_factory=list)
    order_by: list[str] = field(default_factory=list)
    limit: str | None = None


def describe_sql(sql: str) -> SQLShape:
    """Tables, filters, grouping, order and limit of the outermost SELECT (empty when unparsable)."""
    node = parse(sql)
    if node is None:
        return SQLShape()
    cte_names = {e.get("key") for e in (node.get("cte_map") or {}).get("map", []) if isinstance(e, dict)}
    shape = SQLShape(tables=[t for t in base_tables(node) if t not in cte_names])
    for key in ("where_clause", "having"):
        s = span(sql, node.get(key))
        if s:
            shape.filters.append(s)
    shape.group_by = [s for s in (span(sql, g) for g in node.get("group_expressions") or []) if s]
    for m in node.get("modifiers") or []:
        if m.get("type") == "ORDER_MODIFIER":
            for o in m.get("orders", []):
                s = span(sql, o.get("expression"))
                if s:
                    shape.order_by.append(s + (" DESC" if o.get("type") == "DESCENDING" else ""))
        elif m.get("type") == "LIMIT_MODIFIER":
            shape.limit = span(sql, m.get("limit"))
    return shape


def has_top_level_order_by(sql: str) -> bool:
    node = parse(sql)
    return bool(node) and any(m.get("type") == "ORDER_MODIFIER" for m in node.get("modifiers") or [])
