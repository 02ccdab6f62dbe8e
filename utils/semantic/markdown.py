"""The semantic file written as markdown, for teams who document their warehouse that way.

Headings start sections; pipe tables carry the structured parts::

    # Instructions
    "This season" means 2025-26. Seasons are named by the year they end in.

    # Metrics
    | metric | expression | table | description |
    |---|---|---|---|
    | ppg | PTS / GP | nbacom_player_totals | points per game |

    # Table nbacom_standings
    Regular-season standings, 2025-26.
    Synonyms: standings, records

    | column | description | synonyms | values | references |
    |---|---|---|---|---|
    | WINS | regular-season wins | victories | | |
    | TEAM_ID | NBA.com team id | | | kaggle_team.id |

Lists inside cells are comma-separated. ``parse_markdown`` returns the same dict as the YAML form,
with the line of each entry, so errors name the line.
"""
from __future__ import annotations

import re
from pathlib import Path

_HEADING = re.compile(r"^#{1,3}\s+(.*?)\s*$")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _split(cell: str) -> list[str]:
    return [w.strip() for w in cell.split(",") if w.strip()]


def parse_markdown(path: Path) -> tuple[dict, dict[tuple, int]]:
    from duckask.utils.semantic.errors import SemanticFileError

    data: dict = {"tables": {}, "metrics": {}}
    lines: dict[tuple, int] = {}
    section, table, header = None, None, None
    text: list[str] = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.rstrip()
        if m := _HEADING.match(line):
            title = m.group(1)
            header, text = None, []
            if title.lower() == "instructions":
                section, table = "instructions", None
            elif title.lower() == "metrics":
                section, table = "metrics", None
            elif title.lower() == "table" or title.lower().startswith(("table ", "table:")):
                section, table = "table", title[5:].strip(" :`")
                if not table:
                    raise SemanticFileError(f"{path}, line {n}: a table heading needs the table's name, "
                                            "e.g. '# Table nbacom_standings'")
                data["tables"][table] = {"columns": {}}
                lines[("tables", table)] = n
            else:
                raise SemanticFileError(f"{path}, line {n}: unknown section {title!r} "
                                        "(Instructions, Metrics, or Table <name>)")
            continue
        if section is None:
            if line.strip():
                raise SemanticFileError(f"{path}, line {n}: text before the first heading "
                                        "(# Instructions, # Metrics or # Table <name>)")
            continue
        if line.lstrip().startswith("|"):
            cells = _cells(line)
            if header is None:
                header = [c.lower() for c in cells]
                continue
            if all(set(c) <= set("-: ") for c in cells):
                continue
            row = dict(zip(header, cells + [""] * (len(header) - len(cells))))
            if section == "metrics":
                name = row.get("metric") or row.get("name")
                if not name or not row.get("expression"):
                    raise SemanticFileError(f"{path}, line {n}: a metric row needs a metric name and an expression")
                data["metrics"][name] = {"expression": row["expression"], "table": row.get("table", ""),
                                         "description": row.get("description", "")}
                lines[("metrics", name)] = n
            elif section == "table":
                col = row.get("column")
                if not col:
                    raise SemanticFileError(f"{path}, line {n}: a column row needs the column's name")
                entry: dict[str, str | list[str]] = {
                    k: v for k, v in (("description", row.get("description", "")),
                                      ("references", row.get("references", ""))) if v}
                for key in ("synonyms", "values"):
                    if row.get(key):
                        entry[key] = _split(row[key])
                data["tables"][table]["columns"][col] = entry
                lines[("tables", table, "columns", col)] = n
            else:
                raise SemanticFileError(f"{path}, line {n}: a table row in the Instructions section")
            continue
        header = None
        if section == "instructions":
            text.append(line)
            data["instructions"] = "\n".join(text).strip()
        elif section == "table" and line.strip():
            if line.lower().startswith("synonyms:"):
                data["tables"][table]["synonyms"] = _split(line.split(":", 1)[1])
            else:
                spec = data["tables"][table]
                spec["description"] = (spec.get("description", "") + " " + line.strip()).strip()
    return data, lines
