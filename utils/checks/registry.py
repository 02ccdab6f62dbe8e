"""The one registry of checks (``CHECKS``), as sqlglot's optimizer keeps its rules: a tuple of small named functions,
each entry saying what kind of check it is, what it needs, what it fails on (the docs are generated from it) and
where its cases are. ``failed_check`` runs them in this order; the first critique wins.

A check is ``check(question, sql, df, facts) -> critique or None`` in the module of its kind:

- ``shape`` (``checks.shape``): the result's shape and the query's form against the question;
- ``grounding`` (``checks.grounding``): the values it compares, against the question and the data;
- ``coverage`` (``checks.coverage``): what the question asks that the answer leaves out;
- ``entity`` (``checks.entity``): what a count counts, decided by running a count.

Every kind but ``shape`` ties an answer to its question's words and the data: the confidence runs those on the final
answer whatever the grader did (``trust.grounding.grounding``) and says each in its ``words``. ``needs``: the facts a
check cannot run without; one that needs ``given`` (where a literal may come from) is left out where that is not
known (the plan path, whose literals come from the semantic file).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from duckask.utils.checks import coverage, entity, grounding, shape
from duckask.utils.checks.facts import Critique, Facts

KINDS = ("shape", "grounding", "coverage", "entity")


@dataclass(frozen=True)
class Check:
    run: Callable[[str, str, pd.DataFrame | None, Facts], str | None]
    kind: str                      # one of KINDS
    fails_when: str                # what it catches, in the docs' words
    example: str = ""              # a question and the wrong answer it catches
    needs: tuple[str, ...] = ()    # facts it cannot run without: given, values, tables, names, named, database
    words: str = ""                # the confidence's reason, for the kinds it weighs (else the name)
    cases: str = "tests/fixtures/checks.yaml"    # where its cases are (rows whose ``check`` is its name)

    @property
    def name(self) -> str:
        return self.run.__name__

    @property
    def module(self) -> str:
        return "utils/" + self.run.__module__.split(".utils.", 1)[1].replace(".", "/") + ".py"

    def __call__(self, question: str, sql: str, df, facts: Facts) -> str | None:
        return self.run(question, sql, df, facts)


_EQUALS = "a text literal compared with `=` or `IN`"
#: Every check the grader runs, tried in this order: a literal that is no value of its column first (its critique
#: offers the values), then the result's shape, then the answer against its question and its rows, then against
#: the question's words and the data.
CHECKS: tuple[Check, ...] = (
    Check(grounding.literal_not_a_value, "grounding", needs=("values",), words="a value its column does not hold",
          fails_when=f"{_EQUALS} is not a value of its column, and the column holds values it was likely meant as (the "
          "same once case, accents and plurals are set aside; an abbreviation such as `F` for Forward, with `F-C`, "
          "`C-F`; a value containing it; a near spelling): the critique offers them (`utils/schema/value_index.py` "
          "reads a text column's distinct values once per process, up to 20,000; a literal with nothing near is left "
          "alone, since \"none\" can be the answer)",
          example="`position = 'Forward'` where the column holds `F`, `F-C`, `C-F`"),
    Check(grounding.year_outside_span, "grounding", needs=("values",),
          fails_when="a filter holds a time column (a year or season number, a date, `year(date)`) to years no row "
          "of its table has, with `=`, `IN`, `BETWEEN` or `<`/`>` (a number column is allowed a year either side: a "
          "season filed by its first or its last year); the critique names the years the table holds and the tables "
          "about the same thing (a word of their names in common) whose time columns hold the year, \"also in the "
          "warehouse\", or says none does (a retry's prompt then shows those tables' DDL under \"Also in the "
          "warehouse\", beside the selected ones: the critique carries them as its `reach`); only a result that "
          "holds nothing (no rows, NULLs, zeros) is held to it",
          example="the `games` model holds 2025-26 only: \"How many games were played in the 2010 season?\" answered "
          "`0` from `season = 2010`, `high` (issue 53)"),
    Check(shape.no_rows, "shape",
          fails_when="the result is empty (naming a contradictory filter `x = 'a' AND x = 'b'` when there is one)"),
    Check(shape.all_null, "shape", fails_when="every value is NULL"),
    Check(shape.self_comparison, "shape", fails_when="a join condition compares a column with itself",
          example="`ON t1.id = t1.id`"),
    Check(shape.one_number_asked, "shape", fails_when="\"how many ...\" without each/per returns several rows"),
    Check(shape.average_without_aggregate, "shape",
          fails_when="\"the average X\" is answered per row, with no aggregate anywhere"),
    Check(shape.per_group_without_grouping, "shape", needs=("names",),
          fails_when="\"for each Y\" / \"per Y\" is answered by one row over everything"),
    Check(shape.flag_contradicts_question, "shape",
          fails_when="a yes/no column the question talks about reads \"no\" in every row",
          example="\"Which team won the World Series in 2016?\" answered by a row whose `team_season_won_world_series` "
          "is `N`"),
    Check(shape.grouped_by_named_flag, "shape",
          fails_when="the query groups by a yes/no column the question names as a condition, so both values come back",
          example="\"How many players were inducted ...\" grouped by `inducted`"),
    Check(shape.count_not_a_count, "shape",
          fails_when="\"how many\" is answered by text, a negative number or a fraction (not where the question asks "
          "for a measure: hours, an average, a rate)", example="`avg(w)` for \"how many games did they win\""),
    Check(shape.one_asked_many_returned, "shape",
          fails_when="\"which X has the most ...\" (one X) returns more than 5 rows",
          example="an ORDER BY without the LIMIT"),
    Check(shape.many_asked_one_kept, "shape", fails_when="\"list the X that ...\" is answered with `LIMIT 1`"),
    Check(grounding.unasked_literal, "grounding", needs=("given",), words="a value nobody gave",
          fails_when="the query filters on a text value that neither the question, earlier turns, the shown examples "
          "nor the values found in the data gave (one-letter codes and yes/no flags pass; so does a near spelling)",
          example="\"show me the u9s players\" filtered on `t.name = 'Hornets'`"),
    Check(coverage.count_for_a_list, "coverage", words="a count where a list was asked",
          fails_when="\"list / show / which Xs ...\" (no \"how many\", \"number of\", \"total\") is answered by one "
          "number from a `count`",
          example="\"List all players from Italy\" answered by `4` (the plan path's count, issue 44)"),
    Check(grounding.unasked_date, "grounding", needs=("given",), words="a year the question never states",
          fails_when="a filter compares a date or a time column (year, season, date) with a year the question, "
          "earlier turns, examples and data hints never state; a day of the year named without one (\"on "
          "Halloween\", \"October 31st\") gets \"compare month and day\"; \"this season\", \"last year\", \"the "
          "latest\" leave the year to the query",
          example="\"games played on Halloween\" as `game_date = '2025-10-31'`"),
    Check(coverage.table_not_asked_about, "coverage", needs=("tables",),
          words="it reads a table the question is not about",
          fails_when="the question names a table's entity (its name or synonyms: \"players\") and nothing the query "
          "reads is tied to a word of the question (name, synonyms, description, columns and their comments, or a "
          "value it compares that the question says); a query reading one tied table may join others",
          example="\"List the players named Scott\" answered from `referees`"),
    Check(coverage.constraint_dropped, "coverage", needs=("named",), words="a condition the question states is missing",
          fails_when="the question states a year (in any of a season's two years) or names a value of the data (a "
          "name, with a capital or a digit, that the value hints found) and the query never uses it; a year is not "
          "asked of tables with no time column, or whose time columns hold only the season stated (one value, or the "
          "dates of one season that includes the year)",
          example="\"Who won the World Series in 2016?\" answered over every year"),
    Check(entity.count_not_of_entity, "entity", needs=("values", "database"),
          fails_when="\"how many Xs\" is answered by `count(*)` (one count, one table, no grouping) over rows that are "
          "not one X each: the same query counting the different Xs (the column named after X, or after the table "
          "when X is one of its names or synonyms: \"referees\" in `officials` is `official_id`; an id before a name) "
          "is run under the query's own filters, and finds fewer; the critique gives both numbers and "
          "`count(DISTINCT ...)` (issue 53)",
          example="\"How many players ...?\" as `count(*)` over a table of player-seasons"),
)


def of_kind(*kinds: str, checks: Sequence[Check] = CHECKS) -> tuple[Check, ...]:
    """The checks of these kinds, in the registry's order."""
    unknown = set(kinds) - set(KINDS)
    if unknown:
        raise ValueError(f"no kind of check {', '.join(sorted(unknown))}; the kinds are {', '.join(KINDS)}")
    return tuple(c for c in checks if c.kind in kinds)


