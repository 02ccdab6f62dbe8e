"""What a write will do, before anyone approves it: the estimated rows, a plain-language explanation,
and the reads behind it checked like any query.

- ``estimate_sql(c)``: the SELECT that counts the rows a T1 statement (or CREATE TABLE AS) touches: a
  COUNT over the WHERE of an UPDATE/DELETE (with its FROM/USING tables and CTEs; ``count(DISTINCT
  rowid)`` when other tables join in, then also ``count(*)``, the join's matches: DuckDB may report an
  UPDATE ... FROM once per match when several source rows match one row), the row count of the SELECT
  behind an INSERT or CREATE TABLE AS, the number of VALUES rows. Built on sqlglot's tree of the
  statement, run on the read-only connection.
- ``reads_sql(c)``: SELECTs over every expression the statement reads (SET values, RETURNING, defaults,
  checks and generated columns, the VALUES rows, a view's query), which ``safety.reads_server`` and a
  user's allowlist check as they check any query (``db.reads``: CTEs resolved by scope): a write cannot
  read files, the server's settings, or a table its proposer may not read either.
- ``explain(c, rows)``: one or two sentences, from small functions by kind (``EXPLAINERS``).
"""
from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from duckask.utils.writes.tiers import Classification

_D = "duckdb"


def _sql(node: exp.Expr) -> str:
    return node.sql(dialect=_D)


def _tree(c: Classification) -> exp.Expr:
    """The statement's tree: every T1/T2 classification (the only ones planned and explained) has one."""
    assert c.tree is not None, "only a T1/T2 statement is planned"
    return c.tree


def _table_ref(c: Classification) -> exp.Expr:
    table = _tree(c).this
    return (table.this if isinstance(table, exp.Schema) else table).copy()


def _joined(c: Classification, others: list[exp.Expr]) -> str:
    """``SELECT count(*) FROM target [CROSS JOIN others] WHERE ...`` for an UPDATE or DELETE."""
    target = _table_ref(c)
    counted = ["count(*)"] if not others else [f"count(DISTINCT {target.alias_or_name}.rowid)", "count(*)"]
    select = exp.select(*counted).from_(target)
    for other in others:
        select = select.join(other.copy(), join_type="CROSS")
    tree = _tree(c)
    where = tree.args.get("where")
    if where is not None:
        select = select.where(where.this.copy())
    if tree.args.get("with_") is not None:
        select.set("with_", tree.args["with_"].copy())
    return _sql(select)


def _source(c: Classification) -> exp.Expr | None:
    """The query or VALUES behind an INSERT or CREATE TABLE/VIEW AS."""
    return _tree(c).args.get("expression")


def estimate_sql(c: Classification) -> str | None:
    """The COUNT query for ``c``, or None when it changes no rows (schema only) or needs no query."""
    t = c.tree
    if isinstance(t, exp.Delete):
        return _joined(c, list(t.args.get("using") or []))
    if isinstance(t, exp.Update):
        from_ = t.args.get("from_")
        return _joined(c, [from_.this, *(from_.args.get("joins") or [])] if from_ is not None else [])
    source = _source(c)
    if isinstance(t, exp.Insert | exp.Create) and c.kind in ("INSERT", "CREATE TABLE") and source is not None:
        if isinstance(source, exp.Values):
            return None           # the rows are counted in the statement
        return f"SELECT count(*) FROM ({_sql(source)}) AS duckask_rows"
    return None


def counted_rows(c: Classification) -> int | None:
    """Rows known from the statement itself: VALUES rows, DEFAULT VALUES, 0 for schema-only changes."""
    t = c.tree
    source = _source(c)
    if isinstance(t, exp.Insert):
        if isinstance(source, exp.Values):
            return len(source.expressions)
        return 1 if source is None else None
    if c.tier == 2 and not (c.kind == "CREATE TABLE" and source is not None):
        return 0
    return None


def checks_rows(c: Classification) -> bool:
    """Whether the actual row count is compared with the estimate (a data change, or CREATE TABLE AS)."""
    return c.tier == 1 or (c.kind == "CREATE TABLE" and _source(c) is not None)


#: Where a write keeps expressions it evaluates: defaults, checks and generated columns (in CREATE TABLE,
#: ADD COLUMN, ADD CONSTRAINT), and RETURNING.
_VALUE_HOLDERS = (exp.DefaultColumnConstraint, exp.CheckColumnConstraint, exp.ComputedColumnConstraint,
                  exp.Returning)


def _values(t: exp.Expr) -> list[exp.Expression]:
    """Every value expression a write evaluates, apart from its source query and WHERE (the estimate's)."""
    out: list[exp.Expression] = []
    if isinstance(t, exp.Update):
        out += [e.expression for e in t.expressions if isinstance(e, exp.EQ)]
    for holder in t.find_all(*_VALUE_HOLDERS):
        out += holder.expressions if isinstance(holder, exp.Returning) else [holder.this]
    for alter in t.find_all(exp.AlterColumn):
        out += [alter.args[k] for k in ("default", "using") if isinstance(alter.args.get(k), exp.Expression)]
    conflict = t.args.get("conflict")
    if conflict is not None:
        out += [e.expression for e in conflict.find_all(exp.EQ)]
        out += [w.this for w in conflict.find_all(exp.Where)]
    return [v for v in out if isinstance(v, exp.Expression)]


