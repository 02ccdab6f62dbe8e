"""A checked DuckDB query in a live engine's dialect (``source_mode: live``), decided on trees, never on text.

``to_engine(sql, dialect, names, models, allowed)`` takes a query ``safety.check_sql`` has already accepted on the
source's local catalog (its shadow file: the same tables, bound by DuckDB's binder) and

1. reads it once (``lexing.one_reading``: the text DuckDB's lexer reads, comments out, which sqlglot must tokenize
   alike) and parses that with sqlglot (DuckDB's dialect); the semantic directory's models, which live only in
   duckask, become CTEs of the query (``models``: name -> its SQL);
2. resolves every table name by scope (``cte_tables``: a bare name is a CTE only where a CTE of that name is in
   scope, the way the engine resolves it) and gives every other table its name in the engine (``names``: the local
   name -> (schema, table)), schema-qualified; a CTE and its uses get one quoted spelling, so the engine's case
   rules cannot part them; a table that is neither a CTE in scope nor one of the source's tables is refused;
3. rewrites what the engine reads otherwise (``_portable``: Postgres has no ``round(double, int)``, and a column
   named ``user`` is quoted, since bare it is the engine's ``current_user``);
4. writes it in the engine's dialect without comments (sqlglot; what the dialect cannot say is an error, not a
   guess);
5. reads the result once more in the engine's dialect (``one_reading``: DuckDB's lexer is PostgreSQL's scanner) and
   checks that tree (``check_engine``): one SELECT, no data-modifying CTE, every bare name a CTE in scope, every
   table one the asker may read (``allowed``: the asker's allowlist in the engine's names; every table of the source
   when no allowlist limits the asker), no object-identifier (``oid``, ``reg*``) type, no system column (``ctid``,
   ``xmin``, ...), no session word (``user``, ``current_role``, ...), and every function on an allowlist: typed
   functions sqlglot knows (pure SQL functions), minus a denylist of typed ones with effects, and of the functions
   sqlglot does not know, only ``SAFE_FUNCTIONS``. ``pg_sleep``, ``pg_read_file``, ``set_config``, ``dblink``,
   ``lo_import``, ``nextval``, ``pg_terminate_backend`` and their like never reach the engine.

Every refusal is an ``EngineRefusal`` (an ``UnsafeSQLError``) whose message says what and why; a query the
dialect cannot express is an ``EngineError`` the ErrorFixer sees like any error.
"""
from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, UnsupportedError

from duckask.utils.db.errors import UnsafeSQLError
from duckask.utils.db.lexing import one_reading

#: An ADBC dialect's name -> sqlglot's (a Flight SQL server's engine is not known: Dremio and most others
#: speak ANSI SQL, sqlglot's default dialect).
SQLGLOT = {"postgresql": "postgres", "sqlite": "sqlite", "snowflake": "snowflake", "bigquery": "bigquery",
           "flightsql": ""}

#: Functions sqlglot parses as ``Anonymous`` (it has no class for them) that a live query may call: pure
#: functions of their arguments. Anything else unknown is refused, so a function added to an engine later is
#: refused until it is added here.
SAFE_FUNCTIONS = frozenset("""
abs acos asin atan atan2 cbrt ceil ceiling cos cot degrees div exp floor ln log log10 mod pi power radians round
sign sin sqrt tan trunc width_bucket random greatest least coalesce nullif
ascii bit_length btrim char_length character_length chr concat concat_ws format initcap left length lower lpad
ltrim md5 octet_length overlay position regexp_count regexp_like regexp_match regexp_matches regexp_replace
regexp_split_to_array regexp_substr repeat replace reverse right rpad rtrim split_part starts_with strpos substr
substring to_ascii translate trim upper quote_ident quote_literal
age date_bin date_part date_trunc extract isfinite justify_days justify_hours justify_interval make_date
make_interval make_time make_timestamp make_timestamptz to_char to_date to_number to_timestamp now
array_agg array_append array_cat array_length array_lower array_position array_positions array_remove
array_replace array_to_string array_upper cardinality string_to_array unnest generate_series
json_agg jsonb_agg json_array_length jsonb_array_length json_build_object jsonb_build_object json_extract_path
json_extract_path_text jsonb_extract_path jsonb_extract_path_text json_object_agg jsonb_object_agg json_typeof
jsonb_typeof to_json to_jsonb row_to_json jsonb_path_query_first
avg bit_and bit_or bool_and bool_or count every max min string_agg sum corr covar_pop covar_samp regr_avgx
regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy stddev stddev_pop stddev_samp
variance var_pop var_samp mode percentile_cont percentile_disc
row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
iif ifnull instr printf strftime julianday date time datetime unixepoch total group_concat
""".split())

