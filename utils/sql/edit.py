"""Editing SQL text where the AST gives no position: substitutions that leave string literals alone,
an identifier's spelling as the query writes it, and where the outermost FROM clause ends."""
from __future__ import annotations

import re

_STRING = re.compile(r"('(?:[^']|'')*')")
_CLAUSE_END = re.compile(r"\b(WHERE|GROUP\s+BY|HAVING|ORDER\s+BY|LIMIT|QUALIFY|WINDOW|UNION|INTERSECT|EXCEPT)\b", re.I)


def sub_outside_strings(pat: re.Pattern, repl, sql: str) -> str:
    """``pat.sub(repl, ...)`` on the SQL outside its string literals."""
    parts = _STRING.split(sql)
    return "".join(p if i % 2 else pat.sub(repl, p) for i, p in enumerate(parts))


def spelled(sql: str, name: str) -> str:
    """``name`` (an alias or table, any case) as the query writes it, to keep its case in edits."""
    return next((w for w in re.findall(r"[A-Za-z_]\w*", sql) if w.lower() == name.lower()), name)


def replace_ident(sql: str, old: str, new: str) -> str:
    """Replace an identifier outside string literals, case-insensitively, as a whole word."""
    pat = re.compile(r'(?<![\w."])"?' + re.escape(old) + r'"?(?![\w"])', re.I)
    return sub_outside_strings(pat, new, sql)


def top_level(text: str) -> list[tuple[int, str]]:
    """(offset, character) of every character of ``text`` outside brackets and quotes."""
    out, depth, quote = [], 0, ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            out.append((i, ch))
    return out


def replace_spans(sql: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply (offset, length, new text) edits, which must not overlap, from the end backwards."""
    for loc, length, new in sorted(set(edits), reverse=True):
        sql = sql[:loc] + new + sql[loc + length:]
    return sql


def outer_from_end(sql: str) -> int | None:
    """Where the outermost FROM clause ends (the offset of the next clause keyword at the same
    parenthesis depth, or the end of the query), or None without a top-level FROM."""
    # Blank out string literals and quoted identifiers so that their contents are not read as SQL.
    masked = re.sub(r"'(?:[^']|'')*'|\"[^\"]*\"", lambda m: "x" * len(m.group(0)), sql)
    depth, start = 0, None
    for i, ch in enumerate(masked):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and (i == 0 or not (masked[i - 1].isalnum() or masked[i - 1] == "_")):
            if start is None and re.match(r"FROM\b", masked[i:i + 5], re.I):
                start = i
            elif start is not None and _CLAUSE_END.match(masked, i):
                return i
    return None if start is None else len(sql.rstrip().rstrip(";"))
