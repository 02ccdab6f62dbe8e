"""What bench/idioms_dbs.py's generators share: names, weighted choices, timestamps, bulk inserts."""
from __future__ import annotations

import datetime as dt
import random

import duckdb

FIRST = ["Anna", "Ben", "Carla", "David", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Keiko", "Liam",
         "Maya", "Nils", "Olivia", "Pablo", "Quinn", "Rosa", "Samir", "Tara", "Umar", "Vera", "Walter", "Yusuf",
         "Zoe", "Marco", "Lena", "Theo", "Priya", "Sven", "Aisha", "Mateo", "Chloe", "Ravi", "Ida", "Tomasz"]
LAST = ["Schmidt", "Garcia", "Nguyen", "Martin", "Rossi", "Kowalski", "Dubois", "Smith", "Tanaka", "Okafor",
        "Silva", "Novak", "Jensen", "Fischer", "Moreau", "Brown", "Costa", "Haddad", "Larsen", "Weber", "Lopez",
        "Murphy", "Ivanova", "Patel", "Keller", "Berg", "Sato", "Meyer"]


def weighted(rng: random.Random, pairs: list[tuple]) -> object:
    return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]


def moment(rng: random.Random, start: dt.datetime, days: int, hour_weights: list[int]) -> dt.datetime:
    """A time on one of ``days`` days from ``start``, its hour drawn from ``hour_weights`` (24 weights)."""
    day = start + dt.timedelta(days=rng.randrange(days))
    hour = rng.choices(range(24), weights=hour_weights)[0]
    return day.replace(hour=hour, minute=rng.randrange(60), second=rng.randrange(60))


def insert(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple], select: str | None = None) -> None:
    """Insert ``rows`` column-wise: one list parameter per column, unnested side by side (fast, order kept).
    ``select`` replaces the default ``unnest($1), unnest($2), ...`` (e.g. to build a MAP from two lists)."""
    if not rows:
        return
    cols = [list(c) for c in zip(*rows)]
    select = select or ", ".join(f"unnest(${i + 1})" for i in range(len(cols)))
    con.execute(f"INSERT INTO {table} SELECT {select}", cols)
QUERIES = [("running shoes", 40), ("rain jacket", 31), ("yoga mat", 26), ("water bottle", 22), ("headlamp", 17),
           ("trail socks", 13), ("tent", 10), ("sunglasses", 8), ("hiking poles", 6), ("swim goggles", 5)]