#: Typed sqlglot functions that change state or reach past the data (sequences, files, the server's identity,
#: settings and sessions: every ``Current*`` node but the clock's): refused although sqlglot knows them.
DENIED_TYPES: tuple[type[exp.Expression], ...] = tuple(
    t for t in (getattr(exp, n, None) for n in ("NextValueFor", "SessionUser", "Uuid", "ReadCSV", "ReadParquet",
                                               "ToFile", "Seq1", "Seq2", "Seq4", "Seq8"))
    if t is not None)
CLOCK = frozenset({"CurrentDate", "CurrentDatetime", "CurrentTime", "CurrentTimestamp", "CurrentTimestampLTZ",
                   "CurrentTimezone"})


def _denied(node: exp.Func) -> bool:
    name = type(node).__name__
    return isinstance(node, DENIED_TYPES) or (name.startswith("Current") and name not in CLOCK)


#: Table functions a live query may read from (row generators).
TABLE_FUNCTIONS = frozenset({"generate_series", "unnest"})


class EngineRefusal(UnsafeSQLError):
    """The query may not be sent to the engine; the message says what and why."""


class EngineError(ValueError):
    """The query cannot be written in the engine's dialect (the ErrorFixer sees the message)."""


def engine_dialect(dialect: str) -> str:
    return SQLGLOT.get(dialect, "")


def to_engine(sql: str, dialect: str, names: dict[str, tuple[str, str]],
              models: dict[str, str] | None = None, allowed: set[tuple[str, str]] | None = None) -> str:
    """``sql`` (DuckDB's dialect, already checked) as the engine runs it; EngineRefusal / EngineError. ``allowed``:
    the (schema, table) pairs the asker may read in the engine (None: every table of the source)."""
    write = engine_dialect(dialect)
    try:
        tree = sqlglot.parse_one(one_reading(sql), read="duckdb")
    except ParseError as e:
        raise EngineError(f"cannot be written for {dialect}: sqlglot does not parse it ({_first(e)})") from None
    tree = _inline_models(tree, models or {})
    rename_tables(tree, names)
    tree = _portable(tree, write)
    try:
        out = tree.sql(dialect=write, unsupported_level=ErrorLevel.RAISE, comments=False)
    except UnsupportedError as e:
        raise EngineError(f"cannot be written for {dialect}: {_first(e)}; write it with functions both DuckDB "
                          f"and {dialect} have") from None
    source = {(s.lower(), t.lower()) for s, t in names.values()}
    check_engine(out, dialect, source if allowed is None else source & {(s.lower(), t.lower()) for s, t in allowed})
    return out


def _first(e: Exception) -> str:
    return " ".join(str(e).split())[:200]


def _key(ident: exp.Expression | None, fold_all: bool) -> str:
    """A name as the engine compares it: a quoted one as written, else lower-case (``fold_all``: DuckDB's reading,
    where quoting changes nothing)."""
    if not isinstance(ident, exp.Identifier):
        return str(ident or "").lower()
    return ident.this.lower() if fold_all or not ident.quoted else ident.this


