"""What a SELECT reads, resolved by scope: the one resolver behind every read check.

``resolve(sql)`` reads DuckDB's own parse of the statement (``json_serialize_sql``, the same parser that
runs it) and returns every table, view or system view it names (``TableRef``: catalog, schema, name), every
table function and every scalar function it calls. A name is left out as a CTE only where a CTE of that
name is in scope, the way DuckDB's binder resolves it:

- a CTE is visible in the body of the query that defines it (its select list, FROM, WHERE, subqueries,
  set-operation branches), and in the CTEs defined *after* it in the same WITH, never before;
- a CTE's own name is visible inside its definition only in the recursive branch of a ``WITH RECURSIVE``
  (DuckDB's ``RECURSIVE_CTE_NODE``); elsewhere ``WITH people AS (SELECT * FROM people)`` reads the table;
- a qualified name (``main.people``, ``db.main.people``) is never a CTE.

So ``WITH people AS (SELECT 1) SELECT * FROM main.people`` reads ``main.people``, and a subquery's
``WITH duckdb_databases AS (...)`` does not hide a ``duckdb_databases`` beside it. Whatever is unsure
resolves to "a table", never to "a CTE": an error here refuses, it never lets a read through.
``None`` means DuckDB cannot parse it (callers refuse). The read allowlist (``access.roles``), the guard on
the server's own views (``db.safety``) and the reads behind a write's card and estimate (``state.writes``)
all use this; tests/fixtures/reads.yaml holds its cases, and tests/test_reads.py checks them against
DuckDB's binder.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from duckask.utils.db.ast import parse

_ASCII_UPPER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold(name: str) -> str:
    """``name`` as DuckDB compares identifiers: ASCII letters lower-cased, every other character kept (``"CAFÉ"``
    and ``café`` are two tables to DuckDB; Python's ``str.lower`` would make them one)."""
    return name.translate(_ASCII_UPPER)


@dataclass(frozen=True)
class TableRef:
    name: str                  # folded (``fold``)
    schema: str = ""           # folded, "" when not written
    catalog: str = ""

    @property
    def qualified(self) -> bool:
        return bool(self.schema or self.catalog)

    def __str__(self) -> str:
        return ".".join(p for p in (self.catalog, self.schema, self.name) if p)


@dataclass
class Reads:
    tables: list[TableRef] = field(default_factory=list)      # in order of appearance, without repeats
    table_functions: list[str] = field(default_factory=list)  # lower-case names: range, read_csv, ...
    functions: list[str] = field(default_factory=list)        # scalar and aggregate function names
    types: list[str] = field(default_factory=list)            # named types of casts, "schema.name" (folded)
    shown: list[TableRef] = field(default_factory=list)       # the tables SHOW / DESCRIBE t name
    writes: list[tuple[str, TableRef]] = field(default_factory=list)   # data-modifying nodes inside: (verb, table)
    made: list[tuple[str, int | None]] = field(default_factory=list)   # a maker's calls: (name, its count or None)

    @property
    def names(self) -> set[str]:
        """The tables' names (folded), whatever their schema."""
        return {t.name for t in self.tables}


def _add(items: list, item) -> None:
    if item not in items:
        items.append(item)


def _table(d: dict) -> TableRef:
    return TableRef(fold(d.get("table_name") or ""), fold(d.get("schema_name") or ""),
                    fold(d.get("catalog_name") or ""))


#: The query nodes a read may hold; any other (``DELETE_QUERY_NODE`` in ``WITH d AS (DELETE ... RETURNING *)``,
#: ``INSERT_QUERY_NODE``, ``UPDATE_QUERY_NODE``, a kind a later DuckDB adds) changes data, and DuckDB runs it even
#: where nothing reads ``d``.
READ_NODES = {"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"}


def _written(x: dict) -> TableRef:
    """The table a data-modifying query node writes (its ``table``: a BASE_TABLE dict or the name)."""
    table = x.get("table")
    if isinstance(table, dict):
        return _table(table)
    return TableRef(fold(str(table or "?")), fold(x.get("schema") or ""), fold(x.get("catalog") or ""))


#: Functions that make a value larger than what they are given, by a count (its argument's place): ``repeat('x',
#: 5000000)`` makes 5 MB a row, and DuckDB makes a whole vector of rows (up to 2,048) before the first is fetched,
#: whatever its memory limit (``safety`` bounds the count).
MAKERS = {"repeat": 1, "lpad": 1, "rpad": 1, "list_resize": 1, "array_resize": 1, "range": -1, "generate_series": -1}


def _constant(e) -> int | None:
    """A whole number written as a constant (through casts), or None."""
    while isinstance(e, dict) and e.get("class") == "CAST":
        e = e.get("child")
    literal = e.get("literal") if isinstance(e, dict) and e.get("class") == "CONSTANT" else None
    try:
        return int(str((literal or {}).get("text")))
    except ValueError:
        return None


def _count(name: str, x: dict) -> int | None:
    """How many characters or elements a maker's call makes, when its count is a constant (else None): ``range``'s
    span (its last argument alone, or the second less the first)."""
    args = [_constant((a or {}).get("expression")) for a in x.get("arguments") or []]
    place = MAKERS[name]
    if place >= 0:
        return args[place] if len(args) > place else None
    first, second = (args + [None, None])[:2]
    if first is None or (len(args) > 1 and second is None):
        return None
    return first if second is None else abs(second - first)


def _visit(x, visible: frozenset[str], out: Reads) -> None:
    """Collect what ``x`` reads, ``visible`` being the CTE names in scope at ``x``."""
    if isinstance(x, list):
        for v in x:
            _visit(v, visible, out)
        return
    if not isinstance(x, dict):
        return
    ctes = [e for e in ((x.get("cte_map") or {}).get("map") or []) if isinstance(e, dict)]
    if ctes:
        before: set[str] = set()
        for entry in ctes:       # each CTE sees those defined before it, not itself, not those after
            _visit((entry.get("value") or {}).get("query_node"), visible | before, out)
            before.add(fold(entry.get("key") or ""))
        visible = visible | before
    skip = {"cte_map"}
    if x.get("type") == "RECURSIVE_CTE_NODE":    # only the recursive branch sees the CTE's own name
        _visit(x.get("right"), visible | {fold(x.get("cte_name") or "")}, out)
        skip.add("right")
    kind = x.get("type")
    if isinstance(kind, str) and kind.endswith("_NODE") and kind not in READ_NODES:
        _add(out.writes, (kind.removesuffix("_NODE").removesuffix("_QUERY"), _written(x)))
    if x.get("type") == "BASE_TABLE":
        ref = _table(x)
        if ref.qualified or ref.name not in visible:
            _add(out.tables, ref)
    elif x.get("type") == "SHOW_REF" and x.get("table_name"):     # SHOW / DESCRIBE t, SHOW TABLES: never a CTE
        ref = TableRef(fold(x["table_name"].strip('"')), fold(x.get("schema_name") or ""),
                       fold(x.get("catalog_name") or ""))
        _add(out.tables, ref)
        _add(out.shown, ref)
    elif x.get("type") == "TABLE_FUNCTION":
        _add(out.table_functions, fold((x.get("function") or {}).get("function_name") or ""))
        _visit((x.get("function") or {}).get("arguments"), visible, out)     # a row generator is not a maker
        skip.add("function")
    elif x.get("class") == "TYPE" and x.get("type_name"):
        _add(out.types, fold(f"{x.get('schema') or 'main'}.{x['type_name']}"))
    elif x.get("class") in ("FUNCTION", "AGGREGATE", "WINDOW"):
        name = fold(x.get("function_name") or "")
        _add(out.functions, name)
        if name in MAKERS:
            out.made.append((name, _count(name, x)))
    for key, value in x.items():
        if key not in skip and isinstance(value, dict | list):
            _visit(value, visible, out)


def resolve(sql: str) -> Reads | None:
    """What the (first) SELECT statement in ``sql`` reads, CTEs resolved by scope; None when it does not parse."""
    node = parse(sql)
    if node is None:
        return None
    out = Reads()
    try:
        _visit(node, frozenset(), out)
    except RecursionError:         # nested deeper than Python walks: unreadable, so refused
        return None
    return out
