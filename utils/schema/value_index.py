"""The value index: what a text column really holds, so a literal the SQL compares it with can be checked and,
when it is not one of them, the nearest real values offered (issue 44: ``position = 'Forward'`` where the column
holds ``F``, ``F-C``, ``C-F``; ``college = 'North Carolina'`` beside ``University of North Carolina``).

``ValueIndex(database)`` reads a column's distinct values the first time a check asks (``values(table,
column)``: one ``SELECT DISTINCT ... LIMIT`` on the read-only connection, models' views too) and keeps them for
the process, keyed by the database file's state (``Database.key``: a changed file is read again) and by who reads
(``scope_key``: a user whose allowlist leaves a table out never gets its values from another user's read, issue 52).
A refused read is never kept: it is that user's answer, not the column's. A column with
more than ``MAX_DISTINCT`` values, or not of a text type, is not indexed (``None``): no check is made on it.

``nearest(literal, values)`` ranks the real values a literal could have meant, each with why:

- ``same``: equal once case, accents, punctuation and plural endings are set aside ('north carolina');
- ``abbreviation``: a value of at most three letters that begins the literal or is its words' initials ('F' for
  'Forward', 'NC' for 'North Carolina'), and the values that hold it as a part ('F-C', 'C-F');
- ``contains``: a value holding the literal's words in order ('University of North Carolina');
- ``close``: a near spelling (difflib ratio at least 0.8).
"""
from __future__ import annotations

import difflib
import re
import threading
import unicodedata
from typing import Any

from duckask.utils.db.quoting import quote_ident
from duckask.utils.schema.catalog import is_text

MAX_DISTINCT = 20_000
#: A live source (``Database.live``): a check's read in the engine stops after this long, and the check is not made
#: (a GROUP BY or a min/max over a table of 100 M rows is a full scan); a column's values come from the catalog's
#: facts, read once at bounded cost (``live_catalog``), when it has them.
LIVE_CHECK_S = 2.0
_CACHE: dict[tuple, list[str] | None] = {}
_COUNTS: dict[tuple, dict[str, int]] = {}
_LOCK = threading.Lock()


def check_read(database, sql: str, row_cap: int):
    """A check's read of ``database`` (bounded on a live source: ``LIVE_CHECK_S``, then the check is not made)."""
    if getattr(getattr(database, "unscoped", database), "live", False):
        return database.run(sql, row_cap=row_cap, timeout_s=LIVE_CHECK_S)
    return database.run(sql, row_cap=row_cap)