def cte_tables(tree: exp.Expr, fold_all: bool = False) -> dict[int, exp.CTE]:
    """The tables of ``tree`` that name a CTE in scope (``id(table)`` -> that CTE), resolved as PostgreSQL and DuckDB
    do: a CTE is visible in the body of the query that defines it and in the CTEs defined after it in the same
    WITH; inside its own definition only in a ``WITH RECURSIVE``; a qualified name is never a CTE. Whatever is not
    found here is a table of the database. ``fold_all``: names compared as DuckDB does (case folded, quoted or
    not); else as the engine does (a quoted name as written)."""
    out: dict[int, exp.CTE] = {}
    stack: list[tuple[exp.Expr, dict[str, exp.CTE]]] = [(tree, {})]
    while stack:
        node, visible = stack.pop()
        with_ = next((v for k, v in node.args.items() if k in ("with", "with_") and isinstance(v, exp.With)), None)
        if with_ is not None:
            before = dict(visible)
            for cte in with_.expressions:
                own = {_key(cte.args["alias"].this, fold_all): cte} if with_.args.get("recursive") else {}
                stack.append((cte.this, {**before, **own}))
                before[_key(cte.args["alias"].this, fold_all)] = cte
            visible = before
        if isinstance(node, exp.Table) and not node.args.get("db") and not node.args.get("catalog") \
                and isinstance(node.this, exp.Identifier) and _key(node.this, fold_all) in visible:
            out[id(node)] = visible[_key(node.this, fold_all)]
        stack.extend((child, visible) for child in node.iter_expressions() if child is not with_)
    return out


def _inline_models(tree: exp.Expr, models: dict[str, str]) -> exp.Expr:
    """The models the query reads, as CTEs in front of it (a model may read another: all of them, in order)."""
    used = {t.name.lower() for t in tree.find_all(exp.Table) if not t.db}
    wanted = {m: s for m, s in models.items() if m.lower() in used}
    if not wanted or not isinstance(tree, exp.Query):
        return tree
    for name, body in reversed(list(models.items())):        # a model may read one listed before it
        if name in wanted or any(name.lower() in {t.name.lower() for t in sqlglot.parse_one(b, read="duckdb")
                                                  .find_all(exp.Table)} for b in wanted.values()):
            wanted[name] = body
    key = "with_" if "with_" in type(tree).arg_types else "with"       # sqlglot 30 names it with_
    outer = tree.args.get(key)
    ctes = [exp.CTE(this=sqlglot.parse_one(body, read="duckdb"), alias=exp.TableAlias(this=exp.to_identifier(name)))
            for name, body in models.items() if name in wanted]
    tree.set(key, exp.With(expressions=ctes + (list(outer.expressions) if outer else []),
                           recursive=bool(outer and outer.args.get("recursive"))))
    return tree


def rename_tables(tree: exp.Expr, names: dict[str, tuple[str, str]],
                  created: frozenset[str] | set[str] = frozenset(), *, alias: bool = True) -> None:
    """Every table of ``tree`` (DuckDB's reading) by its name in the engine (``names``), schema-qualified; a table
    that names a CTE in scope (``cte_tables``) and the CTE itself get one quoted lower-case spelling; a bare name in
    ``created`` (the table a CREATE makes) is left as it is; any other is refused. ``alias``: keep the local name as
    the table's alias (a query's columns qualified by it keep working)."""
    lowered = {k.lower(): v for k, v in names.items()}
    ctes = cte_tables(tree, fold_all=True)
    for table in list(tree.find_all(exp.Table)):
        if isinstance(table.this, exp.Func):          # a table function: checked on the engine's tree
            continue
        name = table.name.lower()
        if id(table) in ctes:
            table.set("this", exp.to_identifier(name, quoted=True))
            continue
        if not table.db and not table.catalog and name in created:
            continue
        if table.catalog or table.db.lower() not in ("", "main") or name not in lowered:
            raise EngineRefusal(f"refused: {table.sql('duckdb')} is not one of the source's tables")
        schema, real = lowered[name]
        table.set("this", exp.to_identifier(real, quoted=True))
        table.set("db", exp.to_identifier(schema, quoted=True) if schema else None)
        if alias and not table.alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(name, quoted=True)))
    for cte in set(ctes.values()) | set(tree.find_all(exp.CTE)):
        cte.args["alias"].set("this", exp.to_identifier(cte.alias_or_name.lower(), quoted=True))


def _portable(tree: exp.Expr, write: str) -> exp.Expr:
    """What the engine reads otherwise: a bare ``user`` (``current_role``, ...) is the engine's session, not a column
    of that name, so such a column is quoted; Postgres rounds to places only a NUMERIC (``round(double, int)`` does
    not exist), so the rounded value is cast first."""
    def fix(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier) and \
                node.this.this.lower() in SESSION_WORDS:
            node.this.set("quoted", True)
        if write == "postgres" and isinstance(node, exp.Round) and node.args.get("decimals") is not None and not (
                isinstance(node.this, exp.Cast) and node.this.to.is_type(*exp.DataType.REAL_TYPES)):
            node.set("this", exp.cast(node.this, exp.DataType.build("NUMERIC")))
        return node

    return tree.transform(fix)


