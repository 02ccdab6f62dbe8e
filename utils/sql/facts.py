"""``SchemaFacts``: what the SQL rules and repairs know of the schema, built once per query from the
catalog: column names per table, foreign keys, the tables the question names, and the semantic
file's named metrics."""
from __future__ import annotations

from dataclasses import dataclass, field

from duckask.utils.schema.catalog import ForeignKey
from duckask.utils.schema.terms import question_terms, split_ident


@dataclass(frozen=True)
class SchemaFacts:
    columns: dict[str, set[str]] = field(default_factory=dict)   # {table: {column}}, lower-case
    links: list[ForeignKey] | None = None      # None: unknown (no join is judged by its keys)
    named: set[str] | None = None              # tables the question names (lower-case); None: no question
    metrics: dict[str, str] = field(default_factory=dict)       # {metric name, lower-case: expression}

    @classmethod
    def of(cls, catalog, question: str | None = None, *, links: bool = True) -> SchemaFacts:
        return cls(columns=catalog.column_sets(), links=catalog.foreign_links() if links else None,
                   named=None if question is None else named_tables(catalog, question),
                   metrics={m.name.lower(): m.expression for m in getattr(catalog, "metrics", [])})


def named_tables(catalog, question: str) -> set[str]:
    """The tables (lower-case) whose every name word, stemmed, is in the question ("owners" names
    Owners, "high schoolers" names Highschooler; "car models" does not name car_makers)."""
    terms = set(question_terms(question))
    return {t.lower() for t in catalog.tables if set(split_ident(t)) <= terms}
