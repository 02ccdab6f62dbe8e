"""Other dialects' habits, rewritten into DuckDB before a query runs: small named rules, like the clean-ups of
``tidy`` (where they run first), each with its cases in ``tests/fixtures/sql_rules/habits.sql``.

A coder model trained mostly on MySQL, SQL Server and Postgres writes their functions and conventions.
Each rule here fixes one habit whose DuckDB meaning is certain, and leaves every other query as it was:

- ``zero_based_index``: ``xs[0]`` (always NULL in DuckDB, whose lists are 1-based) shifts every literal
  index of the query by one; ``xs[0:2]`` becomes ``xs[1:2]``;
- ``random_order_sample``: ``ORDER BY random() LIMIT n`` at the end of a query, a sample, is
  ``USING SAMPLE n ROWS`` (the same rows in law, without sorting the whole table);
- ``foreign_functions``: functions DuckDB does not have, in their DuckDB form: ``CHARINDEX``/``LOCATE``
  (``strpos``, arguments swapped), ``DATEDIFF(a, b)`` (MySQL: days from b to a), ``DATEDIFF(day, a, b)``
  and ``DATEPART(year, d)`` (SQL Server's bare units), ``TIMESTAMPDIFF(MINUTE, a, b)``, ``DATEADD(day,
  n, d)``, ``DATE_FORMAT``/``TO_CHAR``/``STR_TO_DATE`` (their format codes translated for ``strftime``/
  ``strptime``), ``SUBSTRING_INDEX(s, d, ±1)`` (``split_part``), ``ISNULL``/``NVL`` (``coalesce``),
  ``CURDATE``/``GETDATE``/``SYSDATE``.

Rules read DuckDB's own parse of the query (``db.ast``) and edit the text at its offsets, so the rest
keeps the model's spelling; a query DuckDB cannot parse is left alone.
"""
from __future__ import annotations

import re

from duckask.utils.db.ast import parse, span, walk
from duckask.utils.db.tree import sql_tree
from duckask.utils.sql.edit import replace_spans, top_level
from duckask.utils.sql.facts import SchemaFacts

_UNITS = {"year", "yy", "yyyy", "quarter", "qq", "month", "mm", "m", "week", "wk", "ww", "day", "dd", "d", "dayofyear",
          "hour", "hh", "minute", "mi", "n", "second", "ss", "s", "millisecond", "ms", "microsecond", "weekday", "dw"}
_UNIT_NAMES = {"yy": "year", "yyyy": "year", "qq": "quarter", "mm": "month", "m": "month", "wk": "week", "ww": "week",
               "dd": "day", "d": "day", "dayofyear": "doy", "hh": "hour", "mi": "minute", "n": "minute",
               "ss": "second", "s": "second", "ms": "millisecond", "weekday": "dow", "dw": "dow"}
#: MySQL DATE_FORMAT / STR_TO_DATE codes that differ from strftime's.
_MYSQL = {"%i": "%M", "%M": "%B", "%s": "%S", "%W": "%A", "%h": "%I", "%k": "%-H", "%e": "%-d", "%c": "%-m",
          "%T": "%H:%M:%S", "%r": "%I:%M:%S %p"}
#: Postgres TO_CHAR patterns, longest first.
_PG = [("YYYY", "%Y"), ("HH24", "%H"), ("HH12", "%I"), ("Month", "%B"), ("MONTH", "%B"), ("Mon", "%b"),
       ("Day", "%A"), ("DAY", "%A"), ("Dy", "%a"), ("YY", "%y"), ("MM", "%m"), ("DD", "%d"), ("HH", "%I"),
       ("MI", "%M"), ("SS", "%S"), ("AM", "%p"), ("PM", "%p")]


def split_args(call: str) -> tuple[str, list[str]] | None:
    """(name, argument texts) of one call's text ``name(a, b(c, d), 'e,f')``, split at the commas outside
    brackets and quotes; None when it is not a call."""
    m = re.match(r"\s*([A-Za-z_][\w]*)\s*\(", call)
    if not m or not call.rstrip().endswith(")"):
        return None
    body, args, start = call.rstrip()[m.end():-1], [], 0
    for i, ch in top_level(body):
        if ch == ",":
            args.append(body[start:i].strip())
            start = i + 1
    rest = body[start:].strip()
    return m.group(1), args + ([rest] if rest else [])


def _unit(text: str, facts: SchemaFacts) -> str | None:
    """A date-part word (``day``, ``mi``, ``'MINUTE'``) as DuckDB names it; a bare word that is one of the
    database's columns is a column, not a unit."""
    word = text.strip().strip("'\"").lower()
    if word not in _UNITS or (text.strip()[:1] not in "'\"" and any(word in c for c in facts.columns.values())):
        return None
    return _UNIT_NAMES.get(word, word)


def _mysql_format(text: str) -> str:
    return re.sub(r"%[a-zA-Z]", lambda m: _MYSQL.get(m.group(), m.group()), text)


