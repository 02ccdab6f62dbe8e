"""What the Baseball Databank's tables are called and what they mean in the demo database: table and column
names (snake_case, abbreviations spelt out), column types, primary keys, and table and column comments parsed
from the databank's own ``readme2014.txt``. ``lahman.py`` builds the database with them."""
from __future__ import annotations

import re

from duckask.utils.db.importer import TABLE_COMMENT_KEY

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
        found = by_norm.get(_norm(section))
        if found is None:
            continue
        table = TABLE_NAMES.get(found, column_name(found))
        aliases = {_norm(k): _norm(v) for k, v in _README_COLUMN_ALIASES.get(table, {}).items()}
        csv_cols = {_norm(c): c for c in headers[found]}
        for readme_col, desc in descs.items():
            key = aliases.get(_norm(readme_col), _norm(readme_col))
            orig = csv_cols.get(key) or next(
                (c for c in headers[found] if _norm(column_name(c)) == key), None
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
