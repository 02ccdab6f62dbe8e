"""What one row of a table is (its grain), read from the data before the first question (issue 63, item 3).

A question counts or lists an entity: a league's teams, a player, a game, a referee. Which table holds one row
per that entity is what the model most often gets wrong on a warehouse (a count of distinct team names over
team-season rows; the commonest uniform number read from the officials' table). The schema now says it:
``CREATE TABLE team_stats ( -- one row per season, team``, and the table chooser's lines say it too.

The grain is the declared primary key when there is one; otherwise the smallest set of key-like columns (ids,
codes, seasons and dates, names of players or teams; ``KEY_WORDS``) that is unique and never NULL over the table's
rows, tried in one aggregate query per size (singles, pairs, triples). It is what the data holds now, not a
constraint: a later insert may break it, so it is shown as a note, never used as a check. Tables with more than
``MAX_ROWS`` rows, and live sources (where a distinct count reads the whole remote table), are left to their
declared keys.

The idea is the "row grain" of dimensional modelling (Kimball and Ross, *The Data Warehouse Toolkit*, ch. 1:
"declare the grain" before choosing facts and dimensions); finding it as a minimal unique column combination
follows the unique-column-combination discovery literature (Abedjan and Naumann, "Advancing the discovery of
unique column combinations", CIKM 2011), restricted here to key-like columns and three columns at most.
"""
from __future__ import annotations

import itertools
import re

from duckask.utils.db.quoting import quote_ident as _q

MAX_ROWS = 5_000_000       # a bigger table's distinct counts cost more than a question; declared keys only
MAX_CANDIDATES = 8         # key-like columns tried, in order: ids first, then time, then the rest
MAX_WIDTH = 3              # the widest combination tried
#: The last word of a key-like column's name (snake_case or camelCase split): what identifies a row.
ID_WORDS = {"id", "key", "code", "no", "num", "number", "slug", "abbreviation", "tricode", "tm", "abbrev"}
TIME_WORDS = {"season", "year", "date", "month", "week", "day", "quarter"}
OTHER_WORDS = {"name", "player", "team", "lg", "league", "type", "award", "round", "pick", "game", "person",
               "stage", "position", "category", "kind", "playoffs", "series", "wave", "period"}
_SPLIT = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


def _last_word(name: str) -> str:
    words = [w for w in _SPLIT.split(name) if w]
    return words[-1].lower() if words else ""


def candidates(columns: list[tuple[str, str]]) -> list[str]:
    """Key-like columns (name, type) in the order they are tried: ids, then time, then names and kinds. Nested,
    floating-point and boolean columns never identify a row."""
    ranked = []
    for pos, (name, type_) in enumerate(columns):
        t = type_.upper()
        if t.startswith(("STRUCT", "MAP", "UNION", "JSON", "DOUBLE", "FLOAT", "REAL", "BOOL")) or t.endswith("]"):
            continue
        word = _last_word(name)
        rank = 0 if word in ID_WORDS else 1 if word in TIME_WORDS else 2 if word in OTHER_WORDS else None
        if rank is not None:
            ranked.append((rank, pos, name))
    return [name for _, _, name in sorted(ranked)[:MAX_CANDIDATES]]


def find_grain(con, table: str, columns: list[tuple[str, str]], rows: int) -> list[str]:
    """The smallest combination of key-like columns unique and never NULL over ``table`` (``rows`` rows), or []."""
    names = candidates(columns)
    if rows < 2 or rows > MAX_ROWS or not names:
        return []
    nulls = con.execute(f"SELECT {', '.join(f'count({_q(n)})' for n in names)} FROM {_q(table)}").fetchone()
    names = [n for n, held in zip(names, nulls) if held == rows]       # a key is never NULL
    for width in range(1, MAX_WIDTH + 1):
        combos = list(itertools.combinations(names, width))
        if not combos:
            return []
        exprs = ", ".join(f"count(DISTINCT ({', '.join(_q(n) for n in combo)}))" for combo in combos)
        counts = con.execute(f"SELECT {exprs} FROM {_q(table)}").fetchone()
        for combo, distinct in zip(combos, counts):
            if distinct == rows:
                return list(combo)
    return []


def grain_note(grain: list[str]) -> str:
    """How the schema says it: "one row per season, team"."""
    return "one row per " + ", ".join(grain) if grain else ""
