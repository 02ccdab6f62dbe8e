"""The catalog's types: ``Catalog`` (tables, and an index of short text values), ``Table``,
``Column``, and the small types of keys: ``Reference`` (the column a foreign key points at) and
``ForeignKey``. A catalog round-trips through JSON for the on-disk cache."""
from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import NamedTuple, TypeVar

CATALOG_VERSION = 9


def fold(text: str) -> str:
    """Lower-case, trimmed and accent-free: 'Nikola Jokić' and 'nikola jokic' fold alike."""
    decomposed = unicodedata.normalize("NFKD", text.strip().lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


class Reference(NamedTuple):
    """The column a foreign key points at; shown in DDL as ``table(column)``."""
    table: str
    column: str

    def __str__(self) -> str:
        return f"{self.table}({self.column})"


class ForeignKey(NamedTuple):
    """``table.column`` references ``ref_table.ref_column``."""
    table: str
    column: str
    ref_table: str
    ref_column: str


@dataclass
class Metric:
    """A named measure users ask for by name (``ppg: PTS / GP``), shown to the model with its table."""
    name: str
    expression: str
    description: str = ""
    table: str = ""


@dataclass
class Column:
    name: str
    type: str
    comment: str = ""
    pk: bool = False
    ref: Reference | None = None     # what this column references, when it is a foreign key
    synonyms: list[str] = field(default_factory=list)   # words users say for it (semantic file)
    allowed: list[str] = field(default_factory=list)    # the values it may hold, shown to the model (semantic file)
    samples: list[str] = field(default_factory=list)
    shape: str = ""                  # a nested column's note: fields, elements or JSON keys and an example


@dataclass
class Table:
    name: str
    columns: list[Column]
    comment: str = ""
    rows: int = 0
    pk: list[str] = field(default_factory=list)
    synonyms: list[str] = field(default_factory=list)   # words users say for it (semantic file)
    reads: list[str] = field(default_factory=list)      # a model (utils/db/models.py): the tables it reads
    model: bool = False                                 # a model of the semantic directory, built as a view
    grain: list[str] = field(default_factory=list)      # what one row is: the key, or unique key-like columns

    def column(self, name: str) -> Column | None:
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)


@dataclass
class Catalog:
    key: str
    tables: dict[str, Table]
    # lower-cased text value -> list of [table, column, value as stored]
    values: dict[str, list[list[str]]] = field(default_factory=dict)
    # From a semantic (descriptions) file: notes for the whole database, and named metrics.
    instructions: str = ""
    metrics: list[Metric] = field(default_factory=list)
    # With public models (the semantic file's ``models: public``): what the models read, kept out of table
    # selection and value hints unless a question names it.
    hidden: set[str] = field(default_factory=set)

    def visible(self, question: str = "") -> list[str]:
        """The tables a question is answered from: all but the hidden ones, and those the question names."""
        words = set(re.findall(r"[a-z0-9_]+", question.lower()))
        return [t for t in self.tables if t not in self.hidden or t.lower() in words]

    def to_json(self) -> str:
        return json.dumps({"version": CATALOG_VERSION, "key": self.key,
                           "tables": {k: asdict(t) for k, t in self.tables.items()}, "values": self.values})

    @classmethod
    def from_json(cls, text: str) -> Catalog:
        d = json.loads(text)
        if d.get("version") != CATALOG_VERSION:
            raise ValueError("stale catalog cache")
        tables = {k: Table(**{**t, "columns": [Column(**{**c, "ref": Reference(*c["ref"]) if c["ref"] else None})
                                               for c in t["columns"]]}) for k, t in d["tables"].items()}
        return cls(key=d["key"], tables=tables, values=d["values"])

    def column_sets(self) -> dict[str, set[str]]:
        """{table: {column}}, both lower-case: what the SQL clean-ups and repairs check names against."""
        return {t.lower(): {c.name.lower() for c in tb.columns} for t, tb in self.tables.items()}

    def foreign_links(self) -> list[ForeignKey]:
        """Every foreign key (declared, implied by naming, or from a descriptions file)."""
        return [ForeignKey(t.name, c.name, c.ref.table, c.ref.column)
                for t in self.tables.values() for c in t.columns if c.ref]


def is_text(type_: str) -> bool:
    return type_.upper().startswith(("VARCHAR", "TEXT", "STRING", "CHAR", "ENUM"))


T = TypeVar("T")


def per_catalog(build: Callable[[Catalog], T]) -> Callable[[Catalog], T]:
    """Memoise ``build(catalog)`` per catalog object (indexes over a catalog are built once, not once a
    question); a few dozen catalogs are kept."""
    memo: dict[int, tuple[Catalog, T]] = {}

    @functools.wraps(build)
    def cached(catalog: Catalog) -> T:
        hit = memo.get(id(catalog))
        if hit is not None and hit[0] is catalog:
            return hit[1]
        if len(memo) > 32:
            memo.clear()
        value = build(catalog)
        memo[id(catalog)] = (catalog, value)
        return value

    return cached
