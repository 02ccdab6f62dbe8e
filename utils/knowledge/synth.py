"""The SQL half of learning a database: queries built from its catalog, its keys and its values, before any question.

``drafts(catalog, distinct)`` gives the queries a user of this database would plausibly want, in the order ``learn``
spends its time on them (round robin over the tables, the most telling kinds first), each with a plain reading of
what it returns. ``implausible(outcome)`` says why a result is no example (empty, all NULL, a dump of rows, a
count of nothing). The question is written afterwards by the model from the SQL, its reading and its result, and
the pair is kept only when that question reads back to the same rows (``utils/app/learn.py``).

After Zhao et al., "Importance of Synthesizing High-quality Data for Text-to-SQL Parsing" (2022): synthesized SQL
helps only when it is logical, so columns are chosen by type and role (a label, a measure, a category with few
values, a date), joins follow the keys only (declared or implied: ``Catalog.foreign_links``), literals are values
found in the data, and the question writer is given an intermediate reading of the SQL, not the SQL alone. The
question-from-SQL direction is Guo et al., "Question Generation from SQL Queries Improves Neural Semantic Parsing"
(EMNLP 2018).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import zip_longest

from duckask.utils.db.quoting import ident, quote_literal
from duckask.utils.schema.catalog import Catalog, Column, Table, is_text
from duckask.utils.sql.voting import substantive

#: The most rows a kept example may return: more is a dump, not an answer a question asks for.
MOST_ROWS = 50
#: A category has at least 2 and at most this many distinct values (a grouping a user reads at a glance).
MOST_CATEGORIES = 25

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
            "DOUBLE", "FLOAT", "REAL", "DECIMAL", "NUMERIC", "INT")
_NAME_LIKE = re.compile(r"(^|_)(name|title|label|full_?name|display_?name|description)$", re.I)
_NOT_A_MEASURE = re.compile(r"(^id$|_id$|id$|^year|year$|season|_key$|^key$|code|zip|phone|number$|_no$|^no$)", re.I)
_TIME_LIKE = re.compile(r"(^year|year$|season)", re.I)


@dataclass(frozen=True)
class Draft:
    """One synthesized query: its ``kind``, its SQL, the tables it reads, and a plain ``reading`` of what it returns
    (what the question writer is told besides the SQL)."""
    kind: str
    sql: str
    tables: tuple[str, ...]
    reading: str


@dataclass
class _Roles:
    """A table's columns by the part they can play in a question."""
    table: Table
    label: Column | None = None
    measures: list[Column] = field(default_factory=list)
    categories: list[Column] = field(default_factory=list)
    dates: list[Column] = field(default_factory=list)
    years: list[Column] = field(default_factory=list)
    lists: list[Column] = field(default_factory=list)
    structs: list[Column] = field(default_factory=list)


def is_numeric(type_: str) -> bool:
    return type_.upper().split("(")[0].strip() in _NUMERIC


