"""Free repairs: a query DuckDB rejected, fixed without an LLM call when the error names the fix.

``REPAIRS`` is the ordered list of rules; ``repair`` returns the first rule's fix. Each rule is
``rule(sql, error, facts) -> fixed SQL or None``, where ``error`` is the parsed DuckDB message
(``errors.QueryError``) and ``facts`` the schema (``facts.SchemaFacts``). A rule fires only when its
fix is unambiguous; anything else is left to ErrorFixer's feedback to the model. ``sql.drafts`` applies
them (``repair``: the fix tidied; ``run_repaired``: a query run again while a fix exists).
"""
from __future__ import annotations

import difflib
import re

from duckask.utils.db.ast import parse, table_aliases
from duckask.utils.sql.edit import replace_ident, spelled
from duckask.utils.sql.errors import QueryError, parse_error
from duckask.utils.sql.facts import SchemaFacts
from duckask.utils.sql.join_repair import join_forgotten_table


def _close(name: str, candidates: list[str]) -> str | None:
    """The one candidate close to ``name`` (any case), as DuckDB spelled it; None if none or several."""
    close = difflib.get_close_matches(name.lower(), [c.lower() for c in candidates], n=2, cutoff=0.75)
    return next(c for c in candidates if c.lower() == close[0]) if len(close) == 1 else None


def respell_column(sql: str, err: QueryError, facts: SchemaFacts) -> str | None:
    """A misspelt unqualified column with exactly one close candidate (``nme`` -> ``name``)."""
    if err.kind != "column_not_found" or "." in err.name:
        return None
    good = _close(err.name.split(".")[-1], [c.split(".")[-1] for c in err.candidates])
    return replace_ident(sql, err.name, good) if good else None


def requalify_column(sql: str, err: QueryError, facts: SchemaFacts) -> str | None:
    """A column asked of the wrong alias (``T2.name`` where only T1's table has ``name``), when exactly
    one other table of the query has it; explicit aliases win over bare subquery tables."""
    if err.kind != "qualified_column" or not facts.columns:
        return None
    aliases = table_aliases(sql)
    owners = [a for a, t in aliases.items()
              if a != err.qualifier.lower() and err.name.lower() in facts.columns.get(t.lower(), set())]
    if len(owners) > 1:
        owners = [a for a in owners if a not in {t.lower() for t in aliases.values()}]
    if len(owners) != 1:
        return None
    real = spelled(sql, owners[0])
    pat = re.compile(r'(?<![\w"])' + re.escape(err.qualifier) + r'\.("?' + re.escape(err.name) + r'"?)(?![\w"])', re.I)
    return pat.sub(lambda m: f"{real}.{m.group(1)}", sql)


def respell_qualified_column(sql: str, err: QueryError, facts: SchemaFacts) -> str | None:
    """A misspelt qualified column with exactly one close candidate (``T1.nmae`` -> ``T1.name``)."""
    if err.kind != "qualified_column":
        return None
    good = _close(err.name, [c.split(".")[-1] for c in err.candidates])
    if good is None:
        return None
    pat = re.compile(r'(?<![\w"])' + re.escape(err.qualifier) + r'\."?' + re.escape(err.name) + r'"?(?![\w"])', re.I)
    return pat.sub(f"{err.qualifier}.{good}", sql)


def respell_table(sql: str, err: QueryError, facts: SchemaFacts) -> str | None:
    """A misspelt table whose name DuckDB suggests and that is close to it (``singers`` -> ``singer``)."""
    if err.kind != "table_not_found":
        return None
    good = err.candidates[0]
    if difflib.SequenceMatcher(None, err.name.lower(), good.lower()).ratio() < 0.75:
        return None
    return replace_ident(sql, err.name, good)


def add_to_group_by(sql: str, err: QueryError, facts: SchemaFacts) -> str | None:
    """A selected column missing from the one GROUP BY: appended to it."""
    if err.kind != "group_by":
        return None
    groups = (parse(sql) or {}).get("group_expressions") or []
    if len(re.findall(r"\bGROUP\s+BY\b", sql, re.I)) != 1 or not groups:
        return None
    last = groups[-1]
    if not last.get("query_location_length"):
        return None
    end = last["query_location"] + last["query_location_length"]
    ref = err.name if re.fullmatch(r"[\w.]+", err.name) else f'"{err.name}"'
    return sql[:end] + f", {ref}" + sql[end:]


def expand_metric(sql: str, err: QueryError, facts: SchemaFacts) -> str | None:
    """A named metric of the semantic file used as if it were a column (``MAX(game_margin)``): put its
    expression in its place (``MAX((ABS(HOME_PTS - AWAY_PTS)))``)."""
    if err.kind != "column_not_found" or "." in err.name:
        return None
    expression = facts.metrics.get(err.name.lower())
    return replace_ident(sql, err.name, f"({expression})") if expression else None


#: Tried in this order; the first fix that changes the query wins.
REPAIRS = (
    expand_metric,               # a metric's name is never a misspelling of a column
    join_forgotten_table,        # needs foreign keys: a column of a table the query did not join
    respell_column,
    requalify_column,            # needs column names: before a respelling of the same column
    respell_qualified_column,
    respell_table,
    add_to_group_by,
)


def repair(sql: str, error: str, facts: SchemaFacts | None = None) -> str | None:
    """A fixed query when the error names the fix unambiguously, else None."""
    err = parse_error(error)
    if err.kind == "other":
        return None
    facts = facts or SchemaFacts()
    for rule in REPAIRS:
        fixed = rule(sql, err, facts)
        if fixed and fixed != sql:
            return fixed
    return None

