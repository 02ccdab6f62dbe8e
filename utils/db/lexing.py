"""One reading of a statement's text: what DuckDB's lexer reads, handed to sqlglot only where sqlglot reads the same.

DuckDB's lexer is PostgreSQL's scanner: block comments nest (``/* /* */ */`` is one comment) and a string may be
``E'\\''``, ``$tag$ ... $tag$`` or ``x'ff'``. sqlglot's tokenizer reads some of these otherwise: its block comments
do not nest, so ``/*/* */ UNION ALL SELECT ... /* /* */* */ */`` is one comment to DuckDB and, to sqlglot, a
comment, a UNION and another comment. A check that reads DuckDB's parse and a rewrite that prints sqlglot's tree
would then decide about one query and send another (issue 62).

``one_reading(sql, dialect)`` is the text both read alike, or an ``UnsafeSQLError``:

1. the text is lexed by DuckDB (``duckdb.tokenize``; its offsets are UTF-8 bytes, mapped to characters here);
2. every comment, as DuckDB bounds it, becomes one space, and the result is lexed again: its tokens, read as
   text, must be the original's without the comments (what DuckDB runs is unchanged);
3. sqlglot tokenizes the comment-free text in ``dialect``; the two must agree (``_agree``): every token DuckDB
   starts, sqlglot starts at the same character; sqlglot may split a DuckDB literal (``x'ff'`` is a prefix and a
   string to it, ``.5`` a dot and a number, ``!~~`` two operators) but never start a token inside anything else
   (a string, a quoted name, a word; it reads ``ORDER BY`` as one token, DuckDB as two words), and it reads no comment
   (any it read, DuckDB read as code).

Anything else is refused, naming where the two readings part. The live path runs every query through it in
DuckDB's dialect (before the checks) and once more in the engine's (the text sent: PostgreSQL's own scanner is
DuckDB's); a write's card is classified from its result (``writes.tiers.classify``), so the card shows, estimates and
explains the statement that runs. tests/test_lexing.py is its differential test.
"""
from __future__ import annotations

import functools

import duckdb
import sqlglot
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from duckask.utils.db.errors import UnsafeSQLError

#: sqlglot's token types a literal may become (a DuckDB string or number may be one of these, after a prefix).
_LITERALS = {TokenType.STRING, TokenType.NUMBER, TokenType.BIT_STRING, TokenType.HEX_STRING, TokenType.BYTE_STRING,
             TokenType.NATIONAL_STRING, TokenType.RAW_STRING, TokenType.HEREDOC_STRING, TokenType.UNICODE_STRING}


_NAMES = {TokenType.VAR, TokenType.IDENTIFIER}

#: What an operator is made of (PostgreSQL's scanner reads ``!~~`` as one operator, sqlglot as two).
_OPERATOR_CHARS = set("+-*/<>=~!@#%^&|`?:")


class TwoReadings(UnsafeSQLError):
    """DuckDB and sqlglot read the text differently; the message says where."""


def _char_offsets(text: str) -> dict[int, int]:
    """UTF-8 byte offset -> character offset, for every character's first byte (and the end)."""
    out, b = {}, 0
    for i, ch in enumerate(text):
        out[b] = i
        b += len(ch.encode("utf-8"))
    out[b] = len(text)
    return out


def duck_tokens(text: str) -> list[tuple[int, str]]:
    """DuckDB's tokens of ``text``: (character offset, kind), kind one of identifier, numeric_const, string_const,
    operator, keyword, comment."""
    try:
        raw = duckdb.tokenize(text)
    except (duckdb.Error, RuntimeError) as e:
        raise TwoReadings(f"refused: DuckDB's lexer cannot read it ({str(e).splitlines()[0]})") from None
    where = _char_offsets(text)
    out = []
    for pos, kind in raw:
        if pos not in where:
            raise TwoReadings("refused: DuckDB's lexer reads a token inside a character")
        out.append((where[pos], kind.name))
    return out