def _words(name: str) -> str:
    """A name as words ("player_info" -> "player info")."""
    return " ".join(re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").split()).lower()


def roles(table: Table, distinct: dict[str, int]) -> _Roles:
    """The roles of ``table``'s columns; ``distinct``: distinct values per column where counted (text and year
    columns)."""
    r = _Roles(table)
    keys = {c.name for c in table.columns if c.pk or c.ref} | set(table.pk)
    labels = []
    for c in table.columns:
        t = c.type.upper()
        if t.endswith("]"):
            r.lists.append(c)
        elif t.startswith("STRUCT"):
            r.structs.append(c)
        elif t.startswith(("DATE", "TIMESTAMP")):
            r.dates.append(c)
        elif is_text(t):
            n = distinct.get(c.name, 0)
            if 2 <= n <= MOST_CATEGORIES and table.rows > 2 * n:
                r.categories.append(c)
            elif n > 1:
                labels.append(c)
        elif is_numeric(t) and c.name not in keys:
            if _TIME_LIKE.search(c.name):
                r.years.append(c)
            elif not _NOT_A_MEASURE.search(c.name):
                r.measures.append(c)
    r.measures.sort(key=_measure_rank)
    named = [c for c in labels if _NAME_LIKE.search(c.name)]
    r.label = (named or labels)[0] if named or labels else None
    return r


_MEASURE_WORDS = re.compile(r"(amount|price|total|sales|revenue|cost|salary|score|points|pts|rating|value|income|"
                            r"profit|weight|height|duration|distance|capacity|attendance|quantity|qty|balance|fare)",
                            re.I)


def _measure_rank(c: Column) -> tuple:
    """Which measure a question most likely asks about first: a name that says so (amount, points, price...), a
    fractional type, a name longer than an abbreviation (``g``, ``gp``, ``age`` last)."""
    t = c.type.upper()
    return (not _MEASURE_WORDS.search(c.name), not t.startswith(("DOUBLE", "DECIMAL", "FLOAT", "REAL", "NUMERIC")),
            len(c.name) <= 3 or c.name.lower() == "age")


def _q(name: str) -> str:
    return ident(name)


def _sample(c: Column) -> str | None:
    """A value of ``c`` found in the data (its first sample that is short and printable)."""
    return next((s for s in c.samples if s and len(s) <= 60 and s.isprintable()), None)


def _one_table(r: _Roles) -> list[Draft]:
    """The kinds of query one table allows, most telling first."""
    t, name, out = r.table, r.table.name, []
    T, about = _q(name), _words(name)

    def add(kind: str, sql: str, reading: str) -> None:
        out.append(Draft(kind, sql, (name,), reading))

    lab = r.label
    if lab and r.measures:
        m = r.measures[0]
        add("top", f"SELECT {_q(lab.name)}, {_q(m.name)} FROM {T} WHERE {_q(m.name)} IS NOT NULL "
                   f"ORDER BY {_q(m.name)} DESC LIMIT 5",
            f"the 5 {about} rows with the highest {_words(m.name)}, with their {_words(lab.name)}")
    if r.categories:
        c = r.categories[0]
        v = _sample(c)
        if v is not None:
            add("filter", f"SELECT count(*) AS n FROM {T} WHERE {_q(c.name)} = {quote_literal(v)}",
                f"how many {about} rows have {_words(c.name)} {v!r}")
        add("group", f"SELECT {_q(c.name)}, count(*) AS n FROM {T} GROUP BY {_q(c.name)} ORDER BY n DESC",
            f"the number of {about} rows for each {_words(c.name)}")
        if r.measures:
            m = r.measures[0]
            add("group_avg", f"SELECT {_q(c.name)}, avg({_q(m.name)}) AS avg_{m.name.lower()} FROM {T} "
                             f"GROUP BY {_q(c.name)} ORDER BY avg_{m.name.lower()} DESC",
                f"the average {_words(m.name)} for each {_words(c.name)}")
        if v is not None:
            cond = f"{_q(c.name)} = {quote_literal(v)}"
            add("share", f"SELECT round(100.0 * count(*) FILTER (WHERE {cond}) / count(*), 1) AS pct FROM {T}",
                f"the percentage of {about} rows whose {_words(c.name)} is {v!r}")
    if lab and (v := _sample(lab)) is not None and r.measures:
        cols = ", ".join(_q(m.name) for m in r.measures[:2])
        what = " and ".join(_words(m.name) for m in r.measures[:2])
        add("lookup", f"SELECT {cols} FROM {T} WHERE {_q(lab.name)} = {quote_literal(v)}",
            f"the {what} of the {about} whose {_words(lab.name)} is {v!r}")
    if r.years:
        y = r.years[0]
        add("by_year", f"SELECT {_q(y.name)}, count(*) AS n FROM {T} GROUP BY {_q(y.name)} ORDER BY {_q(y.name)} "
                       "DESC LIMIT 10",
            f"the number of {about} rows in each of the 10 latest {_words(y.name)}s")
    if r.dates:
        d = r.dates[0]
        add("by_month", f"SELECT date_trunc('month', {_q(d.name)}) AS month, count(*) AS n FROM {T} "
                        f"WHERE {_q(d.name)} IS NOT NULL GROUP BY month ORDER BY month DESC LIMIT 12",
            f"the number of {about} rows per month of {_words(d.name)}, the 12 latest months")
    if r.lists:
        c = r.lists[0]
        if lab:
            add("list_len", f"SELECT {_q(lab.name)}, len({_q(c.name)}) AS n FROM {T} ORDER BY n DESC NULLS LAST "
                            "LIMIT 5", f"the 5 {about} with the most items in {_words(c.name)}, and how many")
        add("unnest", f"SELECT item, count(*) AS n FROM (SELECT unnest({_q(c.name)}) AS item FROM {T}) "
                      "GROUP BY item ORDER BY n DESC LIMIT 5",
            f"the 5 most common items in {_words(c.name)} of {about}, and how often each occurs")
    for c in r.structs[:1]:
        fields = re.findall(r"[(,]\s*\"?([A-Za-z_][A-Za-z0-9_]*)\"?\s", c.type)
        if fields and lab:
            add("struct_field", f"SELECT {_q(lab.name)}, {_q(c.name)}.{_q(fields[0])} AS {fields[0]} FROM {T} LIMIT 5",
                f"the {_words(fields[0])} inside {_words(c.name)} for 5 {about}, with their {_words(lab.name)}")
    prefix = _shared_prefix(t)
    if prefix:
        add("columns_regex", f"SELECT COLUMNS('^{prefix}') FROM {T} LIMIT 5",
            f"every column of {about} whose name starts with {prefix!r}, for 5 rows")
    if len(t.columns) >= 6 and r.label:
        drop = [c.name for c in t.columns if c is not r.label][-2:]
        add("exclude", f"SELECT * EXCLUDE ({', '.join(_q(n) for n in drop)}) FROM {T} LIMIT 5",
            f"5 rows of {about} with every column except {' and '.join(_words(n) for n in drop)}")
    add("count", f"SELECT count(*) AS n FROM {T}", f"how many {about} rows there are")
    if lab:
        add("distinct", f"SELECT count(DISTINCT {_q(lab.name)}) AS n FROM {T}",
            f"how many different {_words(lab.name)} values {about} has")
    return out


def _shared_prefix(t: Table) -> str | None:
    """A name prefix ("addr_", "pct_") at least three columns of a wide table share, where there is one."""
    if len(t.columns) < 8:
        return None
    counts: dict[str, int] = {}
    for c in t.columns:
        m = re.match(r"([A-Za-z]+_)", c.name)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    good = [p for p, n in counts.items() if 3 <= n < len(t.columns)]
    return max(good, key=lambda p: (counts[p], p)) if good else None


def _joins(cat: Catalog, by_table: dict[str, _Roles]) -> list[Draft]:
    """For each key from a child to a parent with a label: the parents with the most children, and a child measure
    summed per parent (the joins the keys allow, and no others)."""
    out = []
    for fk in cat.foreign_links():
        child, parent = by_table.get(fk.table), by_table.get(fk.ref_table)
        if not child or not parent or not parent.label or fk.table == fk.ref_table:
            continue
        on = f"c.{_q(fk.column)} = p.{_q(fk.ref_column)}"
        frm = f"FROM {_q(fk.table)} AS c JOIN {_q(fk.ref_table)} AS p ON {on}"
        lab, cw, pw = _q(parent.label.name), _words(fk.table), _words(fk.ref_table)
        tables = (fk.table, fk.ref_table)
        out.append(Draft("join_count", f"SELECT p.{lab}, count(*) AS n {frm} GROUP BY p.{lab} ORDER BY n DESC LIMIT 5",
                         tables, f"the 5 {pw} with the most {cw} rows, by {_words(parent.label.name)}"))
        if child.measures:
            m = child.measures[0]
            out.append(Draft("join_sum", f"SELECT p.{lab}, sum(c.{_q(m.name)}) AS total {frm} GROUP BY p.{lab} "
                                         "ORDER BY total DESC LIMIT 5",
                             tables, f"the 5 {pw} with the highest total {_words(m.name)} over their {cw}"))
        if (v := _sample(parent.label)) is not None:
            out.append(Draft("join_filter", f"SELECT count(*) AS n {frm} WHERE p.{lab} = {quote_literal(v)}",
                             tables, f"how many {cw} rows belong to the {pw} whose {_words(parent.label.name)} is "
                                     f"{v!r}"))
    return out


#: The order ``learn`` spends its time in: each table's most telling kind before any table's second.
ORDER = ("top", "join_count", "group", "lookup", "filter", "join_sum", "group_avg", "by_year", "by_month", "share",
         "join_filter", "list_len", "unnest", "struct_field", "columns_regex", "exclude", "distinct", "count")


#: Drafts of one table tried one after another in a round: their read-backs share the table's schema as the prompt's
#: start, which the embedded model keeps (its state in RAM), so the second costs only its own part.
PER_ROUND = 3


def drafts(cat: Catalog, distinct: dict[str, dict[str, int]]) -> list[Draft]:
    """Every query ``learn`` may try on ``cat``, in the order it tries them: in rounds over the tables, each table's
    next ``PER_ROUND`` drafts by kind (``ORDER``; a join belongs to its child table), so a bounded run covers every
    table before it deepens any. ``distinct``: per table, the distinct values of its counted columns
    (``distinct_sql``)."""
    visible = [t for t in cat.tables.values() if t.name not in cat.hidden and t.rows > 0]
    by_table = {t.name: roles(t, distinct.get(t.name, {})) for t in visible}
    per_kind: dict[str, list[list[Draft]]] = {k: [] for k in ORDER}
    for r in by_table.values():
        mine: dict[str, list[Draft]] = {}
        for d in _one_table(r):
            mine.setdefault(d.kind, []).append(d)
        for k, ds in mine.items():
            per_kind[k].append(ds)
    for d in _joins(cat, by_table):
        per_kind[d.kind].append([d])
    rank = {k: i for i, k in enumerate(ORDER)}
    mine_all: dict[str, list[Draft]] = {}
    for k in ORDER:
        for ds in per_kind[k]:
            for d in ds:
                mine_all.setdefault(d.tables[0], []).append(d)
    queues = [sorted(ds, key=lambda d: rank[d.kind]) for ds in mine_all.values()]
    out: list[Draft] = []
    for round_ in zip_longest(*[[q[i:i + PER_ROUND] for i in range(0, len(q), PER_ROUND)] for q in queues]):
        for chunk in round_:
            out.extend(chunk or [])
    unique: dict[str, Draft] = {}
    for d in out:
        unique.setdefault(d.sql, d)
    return list(unique.values())


def distinct_sql(t: Table, most: int = 24) -> str | None:
    """The one query that counts the distinct values of ``t``'s text and year columns (approximately: one pass), or
    None when it has none."""
    cols = [c.name for c in t.columns if is_text(c.type) or (is_numeric(c.type) and _TIME_LIKE.search(c.name))][:most]
    if not cols:
        return None
    return "SELECT " + ", ".join(f"approx_count_distinct({_q(c)}) AS {_q(c)}" for c in cols) + f" FROM {_q(t.name)}"


def implausible(outcome, kind: str) -> str | None:
    """Why a draft's result is no example (None: it is one): it failed, found nothing, holds only NULLs, is a dump
    of rows, or counts nothing."""
    if not outcome.ok:
        return f"did not run: {(outcome.error or outcome.status).splitlines()[0][:120]}"
    df = outcome.df
    if df is None or len(df) == 0:
        return "no rows"
    if len(df) > MOST_ROWS:
        return f"{len(df)} rows: a dump, not an answer"
    if not substantive(df):
        return "only NULLs"
    if kind in ("count", "filter", "join_filter", "distinct", "share") and df.iat[0, 0] in (0, None):
        return "counts nothing"
    return None