def _pg_format(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        for pat, code in _PG:
            if text.startswith(pat, i):
                out.append(code)
                i += len(pat)
                break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _fmt(arg: str, convert) -> str:
    """A format string argument translated (a literal only; anything else is kept)."""
    return "'" + convert(arg.strip()[1:-1]) + "'" if re.fullmatch(r"\s*'[^']*'\s*", arg) else arg


def rewrite_call(name: str, args: list[str], facts: SchemaFacts) -> str | None:
    """The DuckDB text of one foreign call, or None to keep it."""
    name, n = name.lower(), len(args)
    if name in ("charindex", "locate") and n == 2:
        return f"strpos({args[1]}, {args[0]})"
    if name == "datediff" and n == 2:
        return f"date_diff('day', {args[1]}, {args[0]})"
    unit = _unit(args[0], facts) if args else None
    if name in ("datediff", "timestampdiff") and n == 3 and unit and args[0].strip()[:1] not in "'\"":
        return f"date_diff('{unit}', {args[1]}, {args[2]})"
    if name == "datepart" and n == 2 and unit:
        return f"date_part('{unit}', {args[1]})"
    if name == "dateadd" and n == 3 and unit:
        return f"({args[2]} + ({args[1]}) * INTERVAL 1 {unit.upper()})"
    if name == "date_format" and n == 2:
        return f"strftime({args[0]}, {_fmt(args[1], _mysql_format)})"
    if name == "str_to_date" and n == 2:
        return f"strptime({args[0]}, {_fmt(args[1], _mysql_format)})"
    if name == "to_char" and n == 2:
        return f"strftime({args[0]}, {_fmt(args[1], _pg_format)})"
    if name == "substring_index" and n == 3 and args[2].replace(" ", "") in ("1", "-1"):
        return f"split_part({args[0]}, {args[1]}, {args[2]})"
    if name in ("isnull", "nvl") and n == 2:
        return f"coalesce({args[0]}, {args[1]})"
    if name == "curdate" and n == 0:
        return "current_date"
    if name in ("getdate", "sysdate") and n == 0:
        return "current_timestamp"
    return None


FOREIGN = {"charindex", "locate", "datediff", "timestampdiff", "datepart", "dateadd", "date_format", "str_to_date",
           "to_char", "substring_index", "isnull", "nvl", "curdate", "getdate", "sysdate"}


def _outermost(edits: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """(offset, length, text) edits without those inside another (a nested call waits for the next pass)."""
    kept: list[tuple[int, int, str]] = []
    for loc, length, text in sorted(edits, key=lambda e: (e[0], -e[1])):
        if not kept or loc >= kept[-1][0] + kept[-1][1]:
            kept.append((loc, length, text))
    return kept


def foreign_functions(sql: str, facts: SchemaFacts) -> str:
    """Functions of MySQL, SQL Server and Postgres that DuckDB lacks, written as DuckDB's (the rest of the
    query keeps the model's spelling)."""
    for _ in range(3):                 # a foreign call inside another is rewritten on the next pass
        node = parse(sql)
        if node is None:
            return sql
        edits = []
        for d in walk(node):
            if d.get("class") == "FUNCTION" and (d.get("function_name") or "").lower() in FOREIGN:
                text = span(sql, d)
                call = split_args(text) if text else None
                new = rewrite_call(call[0], call[1], facts) if call else None
                if new and text:                    # a call is split only from its text
                    edits.append((d["query_location"], len(text), new))
        if not edits:
            break
        sql = replace_spans(sql, _outermost(edits))
    return sql


def zero_based_index(sql: str, facts: SchemaFacts) -> str:
    """``xs[0]`` is NULL in DuckDB, whose lists and strings count from 1: a query that indexes with 0 counted
    from 0, so every literal index of it (0 and up) moves up by one. Slices need nothing: ``xs[0:2]`` is
    already the first two."""
    node = parse(sql)
    if node is None:
        return sql
    indexes = [c for d in walk(node) if d.get("type") == "ARRAY_EXTRACT" and len(d.get("children") or []) == 2
               for c in [d["children"][1]] if c.get("class") == "CONSTANT"
               and (c.get("literal") or {}).get("kind") in ("INTEGER", "BIGINT") and c.get("query_location_length")]
    values = [int(c["literal"]["text"]) for c in indexes]
    if 0 not in values:
        return sql
    return replace_spans(sql, [(c["query_location"], c["query_location_length"], str(v + 1))
                               for c, v in zip(indexes, values) if v >= 0])


_RANDOM_TAIL = re.compile(r"\s+ORDER\s+BY\s+(?:random|rand)\s*\(\s*\)\s+LIMIT\s+(\d+)\s*;?\s*$", re.I)


def random_order_sample(sql: str, facts: SchemaFacts) -> str:
    """``... ORDER BY random() LIMIT n`` at the end of a query is a sample: ``USING SAMPLE n ROWS``."""
    m = _RANDOM_TAIL.search(sql)
    if not m or re.search(r"(?i)\b(GROUP\s+BY|UNION|INTERSECT|EXCEPT|QUALIFY|HAVING)\b", sql[:m.start()]):
        return sql
    fixed = f"{sql[:m.start()]} USING SAMPLE {m.group(1)} ROWS"
    return fixed if sql_tree(fixed) is not None else sql


#: Run in this order before tidy's own rules.
RULES = (foreign_functions, zero_based_index, random_order_sample)
