"""Proposed models for a warehouse whose tables come in families (``duckask semantic init --models DIR``).

A family is the tables of one source, named with one prefix (``kaggle_``, ``nbacom_``, ``bbref_``: a prefix
at least two tables share). When two or more families have tables about the same thing (a word of the name
after the prefix, stemmed: ``player`` in ``bbref_player_career_info`` and ``nbacom_player_profiles``), that
thing is an entity worth one clean model. For each such entity the draft is a model file
(``models/<entity>s.sql``) that reads the entity's most complete table (the most rows among those whose
name is the family prefix, the entity and at most one more word) with

- every text column that holds numbers (with 'NA', '' or '-' for missing) cast with ``TRY_CAST`` and named
  as before, so sums and comparisons work;
- a header that lists the look-alike tables of the other families, their rows, and the columns they share
  with it (candidate join keys), for whoever reviews it to join or drop.

It is a draft, never built until reviewed: every file starts ``-- DRAFT`` and duckask does not build a model
whose first line still says so (``utils.db.models.is_draft``). Nothing here reads an evaluation question.
"""
from __future__ import annotations

import re
from collections import defaultdict

from duckask.utils.db.quoting import quote_ident
from duckask.utils.schema.catalog import Catalog, is_text
from duckask.utils.schema.terms import split_ident

MISSING = ("NA", "", "-", "N/A")
#: Words of table names that name a kind of table, not a thing (a "stats" table of players is about players).
GENERIC = {w for words in ("stats totals per info common history details summaries advanced po the of by poss "
                           "opponent season seasons abbrev").split() for w in split_ident(words)}


def families(catalog: Catalog) -> dict[str, list[str]]:
    """{prefix: tables} for prefixes at least two tables share."""
    by_prefix: dict[str, list[str]] = defaultdict(list)
    for t in catalog.tables:
        if "_" in t and not catalog.tables[t].model:
            by_prefix[t.split("_", 1)[0]].append(t)
    return {p: sorted(ts) for p, ts in by_prefix.items() if len(ts) >= 2}


def entities(catalog: Catalog) -> dict[str, list[str]]:
    """{entity word (as the table names spell it): tables} for things tables of two or more families are about."""
    fams = families(catalog)
    seen: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    spelt: dict[str, str] = {}
    for prefix, tables in fams.items():
        for t in tables:
            for raw in t.split("_")[1:]:
                stems = split_ident(raw)
                w = stems[0] if len(stems) == 1 else None
                if w and w not in GENERIC and not w.isdigit() and len(w) > 2 and t not in seen[w][prefix]:
                    seen[w][prefix].append(t)
                    spelt.setdefault(w, raw.lower().rstrip("s"))
    return {spelt[w]: sorted(t for ts in by.values() for t in ts) for w, by in sorted(seen.items()) if len(by) >= 2}


def _key(table) -> str | None:
    """The table's first id column (``id``, ``player_id``, ``GAME_ID``), if any."""
    return next((c.name for c in table.columns if re.search(r"(^|_)id$", c.name, re.I)), None)


def _one_row_each(con, table) -> bool:
    """Whether the table has one row per value of its id column (an entity's list, not its events)."""
    key = _key(table)
    if key is None:
        return False
    n, distinct = con.execute(f"SELECT count({quote_ident(key)}), count(DISTINCT {quote_ident(key)}) "
                              f"FROM {quote_ident(table.name)}").fetchone()
    return n > 0 and n == distinct


def _numeric_text(con, table: str, column: str) -> bool:
    """Whether a text column holds numbers, with only the usual marks for a missing value besides."""
    q, c = quote_ident(table), quote_ident(column)
    missing = ", ".join(f"'{m}'" for m in MISSING)
    row = con.execute(f"SELECT count(*) FILTER (WHERE {c} IS NOT NULL AND trim({c}) NOT IN ({missing})), "
                      f"count(TRY_CAST(trim({c}) AS DOUBLE)) FROM (SELECT {c} FROM {q} LIMIT 5000)").fetchone()
    return bool(row[0]) and row[0] == row[1]


def _base(con, catalog: Catalog, tables: list[str]) -> str:
    """The entity's most complete list: of the tables with one row per id, the one with the most rows (else
    the largest table), the shorter name first on a tie."""
    lists = [t for t in tables if _one_row_each(con, catalog.tables[t])] or tables
    return max(lists, key=lambda t: (catalog.tables[t].rows, -len(t)))


def jinja_text(text: str) -> str:
    """Text from the database (a table or column name) as a model file renders it back, unchanged: each ``{``
    written as a Jinja expression of itself, so no ``{{``, ``{%`` or ``{#`` in a name ever opens one."""
    return text.replace("{", "{{ '{' }}")


def _comment(text: str) -> str:
    """A name in a comment line: Jinja-safe, control characters (a newline would end the comment) as spaces."""
    return jinja_text(re.sub(r"[\x00-\x1f\x7f-\x9f]", " ", text))


def _jinja_string(text: str) -> str:
    """A Jinja string literal of ``text`` (backslash and quote escaped: a name never ends the literal)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def draft_model(db, catalog: Catalog, word: str, tables: list[str]) -> str:
    """The draft model file for ``word``; every name from the database written so that rendering gives it back
    as it is (``jinja_text``): a column named ``{{ ... }}`` is a column, never an expression run when the
    reviewed file is built."""
    with db.cursor() as con:
        base = _base(con, catalog, tables)
    t = catalog.tables[base]
    cols = {c.name.lower() for c in t.columns}
    lines = [f"-- DRAFT (duckask semantic init): one row per {_comment(word)} from {_comment(base)} ({t.rows} rows). "
             "Review it: join",
             f"-- what the look-alikes add, keep one row per {_comment(word)}, then delete this DRAFT line.",
             "-- Other tables about it (rows; columns named as in the base: join keys only if they hold the same ids):"]
    for other in tables:
        if other != base:
            o = catalog.tables[other]
            shared = sorted(c.name for c in o.columns if c.name.lower() in cols)[:6]
            lines.append(f"--   {_comment(other)} ({o.rows} rows; shared: {_comment(', '.join(shared)) or 'none'})")
    missing = ", ".join(f"'{m}'" for m in MISSING)
    select = []
    with db.cursor() as con:
        for c in t.columns:
            name = jinja_text(quote_ident(c.name))
            if is_text(c.type) and _numeric_text(con, base, c.name):     # numbers stored as text, 'NA' missing
                select.append(f"TRY_CAST(CASE WHEN trim({name}) IN ({missing}) THEN NULL ELSE trim({name}) END "
                              f"AS DOUBLE) AS {name}")
            else:
                select.append(name)
    body = ",\n       ".join(select)
    return "\n".join(lines) + f"\nSELECT {body}\nFROM {{{{ source('db', {_jinja_string(base)}) }}}}\n"


def model_name(word: str, catalog: Catalog) -> str:
    """The model's name: the entity in the plural (``players``), never a table's name (``teams_model`` then)."""
    name = word if word.endswith(("s", "ing")) else f"{word}s"
    return name if name.lower() not in {t.lower() for t in catalog.tables} else f"{name}_model"


def propose_models(db, catalog: Catalog) -> dict[str, str]:
    """{file name: draft model} for each entity several families describe."""
    return {f"{model_name(w, catalog)}.sql": draft_model(db, catalog, w, ts) for w, ts in entities(catalog).items()}
