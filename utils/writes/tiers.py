"""Security tiers of a statement, from the parsers, never from regexes over the text.

=====  =============================================  =========================================
tier   what                                           what duckask does with it
=====  =============================================  =========================================
T0     a read: one SELECT / WITH statement             runs (``safety.check_sql`` and the
                                                      read-only connection, as for every query)
T1     a data change: INSERT, UPDATE, DELETE           only with ``allow_writes``, after approval
T2     a schema change: CREATE TABLE / VIEW / INDEX,   only with ``allow_writes``, after approval
       ALTER TABLE (add, rename, retype a column;
       add a key or constraint; rename a table),
       COMMENT ON
T3     everything else: DROP, TRUNCATE, ALTER ... DROP  always blocked, approved or not
       COLUMN, CREATE OR REPLACE TABLE, CREATE
       SCHEMA/SEQUENCE/MACRO/SECRET/TYPE, ATTACH,
       DETACH, COPY, EXPORT, INSTALL/LOAD, SET,
       PRAGMA, CALL, transactions, MERGE, several
       statements, anything that cannot be classified
=====  =============================================  =========================================

A statement runs every write in its tree: DuckDB runs ``WITH d AS (DELETE FROM salaries RETURNING 1) INSERT INTO
teams ...`` whole, the DELETE too, even where nothing reads ``d``. So any data-modifying node *below* the root
(``nested_writes``: INSERT, UPDATE, DELETE, MERGE, COPY, CREATE, DROP, ALTER, TRUNCATE, a bare command) makes the
statement T3, and the card of a T1/T2 names the one write it runs (``Classification.runs``). The engine's binder
reads the statement a third time when it is proposed and again inside the write's transaction (``engine_writes``:
``json_serialize_plan`` binds writes too): more than one writing operator, or one on another table than the card
names, is blocked as well.

Two parsers must agree: DuckDB's own (``duckdb.extract_statements``: the statement type) and
sqlglot's DuckDB dialect (the tree: which table, which kind of CREATE, which ALTER action; DuckDB
serializes only SELECTs to JSON). A statement either parser cannot read, or on which they disagree
(DuckDB parses ``TRUNCATE`` as a DELETE), is T3. Each T1/T2 rule is a small named function in
``RULES``; the first that places the statement wins, and one that places none leaves it T3.

Run on its own::

    python -m duckask.utils.writes.tiers "DELETE FROM people WHERE age > 130"
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import duckdb
import sqlglot
from sqlglot import exp

from duckask.utils.db.ast import statement_types
from duckask.utils.db.errors import UnsafeSQLError
from duckask.utils.db.lexing import one_reading

TIER_NAMES = {0: "T0 read", 1: "T1 data change", 2: "T2 schema change", 3: "T3 blocked"}

#: Why the well-known T3 statement types are blocked (by DuckDB's statement type).
_T3_WHY = {
    "DROP": "removes a table, view or schema and its data",
    "ATTACH": "opens another database file", "DETACH": "closes an attached database",
    "COPY": "reads or writes files (export with duckask's own --out instead)",
    "COPY_DATABASE": "copies a whole database", "EXPORT": "writes files (use --out instead)",
    "LOAD": "installs or loads an extension", "EXTENSION": "installs or loads an extension",
    "SET": "changes a setting", "VARIABLE_SET": "sets a variable", "PRAGMA": "changes or reads server settings",
    "CALL": "calls a table function or a server procedure", "TRANSACTION": "controls the transaction, "
    "which duckask holds itself", "VACUUM": "rewrites storage", "MERGE_INTO": "merges tables (not classified)",
    "CREATE_FUNC": "creates a macro or function", "PREPARE": "prepares a statement", "EXECUTE": "runs a "
    "prepared statement", "EXPLAIN": "is not a change (and an EXPLAIN ANALYZE runs its statement)",
    "ANALYZE": "rewrites statistics",
    "MULTI": "is, as DuckDB reads it, several statements in one (ADD COLUMN ... NOT NULL is an ADD and a SET NOT "
             "NULL): send them one at a time",
}


@dataclass(frozen=True)
class Classification:
    tier: int                       # 0 read, 1 data change, 2 schema change, 3 blocked
    kind: str                       # SELECT, INSERT, UPDATE, DELETE, CREATE TABLE, ..., or DuckDB's type
    statement: str                  # the one statement, without a trailing ';'
    reason: str                     # why this tier (for T3: why it is blocked)
    target: str | None = None       # the table (or view, index) the statement writes
    tree: exp.Expr | None = field(default=None, compare=False, repr=False)

    @property
    def runs(self) -> list[str]:
        """Every write the statement runs, as the card names it ("INSERT on teams"): one for a T1/T2 (a statement
        with a second write inside is T3), none for a read or a blocked statement."""
        on = " " if self.kind.endswith(" ON") else " on "
        return [f"{self.kind}{on}{self.target}" if self.target else self.kind] if self.tier in (1, 2) else []

    @property
    def tier_name(self) -> str:
        return TIER_NAMES[self.tier]

    def as_dict(self) -> dict:
        return {"tier": self.tier, "tier_name": self.tier_name, "kind": self.kind, "target": self.target,
                "reason": self.reason, "sql": self.statement}


def is_write(sql: str) -> bool:
    """Whether ``sql`` holds anything but SELECTs, as DuckDB's parser reads it: such text goes to the write
    path (tiers, approval, audit). Text that does not parse stays a read, and the executor's error says
    what is wrong with it."""
    return any(k != "SELECT" for k in statement_types(sql) or ["SELECT"])


def _name(table: exp.Expr | None) -> str | None:
    if isinstance(table, exp.Schema):
        table = table.this
    if isinstance(table, exp.Table):
        return ".".join(p for p in (table.args.get("db") and table.db, table.name) if p) or None
    if isinstance(table, exp.Index):
        return table.name
    return None


# -- the T1/T2 rules: each returns (tier, kind, reason) or None --------------------------------------------
Rule = Callable[[str, exp.Expr], "tuple[int, str, str] | None"]


def data_change(duck: str, tree: exp.Expr) -> tuple[int, str, str] | None:
    pairs = {"INSERT": exp.Insert, "UPDATE": exp.Update, "DELETE": exp.Delete}
    if duck in pairs and isinstance(tree, pairs[duck]):
        return 1, duck, f"{duck} changes rows of a table"
    return None


def create_object(duck: str, tree: exp.Expr) -> tuple[int, str, str] | None:
    if duck != "CREATE" or not isinstance(tree, exp.Create):
        return None
    kind = (tree.args.get("kind") or "").upper()
    if kind not in ("TABLE", "VIEW", "INDEX"):
        return 3, f"CREATE {kind or '?'}", f"CREATE {kind or 'of this kind'} is not a table, view or index"
    if kind == "TABLE" and tree.args.get("replace"):
        return 3, "CREATE OR REPLACE TABLE", "CREATE OR REPLACE TABLE drops the table it replaces, with its data"
    return 2, f"CREATE {kind}", f"CREATE {kind} adds to the schema"


_SAFE_ALTER = (exp.ColumnDef, exp.RenameColumn, exp.AlterColumn, exp.AlterRename, exp.AddConstraint)


def alter_table(duck: str, tree: exp.Expr) -> tuple[int, str, str] | None:
    if duck != "ALTER":
        return None
    if isinstance(tree, exp.Comment):
        return 2, "COMMENT ON", "COMMENT ON changes a description in the schema"
    if not isinstance(tree, exp.Alter):
        return None
    actions = tree.args.get("actions") or []
    if any(isinstance(a, exp.Drop) for a in actions):
        return 3, "ALTER TABLE DROP", "ALTER ... DROP removes a column and its data"
    if actions and all(isinstance(a, _SAFE_ALTER) for a in actions):
        return 2, f"ALTER {(tree.args.get('kind') or 'TABLE').upper()}", "ALTER changes a table's definition"
    return None


RULES: list[Rule] = [data_change, create_object, alter_table]


#: sqlglot's nodes for statements that change something; below the root, each is a second write the card would hide.
_WRITE_NODES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Copy, exp.Create, exp.Drop, exp.TruncateTable,
                exp.Alter, exp.Command, exp.Set, exp.Pragma)


def nested_writes(tree: exp.Expr) -> list[str]:
    """Every write below the root of ``tree`` ("DELETE on salaries"): a data-modifying ``WITH``, a write in a
    subquery, an ``INSERT ... BY NAME`` whose query holds one. The root's own write is the card's."""
    out = []
    own = {id(n) for a in (tree.args.get("actions") or []) if isinstance(tree, exp.Alter) for n in a.walk()}
    for node in tree.find_all(*_WRITE_NODES):
        if node is not tree and id(node) not in own:     # ALTER's own actions (DROP COLUMN, SET DEFAULT) are its write
            verb = type(node).__name__.upper().replace("TRUNCATETABLE", "TRUNCATE")
            table = _name(node.this) if isinstance(node.this, exp.Expression) else None
            out.append(f"{verb} on {table}" if table else verb)
    return out


def engine_writes(bound, c: Classification) -> str | None:
    """Why the engine's binding of a T1/T2 statement (``binder.Bound.writes``) does not match its card: more than
    one writing operator, or a data change of another table than ``c.target`` (a schema change names what it
    creates: ADD PRIMARY KEY binds as the index it makes); None when it matches or could not be bound
    (then running it fails the same way)."""
    if bound is None or c.tier not in (1, 2):
        return None
    ops = [f"{op.replace('_', ' ')} on {table}" for op, table in bound.writes]
    if len(ops) > 1:
        return (f"DuckDB's binder reads {len(ops)} changes in it ({'; '.join(ops)}), and a card names one write: send "
                "each change as a statement of its own")
    if ops and c.tier == 1 and c.target and \
            bound.writes[0][1].split(".")[-1] != c.target.split(".")[-1].lower().strip('"'):
        return f"DuckDB's binder reads it as {ops[0]}, not a change of {c.target}"
    return None


def server_reach(tree: exp.Expr) -> str | None:
    """Why a write reaches the server's state, read from its whole tree: a call of a system function
    (``current_setting``, ``duckdb_*``, ...) anywhere in it (a default, a check, RETURNING, a view's query)
    or a table in a system schema. Function names cannot be shadowed, so no scope is needed; the tables it
    reads are checked, CTEs resolved by scope, by ``writes`` on ``plan.reads_sql``."""
    from duckask.utils.db.safety import SYSTEM_SCHEMAS, server_function

    for node in tree.find_all(exp.Func):
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        if server_function(name):
            return f"{name}() reads the server's settings or state, which a change may not store or return"
    for table in tree.find_all(exp.Table):
        if (table.db or "").lower() in SYSTEM_SCHEMAS:
            return f"{table.db}.{table.name} is a system view, which a change may not read"
    return None


def classify(sql: str) -> Classification:
    """The tier of ``sql``: exactly one statement, read by DuckDB's parser and sqlglot's."""
    text = (sql or "").strip()
    if not text:
        return Classification(3, "EMPTY", "", "the statement is empty")
    try:
        statements = duckdb.extract_statements(text)
    except duckdb.Error as e:
        return Classification(3, "UNPARSED", text, f"DuckDB cannot parse it: {str(e).splitlines()[0]}")
    if len(statements) != 1:
        kinds = ", ".join(s.type.name for s in statements) or "none"
        return Classification(3, "MULTI", text, f"exactly one statement at a time, got {len(statements)} ({kinds})")
    types = statement_types(statements[0].query)
    assert types is not None, "DuckDB's parser read it just above"
    duck = types[0]
    statement = statements[0].query.strip().rstrip(";").strip()
    if duck == "SELECT":
        return Classification(0, "SELECT", statement, "a read")
    try:                  # the card shows, estimates and explains the text both parsers read alike: the one that runs
        statement = one_reading(statement).strip()
    except UnsafeSQLError as e:
        return Classification(3, duck, statement, f"it cannot be read one way ({str(e).removeprefix('refused: ')})")
    if duck not in ("INSERT", "UPDATE", "DELETE", "CREATE", "ALTER"):
        return Classification(3, duck, statement, f"{duck} {_T3_WHY.get(duck, 'is not a T1 or T2 statement')}")
    try:
        with _quiet_sqlglot():   # sqlglot warns when it falls back to a bare Command; that is T3 here anyway
            tree = sqlglot.parse_one(statement, dialect="duckdb")
    except sqlglot.errors.SqlglotError as e:
        return Classification(3, duck, statement, f"it cannot be classified ({str(e).splitlines()[0]})")
    inside = nested_writes(tree)
    if inside:
        return Classification(3, duck, statement, f"it runs {', '.join(inside)} inside the {duck} (a data-modifying "
                              "WITH or subquery): a card would name one write and run more; send each change as a "
                              "statement of its own", _name(tree.this) if isinstance(tree.this, exp.Expression)
                              else None, tree)
    for rule in RULES:
        placed = rule(duck, tree)
        if placed:
            tier, kind, reason = placed
            target = _name(tree.this) if not isinstance(tree, exp.Create) or kind != "CREATE INDEX" else \
                _name(tree.this.args.get("table"))
            reach = server_reach(tree)
            if reach and tier < 3:
                return Classification(3, kind, statement, reach, target, tree)
            return Classification(tier, kind, statement, reason, target, tree)
    if isinstance(tree, exp.TruncateTable):
        return Classification(3, "TRUNCATE", statement, "TRUNCATE removes every row of a table")
    what = type(tree).__name__.upper()
    return Classification(3, duck, statement, f"DuckDB reads a {duck} statement and sqlglot a {what}: it cannot be "
                                               "classified, so it is blocked")


@contextlib.contextmanager
def _quiet_sqlglot() -> Iterator[None]:
    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print the security tier of one SQL statement.")
    ap.add_argument("sql")
    args = ap.parse_args(argv)
    c = classify(args.sql)
    print(json.dumps(c.as_dict(), indent=2))
    return 0 if c.tier < 3 else 2


if __name__ == "__main__":
    sys.exit(main())
