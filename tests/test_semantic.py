"""The semantic file: each field reaches the ranker, the prompt and `duckask schema`; malformed files
are clear errors naming the line; YAML and markdown say the same thing."""
from __future__ import annotations

import json

import pytest

from duckask.utils.api import ask
from duckask.utils.app.cli import main as cli_main
from duckask.utils.db.database import open_database
from duckask.utils.llm import ScriptedLLM
from duckask.utils.schema.ddl import render_schema
from duckask.utils.schema.ranker import rank_tables
from duckask.utils.semantic import get_catalog
from duckask.utils.semantic.descriptions import SemanticFileError, apply_descriptions

YAML = """\
instructions: |
  "Points" always means points per game unless the question says total.
metrics:
  points_per_team:
    expression: sum(points) / count(DISTINCT team_id)
    table: players
    description: average team scoring
  biggest_arena: max(capacity)
tables:
  arenas:
    description: Home arenas
    synonyms: [venue, stadium]
    columns:
      capacity:
        description: seats
        synonyms: [seating]
  teams:
    columns:
      city:
        values: [Los Angeles, Boston, Chicago]
"""

MARKDOWN = """\
# Instructions
"Points" always means points per game unless the question says total.

# Metrics
| metric | expression | table | description |
|---|---|---|---|
| points_per_team | sum(points) / count(DISTINCT team_id) | players | average team scoring |
| biggest_arena | max(capacity) | | |

# Table arenas
Home arenas
Synonyms: venue, stadium

| column | description | synonyms | values | references |
|---|---|---|---|---|
| capacity | seats | seating | | |

# Table teams
| column | description | synonyms | values |
|---|---|---|---|
| city | | | Los Angeles, Boston, Chicago |
"""


@pytest.fixture(params=["yaml", "md"])
def semantic(request, tmp_path):
    p = tmp_path / f"semantic.{request.param}"
    p.write_text(YAML if request.param == "yaml" else MARKDOWN)
    return p


def test_every_field_reaches_the_schema_the_model_reads(small_db, settings, semantic):
    cat = apply_descriptions(get_catalog(open_database(small_db, settings), settings), semantic)
    text = render_schema(cat, ["arenas", "teams"])
    assert text.startswith('-- "Points" always means points per game')
    assert "CREATE TABLE arenas ( -- Home arenas; aka venue, stadium" in text
    assert "capacity INTEGER -- seats; aka seating" in text
    assert "city VARCHAR -- one of 'Los Angeles', 'Boston', 'Chicago'" in text
    assert "--   biggest_arena = max(capacity)" in text
    assert "points_per_team" not in text               # its table (players) is not shown
    assert "--   points_per_team = sum(points) / count(DISTINCT team_id)  (average team scoring; from players)" \
        in render_schema(cat, ["players"])


def test_yaml_and_markdown_say_the_same(small_db, settings, tmp_path):
    base = get_catalog(open_database(small_db, settings), settings)
    (tmp_path / "s.yaml").write_text(YAML)
    (tmp_path / "s.md").write_text(MARKDOWN)
    assert render_schema(apply_descriptions(base, tmp_path / "s.yaml")) == \
        render_schema(apply_descriptions(base, tmp_path / "s.md"))


def test_synonyms_rank_tables(small_db, settings, semantic):
    base = get_catalog(open_database(small_db, settings), settings)
    question = "Which venue has the most seating?"
    assert rank_tables(base, question)[0].score == 0                       # no word of the schema
    top = rank_tables(apply_descriptions(base, semantic), question)[0]
    assert top.table == "arenas" and top.score > 0


def test_the_prompt_and_duckask_schema_show_it(small_db, isolated_env, semantic, capsys):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name FROM arenas ORDER BY capacity DESC LIMIT 1"]})
    r = ask("Which venue has the most seating?", db=str(small_db), llm=llm, descriptions=str(semantic))
    prompt = llm.calls[0]["messages"][-1]["content"]
    assert r.ok and '"Points" always means' in prompt and "aka venue, stadium" in prompt
    assert cli_main(["schema", "--db", str(small_db), "--descriptions", str(semantic), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["ddl"]
    assert "biggest_arena = max(capacity)" in shown and "one of 'Los Angeles'" in shown


def test_duckask_schema_rank_shows_the_scores_the_semantic_file_gives(small_db, isolated_env, semantic, capsys):
    """The ranker as a debugging tool (docs/debugging.md): the synonyms of the semantic file reach it."""
    question = "Which venue has the most seating?"
    assert cli_main(["schema", "--db", str(small_db), "--rank", question]) == 0
    bare = capsys.readouterr().out.splitlines()
    assert cli_main(["schema", "--db", str(small_db), "--descriptions", str(semantic), "--rank", question,
                     "--top", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].split()[1] == "arenas" and float(lines[0].split()[0]) > 0
    assert all(float(x.split()[0]) == 0 for x in bare)                     # no word of the schema without it


def test_duckask_sql_tidy_prints_the_cleaned_query_without_running_it(small_db, isolated_env, capsys):
    # a join the question does not need, on a table it does not name (sql/tidy.py's unused-join rule)
    sql = "SELECT p.name FROM players p JOIN teams t ON p.team_id = t.id WHERE p.points > 10"
    assert cli_main(["sql", "--db", str(small_db), "--tidy", sql, "--question", "Which players scored over 10?"]) == 0
    out = capsys.readouterr().out.strip()
    assert "teams" not in out and "players" in out and "points > 10" in out


@pytest.mark.parametrize("suffix, text, message", [
    ("yaml", "tables:\n  arenas:\n    columns:\n      seats: x\n", r"line 4: table 'arenas' has no column 'seats'"),
    ("yaml", "tables:\n  stadiums:\n    description: x\n", r"line 2: no table 'stadiums'"),
    ("yaml", "tables:\n  arenas:\n    colums: {}\n", r"line 2: unknown key\(s\) \['colums'\]"),
    ("yaml", "tables:\n  arenas:\n    synonyms: {a: b}\n", r"line 3: expected a list of words"),
    ("yaml", "metrics:\n  ppg: {table: players}\n", r"line 2: metric 'ppg' needs an expression"),
    ("yaml", "metrics:\n  ppg: {expression: x, table: nope}\n", r"line 2: metric 'ppg' names table 'nope'"),
    ("yaml", "tables: [unclosed\n", "not valid YAML"),
    ("md", "stray text\n# Table arenas\n", "line 1: text before the first heading"),
    ("md", "# Tables\n", "line 1: unknown section 'Tables'"),
    ("md", "# Table arenas\n| column | description |\n|---|---|\n| seats | x |\n",
     r"line 4: table 'arenas' has no column"),
    ("md", "# Metrics\n| metric | expression |\n|---|---|\n| ppg | |\n", "line 4: a metric row needs"),
])
def test_a_malformed_semantic_file_names_the_line(small_db, settings, tmp_path, suffix, text, message):
    p = tmp_path / f"bad.{suffix}"
    p.write_text(text)
    with pytest.raises(SemanticFileError, match=message):
        apply_descriptions(get_catalog(open_database(small_db, settings), settings), p)