#: Words the engine reads as its session, not as a column, when bare (PostgreSQL's SQL-standard functions).
SESSION_WORDS = frozenset({"user", "current_user", "current_role", "session_user", "system_user", "current_catalog",
                           "current_schema"})
#: PostgreSQL's system columns (no user column may be named so): a row's place, its transactions, its table's oid.
SYSTEM_COLUMNS = frozenset({"ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"})


def _reaches_catalog(node: exp.Expr) -> str | None:
    """Why ``node`` (of the engine's tree) reads the engine's catalog or session rather than the data, or None."""
    if isinstance(node, exp.ObjectIdentifier) or (
            isinstance(node, exp.DataType) and node.this == exp.DataType.Type.USERDEFINED
            and (str(node.args.get("kind") or "").lower() == "oid" or
                 str(node.args.get("kind") or "").lower().startswith("reg"))):
        return f"the type {node.sql()} names objects of the server's catalog (every relation, role, function)"
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
        name = node.this.this.lower()
        if name in SYSTEM_COLUMNS:
            return f"{name} is a system column of the server (a row's place or transaction), not data"
        if name in SESSION_WORDS and not node.this.quoted and not node.table:
            return f"{name} is the server's session (who is connected), not data"
    return None


def check_engine(sql: str, dialect: str, tables: set[tuple[str, str]]) -> None:
    """Refuse ``sql`` (the engine's dialect) unless it is one read-only SELECT over ``tables`` ((schema, table) as
    the engine spells them: the tables the asker may read) calling only allowed functions, every bare name a CTE
    in scope (see the module's text)."""
    read = engine_dialect(dialect)
    try:
        statements = [s for s in sqlglot.parse(one_reading(sql, read), read=read) if s is not None]
    except ParseError as e:
        raise EngineRefusal(f"refused: the query written for {dialect} does not parse again ({_first(e)})") from None
    except UnsafeSQLError as e:
        raise EngineRefusal(f"{e} (in the query written for {dialect})") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise EngineRefusal(f"refused: only one SELECT is sent to {dialect}")
    tree = statements[0]
    for node in tree.walk():
        if isinstance(node, (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Command,
                             exp.Into, exp.Lock)) or (isinstance(node, exp.Select) and node.args.get("locks")):
            raise EngineRefusal(f"refused: {type(node).__name__.upper()} inside a query sent to {dialect}")
        if isinstance(node, exp.Func):
            check_function(node, dialect)
        why = _reaches_catalog(node)
        if why:
            raise EngineRefusal(f"refused: {why}, which duckask does not send to {dialect}")
    ctes = cte_tables(tree)
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, exp.Func):
            fname = table.this.name.lower() if isinstance(table.this, exp.Anonymous) else \
                type(table.this).__name__.lower()
            if fname not in TABLE_FUNCTIONS and not isinstance(table.this, (exp.Unnest, exp.GenerateSeries)):
                raise EngineRefusal(f"refused: the table function {fname}() is not one {dialect} may run for duckask")
            continue
        if id(table) in ctes:
            continue
        if not table.db and ("", _key(table.this, False)) not in tables:      # SQLite's tables have no schema
            raise EngineRefusal(f"refused: {table.sql(read)} is no CTE in scope, and a bare name would be left to "
                                f"{dialect}'s search path")
        key = (_key(table.args.get("db"), False) if table.db else "", _key(table.this, False))
        if table.catalog or key not in tables:
            raise EngineRefusal(f"refused: {table.sql(read)} is not a table of the source this user may read")


def check_function(node: exp.Func, dialect: str) -> None:
    """Refuse a function the engine must not run for duckask (see the module's text)."""
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        if name not in SAFE_FUNCTIONS:
            raise EngineRefusal(f"refused: {name}() is not on the list of functions duckask sends to {dialect} "
                                "(pure SQL functions only: no sleeping, files, settings, sequences or sessions)")
    elif _denied(node):
        raise EngineRefusal(f"refused: {node.sql(engine_dialect(dialect))} reads or changes the server's state, "
                            "which duckask does not send to a live source")