def singular(word: str) -> str:
    """A plural ending set aside, by rule (a stemmer costs ~150 us a word; the index normalises every value):
    'forwards' -> 'forward', 'cities' -> 'city', 'boxes' -> 'box', 'class' stays."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    return word[:-1]


def normal(text: str) -> str:
    """Case, accents, punctuation and plural endings set aside: 'Forwards' -> 'forward', 'Côte-d'Ivoire' ->
    'cote d ivoire'."""
    plain = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode().lower()
    return " ".join(singular(w) for w in re.findall(r"[a-z0-9]+", plain))


def _words(text: str) -> list[str]:
    plain = unicodedata.normalize("NFKD", str(text)).encode("ascii", "ignore").decode().lower()
    return re.findall(r"[a-z0-9]+", plain)


class ValueIndex:
    """The distinct values of ``database``'s text columns, read on first use."""

    def __init__(self, database, tables: dict[str, tuple[str, dict[str, tuple[str, str]]]] | None = None):
        self.database = database
        # {table (lower): (table as named, {column (lower): (column as named, type)})}
        self.tables = tables or {}

    @classmethod
    def of(cls, database, catalog) -> ValueIndex:
        return cls(database, {t.lower(): (t, {c.name.lower(): (c.name, c.type) for c in tb.columns})
                              for t, tb in catalog.tables.items()})

    def columns(self, table: str) -> set[str]:
        """The columns of ``table`` (lower-case); none for a name the catalog does not hold (a CTE)."""
        return set(self.tables.get(table.lower(), ("", {}))[1])

    def values(self, table: str, column: str) -> list[str] | None:
        """The column's distinct values (as text), or None when it is not indexed (not text, too many values,
        not found)."""
        real, columns = self.tables.get(table.lower(), (table, {}))
        named = columns.get(column.lower())
        if named is None or not is_text(named[1]):
            return None
        key = self._key(table, column)
        with _LOCK:
            if key in _CACHE:
                return _CACHE[key]
        known = self._facts(real, named[0])
        if known is not None:
            with _LOCK:
                _CACHE[key] = known
            return known
        col = quote_ident(named[0])
        out = self._read(f"SELECT CAST({col} AS VARCHAR) AS v, count(*) AS n FROM {quote_ident(real)} "
                         f"WHERE {col} IS NOT NULL GROUP BY 1 ORDER BY n DESC LIMIT {MAX_DISTINCT + 1}",
                         row_cap=MAX_DISTINCT + 1)
        values = None
        if out.status == "refused":                     # this reader may not read it: nothing to keep for anyone
            return None
        if out.ok and len(out.df) <= MAX_DISTINCT:      # most frequent first
            values = [str(v) for v in out.df["v"].tolist()]
            with _LOCK:
                _COUNTS[key] = dict(zip(values, (int(n) for n in out.df["n"].tolist())))
        with _LOCK:
            if len(_CACHE) > 4096:
                _CACHE.clear()
                _COUNTS.clear()
            _CACHE[key] = values
        return values

    def _live(self):
        """The live source's engine when this index reads one for every reader (not a user's allowlist), else None."""
        return getattr(self.database, "engine", None) if getattr(self.database, "live", False) else None

    def _facts(self, table: str, column: str) -> list[str] | None:
        """A live source's values of the column as its catalog read them (every value, or None)."""
        engine = self._live()
        if engine is None or self.database.unscoped is not self.database:
            return None
        return ((engine.facts.get("values") or {}).get(table) or {}).get(column)

    def _read(self, sql: str, row_cap: int):
        return check_read(self.database, sql, row_cap)

    def count(self, table: str, column: str, value: str) -> int:
        """How many rows hold ``value`` in the column (0 when not indexed or not held)."""
        if self.values(table, column) is None:
            return 0
        return _COUNTS.get(self._key(table, column), {}).get(value, 0)

    def _key(self, table: str, column: str, *more: str) -> tuple:
        return (getattr(self.database, "key", ""), getattr(self.database, "scope_key", ""), table.lower(),
                column.lower(), *more)


    def time_columns(self, table: str) -> list[str]:
        """The columns of ``table`` that hold a time: dates and timestamps, and numbers named like a year or a
        season (not ``season_type``, not ``time_of_possession``)."""
        return [name for name, kind in self.tables.get(table.lower(), ("", {}))[1].values()
                if kind.upper().startswith(("DATE", "TIMESTAMP")) or (
                    re.search(r"(year|season|yr)", name, re.I) and not is_text(kind))]   # not season_type

    def span(self, table: str, column: str) -> tuple[int, int, bool] | None:
        """The least and greatest value of a time column, as years for a date (``year()``), as they are for a
        number, and whether it is a date: ``(2015, 2016, True)`` for one NBA season's game dates, ``(2019,
        2019, False)`` for a table of one season. None for an empty column or one not in the table."""
        key = self._key(table, column, "span")
        with _LOCK:
            if key in _CACHE:
                got = _CACHE[key]
                return (int(got[0]), int(got[1]), got[2] == "d") if got else None
        real, columns = self.tables.get(table.lower(), (table, {}))
        named = columns.get(column.lower())
        dated = named is not None and named[1].upper().startswith(("DATE", "TIMESTAMP"))
        value = "" if named is None else f"year({quote_ident(named[0])})" if dated else quote_ident(named[0])
        out = self._read(f"SELECT min({value}), max({value}) FROM {quote_ident(real)}", row_cap=1) if named else None
        if out is not None and out.status == "refused":
            return None
        row: list[Any] = out.df.iloc[0].tolist() if out is not None and out.ok else [None, None]
        try:
            got = [str(int(row[0])), str(int(row[1])), "d" if dated else "n"]
        except (TypeError, ValueError):      # NULLs (an empty table) or a value that is not a whole number
            got = None
        with _LOCK:
            _CACHE[key] = got
        return (int(got[0]), int(got[1]), dated) if got else None


def nearest(literal: str, values: list[str], n: int = 5) -> list[tuple[str, str]]:
    """The real values ``literal`` could have meant, best first, each with why (see the module's list)."""
    lit_norm, lit_words = normal(literal), _words(literal)
    initials = "".join(w[0] for w in lit_words) if len(lit_words) > 1 else ""
    found: dict[str, str] = {}
    normals = {v: normal(v) for v in values}
    for v, vn in normals.items():
        if vn and vn == lit_norm:
            found.setdefault(v, "same")
    short = {v for v, vn in normals.items() if 0 < len(vn.replace(" ", "")) <= 3}
    abbreviations = {v for v in short if lit_norm.replace(" ", "").startswith(normals[v].replace(" ", "")) and (
        len(normals[v]) == 1 or not initials) or (initials and normals[v].replace(" ", "") == initials)}
    for v in sorted(abbreviations, key=len):
        found.setdefault(v, "abbreviation")
    for a in abbreviations:        # 'F-C', 'C-F': values made of the abbreviation and others
        parts = set(_words(a))
        for v in values:
            if v not in found and parts and parts <= set(_words(v)) and len(normals[v].replace(" ", "")) <= 7:
                found.setdefault(v, "abbreviation")
    if lit_norm:
        for v, vn in normals.items():
            if v not in found and f" {lit_norm} " in f" {vn} ":
                found.setdefault(v, "contains")
    for v in difflib.get_close_matches(literal, values, n=n, cutoff=0.8):
        found.setdefault(v, "close")
    order = {"same": 0, "abbreviation": 1, "contains": 2, "close": 3}
    ranked = sorted(found.items(), key=lambda kv: (order[kv[1]], len(kv[0])))
    return ranked[:n]