def _spans(text: str, tokens: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    """Each token as (start, end, kind): it ends where the next begins, less white space."""
    out = []
    for i, (start, kind) in enumerate(tokens):
        end = tokens[i + 1][0] if i + 1 < len(tokens) else len(text)
        while end > start and text[end - 1].isspace() and text[end - 1] in " \t\n\r\f\v":
            end -= 1
        out.append((start, end, kind))
    return out


def strip_comments(text: str) -> str:
    """``text`` with every comment DuckDB reads replaced by one space; the same statement to DuckDB (checked)."""
    spans = _spans(text, duck_tokens(text))
    if not any(kind == "comment" for _s, _e, kind in spans):
        return text
    parts, at = [], 0
    for start, end, kind in spans:
        if kind == "comment" and text.startswith("/*", start) and not text.endswith("*/", start, end):
            raise TwoReadings(f"refused: the comment at character {start} is never closed")
        if kind == "comment":
            parts.append(text[at:start] + " ")
            at = end
    stripped = "".join(parts) + text[at:]
    before = [(text[s:e], k) for s, e, k in spans if k != "comment"]
    after = [(stripped[s:e], k) for s, e, k in _spans(stripped, duck_tokens(stripped))]
    if before != after:
        raise TwoReadings("refused: the text reads otherwise once its comments are taken out; send it without "
                          "comments")
    return stripped


def _glot_tokens(text: str, dialect: str) -> list[Token]:
    try:
        return sqlglot.Dialect.get_or_raise(dialect).tokenize(text)
    except SqlglotError as e:
        raise TwoReadings(f"refused: sqlglot cannot read the text as DuckDB does ({str(e).splitlines()[0]})") from None


def _agree(text: str, dialect: str) -> None:
    """Raise TwoReadings unless DuckDB's tokens and sqlglot's (in ``dialect``) read ``text`` alike (see above)."""
    duck = _spans(text, duck_tokens(text))
    glot = _glot_tokens(text, dialect)
    starts = {t.start for t in glot}
    for token in glot:
        if token.comments:
            raise TwoReadings(f"refused: sqlglot reads a comment near character {token.start} where DuckDB reads "
                              "none; send it without comments")
    words = [t for t in glot if " " in t.text.strip() and t.token_type not in _LITERALS | _NAMES]
    for start, _end, kind in duck:
        if start not in starts and not (kind in ("keyword", "identifier") and any(      # ``ORDER BY``: one to sqlglot
                t.start < start <= t.end and t.text.replace(" ", "").isalpha() for t in words)):
            raise TwoReadings(f"refused: DuckDB and sqlglot read the text differently at character {start} "
                              f"({text[start:start + 20]!r}); rewrite it plainly (no unusual quoting or spaces)")
    inside = {start: (end, kind) for start, end, kind in duck}
    owner = None
    for token in glot:
        if token.start in inside:
            owner = (token.start, *inside[token.start])
            continue
        start, end, kind = owner if owner else (0, 0, "")
        literal = kind in ("string_const", "numeric_const") and token.token_type in _LITERALS | {TokenType.DOT}
        operator = kind == "operator" and set(token.text) <= _OPERATOR_CHARS      # ``!~~``: one to DuckDB
        if not (owner and start <= token.start < end and (literal or operator) and token.end < end):
            raise TwoReadings(f"refused: sqlglot starts a token at character {token.start} "
                              f"({text[token.start:token.start + 20]!r}) where DuckDB reads none; rewrite it plainly")


@functools.lru_cache(maxsize=1024)
def one_reading(sql: str, dialect: str = "duckdb") -> str:
    """The text DuckDB and sqlglot (in ``dialect``) read alike: ``sql`` without its comments; TwoReadings (an
    ``UnsafeSQLError``) where they cannot be made to agree."""
    text = strip_comments(sql)
    _agree(text, dialect)
    return text