def reads_sql(c: Classification) -> list[str]:
    """SELECTs over everything the statement reads besides its WHERE (which ``estimate_sql`` reads): the SET
    values, RETURNING, defaults, checks, generated columns, ON CONFLICT updates (each over the target, with
    the statement's CTEs), and the VALUES rows or the query behind an INSERT or CREATE ... AS. They are never
    run: ``safety.reads_server`` and a user's allowlist check them as they check any query, so a write
    cannot read files, the server's settings or a table its proposer may not read either."""
    t = _tree(c)
    out = []
    values = [v.copy() for v in _values(t)]
    if values:
        select = exp.select(*values)
        if c.kind in ("UPDATE", "DELETE", "INSERT") or (isinstance(t, exp.Alter) and c.target):
            select = select.from_(_table_ref(c))
        if t.args.get("with_") is not None:
            select.set("with_", t.args["with_"].copy())
        out.append(_sql(select))
    source = _source(c)
    if isinstance(source, exp.Values):
        out.append(f"SELECT * FROM ({_sql(source)}) AS duckask_values")
    elif isinstance(source, exp.Query):
        out.append(_sql(source))
    return out


# -- explanations: one small function per kind ------------------------------------------------------------
def _where(c: Classification) -> str:
    where = _tree(c).args.get("where")
    return f" where {_sql(where.this)}" if where is not None else ""


def _rows(n: int | None) -> str:
    return "an unknown number of rows" if n is None else f"{n:,} row{'s' if n != 1 else ''}"


def explain_delete(c: Classification, n: int | None) -> str:
    if _tree(c).args.get("where") is None:
        return f"Deletes EVERY row of {c.target} ({_rows(n)}); the table stays, empty."
    return f"Deletes the rows of {c.target}{_where(c)}: {_rows(n)}."


def explain_update(c: Classification, n: int | None) -> str:
    sets = ", ".join(f"{_sql(e.this)} to {_sql(e.expression)}" for e in _tree(c).expressions if isinstance(e, exp.EQ))
    scope = _where(c) or " (every row: there is no WHERE)"
    return f"Sets {sets} in the rows of {c.target}{scope}: {_rows(n)}."


def explain_insert(c: Classification, n: int | None) -> str:
    source = _source(c)
    origin = "the values given" if isinstance(source, exp.Values) or source is None else \
        f"a query over {', '.join(sorted({t.name for t in source.find_all(exp.Table)})) or 'no table'}"
    conflict = _tree(c).args.get("conflict") is not None or _tree(c).args.get("alternative") is not None
    tail = " Rows that clash with an existing key replace or skip it (the estimate is an upper bound)." \
        if conflict else ""
    return f"Adds {_rows(n)} to {c.target} from {origin}.{tail}"


def explain_create(c: Classification, n: int | None) -> str:
    source = _source(c)
    if c.kind == "CREATE INDEX":
        return f"Creates an index {_tree(c).this.name} on {c.target}; no data changes."
    if c.kind == "CREATE VIEW":
        return f"Creates the view {c.target}, a saved query (no data is copied)."
    if source is not None:
        return f"Creates the new table {c.target} holding the query's result: {_rows(n)}."
    return f"Creates the new, empty table {c.target}."


def explain_alter(c: Classification, _n: int | None) -> str:
    if isinstance(c.tree, exp.Comment):
        return f"Changes the description of {c.target}; no data changes."
    parts = []
    for a in _tree(c).args.get("actions") or []:
        if isinstance(a, exp.ColumnDef):
            parts.append(f"adds the column {_sql(a)}")
        elif isinstance(a, exp.AlterRename):
            parts.append(f"renames it to {_sql(a.this)}")
        elif isinstance(a, exp.RenameColumn):
            parts.append(f"renames the column {_sql(a.this)} to {_sql(a.args['to'])}")
        elif isinstance(a, exp.AddConstraint):
            parts.append(f"adds the constraint {_sql(a).removeprefix('ADD ')} (refused if the rows break it)")
        else:
            parts.append(f"changes the column {_sql(a.this)}")
    return f"Alters {c.target}: {'; '.join(parts)}. Existing rows are kept."


EXPLAINERS: dict[str, Callable[[Classification, int | None], str]] = {
    "DELETE": explain_delete, "UPDATE": explain_update, "INSERT": explain_insert,
    "CREATE TABLE": explain_create, "CREATE VIEW": explain_create, "CREATE INDEX": explain_create,
    "ALTER TABLE": explain_alter, "ALTER VIEW": explain_alter, "COMMENT ON": explain_alter,
}


def explain(c: Classification, rows: int | None) -> str:
    if c.tier == 3:
        return f"Blocked ({c.tier_name}): {c.reason}."
    return EXPLAINERS[c.kind](c, rows)