#: The checks that tie an answer to its question's words and the data (every kind but the result's shape).
GROUNDING = of_kind("grounding", "coverage", "entity")


def runnable(check: Check, given_known: bool) -> bool:
    """Whether ``check`` can run: one that needs ``given`` only where where a literal may come from is known."""
    return given_known or "given" not in check.needs


def rule_check(question: str, df: pd.DataFrame | None, sql: str = "", names: set[str] | None = None,
               given: str | None = None, values=None) -> str | None:
    """A critique when the result is certainly not an answer to the question, else None. ``given``: the text a
    filter's literal may come from besides the question (None: not known, so literals are not checked);
    ``values``: the database's value index (``schema.value_index``; None: literals are not checked against it)."""
    return failed_check(question, df, sql, names, given, values)[1]


def failed_check(question: str, df: pd.DataFrame | None, sql: str = "", names: set[str] | None = None,
                 given: str | None = None, values=None, *, facts: Facts | None = None,
                 given_known: bool | None = None, checks: Sequence[Check] = CHECKS) -> tuple[str | None,
                                                                                                Critique | None]:
    """(the name of the first check that fails, its critique), or (None, None). ``facts``: all the checks compare
    with (``trust.grounding.facts_for``), else built from ``names``, ``given`` and ``values``; ``given_known``:
    whether the text literals may come from is known (else the checks that need ``given`` are not run);
    ``checks``: which to run (the registry's, in its order, unless given)."""
    facts = facts or Facts(names or set(), given or "", values)
    known = given is not None if given_known is None else given_known
    for check in checks:
        if runnable(check, known) and (critique := check(question, sql, df, facts)):
            return check.name, critique if isinstance(critique, Critique) else Critique(critique)
    return None, None
