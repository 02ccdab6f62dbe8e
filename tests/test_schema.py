"""Descriptions files (apply_descriptions) and the table ranker's word matching, on a keyless DB."""
from __future__ import annotations

import duckdb
import pytest
from conftest import duckdb_file

from duckask.utils.schema.ddl import render_ddl
from duckask.utils.schema.ranker import rank_tables
from duckask.utils.schema.values import hints, match_flags, match_values
from duckask.utils.semantic import get_catalog
from duckask.utils.semantic.descriptions import apply_descriptions


@pytest.fixture(scope="module")
def keyless_db(tmp_path_factory):
    """Two tables with a join the database does not declare, and terse names."""
    path = tmp_path_factory.mktemp("keyless") / "league.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE plr (pid INTEGER, nm VARCHAR, drafted_in INTEGER)")
    con.execute("CREATE TABLE st (sid INTEGER, pid INTEGER, w INTEGER, l INTEGER, ts_pct DOUBLE)")
    con.execute("CREATE TABLE draft (yr INTEGER, pick INTEGER, pid INTEGER)")
    con.execute("INSERT INTO plr VALUES (1, 'Ann', 2003), (2, 'Bob', 2010)")
    con.execute("INSERT INTO st VALUES (1, 1, 50, 32, 0.61), (2, 2, 40, 42, 0.55)")
    con.execute("INSERT INTO draft VALUES (2003, 1, 1), (2010, 5, 2)")
    con.close()
    return path


def write(tmp_path, text):
    p = tmp_path / "desc.yaml"
    p.write_text(text)
    return p


def test_descriptions_fill_comments_and_declare_joins(keyless_db, settings, tmp_path):
    cat = get_catalog(str(keyless_db), settings)
    assert cat.foreign_links() == []
    desc = write(tmp_path, """
tables:
  st:
    description: season standings, one row per player season; true shooting percentage
    columns:
      w: games won
      PID:
        description: player id
        references: plr.pid
  plr: Players and their names
""")
    out = apply_descriptions(cat, desc)
    assert out.foreign_links() == [("st", "pid", "plr", "pid")]
    ddl = render_ddl(out, ["st"])
    assert "pid INTEGER REFERENCES plr(pid), -- player id" in ddl
    assert "w INTEGER, -- games won" in ddl and "-- season standings" in ddl
    assert out.tables["plr"].comment == "Players and their names"
    assert cat.foreign_links() == [] and cat.tables["st"].comment == ""     # the original is untouched


@pytest.mark.parametrize("text, message", [
    ("tables:\n  nope: x\n", "no table 'nope'"),
    ("tables:\n  st:\n    columns:\n      zz: x\n", "has no column 'zz'"),
    ("tables:\n  st:\n    columns:\n      pid:\n        references: plr.nope\n", "references 'plr.nope'"),
    ("tables:\n  st:\n    columns:\n      pid:\n        references: nope(pid)\n", "references 'nope(pid)'"),
])
def test_descriptions_typos_are_errors(keyless_db, settings, tmp_path, text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        apply_descriptions(get_catalog(str(keyless_db), settings), write(tmp_path, text))


def test_ranker_matches_word_forms_and_description_phrases(keyless_db, settings, tmp_path):
    cat = apply_descriptions(get_catalog(str(keyless_db), settings), write(tmp_path, """
tables:
  st:
    description: standings with true shooting percentage
    columns:
      w: wins
  draft:
    description: draft picks by year
"""))
    top = lambda q: rank_tables(cat, q)[0].table  # noqa: E731
    assert top("Which player won the most games?") == "st"             # won ~ wins (irregular form)
    assert top("Who was picked first among players drafted in 2003?") == "draft"   # drafted ~ draft
    best = rank_tables(cat, "Who had the best true shooting?")[0]
    assert best.table == "st" and "doc~trueshoot" in best.reasons           # a phrase of the description


def test_flag_columns_the_question_names_become_value_hints(settings, tmp_path):
    path = tmp_path / "flags.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE countrylanguage (CountryCode VARCHAR, Language VARCHAR, IsOfficial VARCHAR)")
    con.execute("INSERT INTO countrylanguage VALUES ('NLD', 'Dutch', 'T'), ('NLD', 'Frisian', 'F')")
    con.execute("CREATE TABLE dogs (name VARCHAR, abandoned_yn BIGINT, gender BIGINT, vaccinated BOOLEAN)")
    con.execute("INSERT INTO dogs VALUES ('Rex', 1, 0, true), ('Ace', 0, 1, false)")
    con.close()
    cat = get_catalog(str(path), settings)
    hints = lambda q: {(m.table, m.column, m.value) for m in match_flags(cat, q)}  # noqa: E731
    assert hints("How many official languages does the Netherlands have?") == {("countrylanguage", "IsOfficial", "T")}
    assert hints("Which dogs were abandoned?") == {("dogs", "abandoned_yn", "1")}
    assert hints("List the vaccinated dogs.") == {("dogs", "vaccinated", "true")}
    # A two-valued column not named like a flag (gender 0/1) has no "yes" value; unnamed flags give nothing.
    assert hints("List each dog's gender.") == set()
    assert hints("Which languages are spoken?") == set()


def test_values_a_question_names_are_found_once_normalised_or_inside_longer_values(settings, tmp_path):
    """Issue 44's forward links: a phrase as stored, else with case, accents and plurals aside, else (two words or
    more) inside longer values, shown to the model as a pattern with an example."""
    from dataclasses import asdict

    path = duckdb_file(tmp_path / "people.duckdb",
                       "CREATE TABLE players (name VARCHAR, college VARCHAR, country VARCHAR, position VARCHAR)",
                       "INSERT INTO players VALUES ('Ann Lee', 'University of North Carolina', 'Côte d''Ivoire', "
                       "'Forward'), ('Bo Park', 'Duke', 'USA', 'Guard'), ('Cy Ruiz', 'Kentucky', 'USA', 'Center')")
    cat = get_catalog(str(path), settings)

    def found(q):
        return {(m.column, m.value, m.how) for m in match_values(cat, q)}

    assert found("Which players went to North Carolina?") == {("college", "University of North Carolina", "contains")}
    assert found("List the Forwards") == {("position", "Forward", "same")}                  # a plural
    assert found("Who comes from Cote d'Ivoire?") == {("country", "Côte d'Ivoire", "equal")}  # accents: fold
    assert found("Players from Duke") == {("college", "Duke", "equal")}
    assert found("players of the university") == set()        # a lone common word, or a stop word at an end
    shown = hints([asdict(m) for m in match_values(cat, "Which players went to North Carolina?")])
    assert shown == "players.college LIKE '%North Carolina%' (e.g. 'University of North Carolina')"


def test_a_name_links_to_the_columns_its_whole_phrase_is(settings, tmp_path):
    """Issue 53, item 6: "Rickey Henderson" links to name_first and name_last together (name_last has too many values
    to index: here the index leaves it out as a high-cardinality column would be), and the links of its parts to
    cities are dropped; a phrase one column holds whole keeps that link; a reader who may not read the table gets
    no link from it."""
    from duckask.utils.access.roles import ScopedDatabase, User
    from duckask.utils.db.database import open_database
    from duckask.utils.schema.values import whole_names

    path = duckdb_file(tmp_path / "names.duckdb",
                       "CREATE TABLE people (player_id VARCHAR, name_first VARCHAR, name_last VARCHAR, "
                       "birth_city VARCHAR, suffix VARCHAR)",
                       "INSERT INTO people VALUES ('henderi01', 'Rickey', 'Henderson', 'Chicago', NULL), "
                       "('hendeda01', 'Dave', 'Henderson', 'Merced', NULL), ('x1', 'Ann', 'Moss', 'Henderson', NULL), "
                       "('griffke02', 'Ken', 'Griffey', 'Donora', 'Jr.'), "
                       "('smithjo', 'John', 'Smith', 'Henderson', NULL)",
                       "CREATE TABLE awards (award VARCHAR, player_id VARCHAR)",
                       "INSERT INTO awards VALUES ('Rickey Henderson Award', 'henderi01'), ('Gold Glove', 'x1')")
    db = open_database(str(path), settings)
    cat = get_catalog(db)
    cat.values = {k: [e for e in v if e[1] != "name_last"] for k, v in cat.values.items()}   # not indexed
    q = "How many stolen bases did Rickey Henderson have?"
    before = {(m.table, m.column, m.value) for m in match_values(cat, q)}      # the award holds the phrase as a part
    assert before == {("awards", "award", "Rickey Henderson Award")}
    steals = "How many steals did Rickey have in Henderson?"
    assert {(m.column, m.value) for m in match_values(cat, steals)} == {("name_first", "Rickey"),
                                                                         ("birth_city", "Henderson")}
    assert whole_names(db, cat, steals, match_values(cat, steals)) == match_values(cat, steals)  # not one phrase

    linked = [(m.table, m.column, m.value, m.phrase) for m in whole_names(db, cat, q, match_values(cat, q))]
    assert linked == [("people", "name_first", "Rickey", "Rickey Henderson"),
                      ("people", "name_last", "Henderson", "Rickey Henderson")]
    griffey = whole_names(db, cat, "How many hits did Ken Griffey Jr. have?", match_values(cat, "Ken Griffey Jr."))
    assert {(m.column, m.value) for m in griffey} == {("name_first", "Ken"), ("name_last", "Griffey")}
    # A phrase one column holds whole is left as it was linked; a phrase nothing holds adds nothing.
    award = "Who won the Rickey Henderson Award?"
    assert whole_names(db, cat, award, match_values(cat, award)) == match_values(cat, award)
    assert whole_names(db, cat, "Did Zed Henderson play?", []) == []
    # Lower-case words are not a name; the stored value's case is what links.
    assert whole_names(db, cat, "how many did rickey henderson steal?", []) == []
    assert [m.value for m in whole_names(db, cat, "Rickey HENDERSON's steals", [])] == ["Rickey", "Henderson"]
    # A reader whose allowlist leaves people out learns nothing of it through a link.
    reader = ScopedDatabase(db, User("rita", "reader", frozenset({"awards"})))
    assert whole_names(reader, cat, q, []) == []


def test_common_words_link_only_to_the_tables_the_question_names(settings, tmp_path):
    """Issue 53, item 4: "the first round of the 2019 draft" is not about playoff series, whose round names hold
    'first round' too: a phrase of common words links only to a table the question names or one a key joins to it;
    a proper name links wherever its value is; a question naming no table keeps every link."""
    from duckask.utils.schema.values import from_entities

    path = duckdb_file(tmp_path / "league.duckdb",
                       "CREATE TABLE teams (team_id INTEGER PRIMARY KEY, nickname VARCHAR, region VARCHAR)",
                       "INSERT INTO teams VALUES (1, 'Lakers', 'west coast'), (2, 'Knicks', 'east coast')",
                       "CREATE TABLE drafts (year INTEGER, pick INTEGER, round_label VARCHAR, player VARCHAR, "
                       "team_id INTEGER REFERENCES teams(team_id))",
                       "INSERT INTO drafts VALUES (2019, 1, 'first round', 'Zion Williamson', 1), "
                       "(2019, 31, 'second round', 'Kezie Okpala', 2)",
                       "CREATE TABLE playoff_series (year INTEGER, round_name VARCHAR, winner VARCHAR)",
                       "INSERT INTO playoff_series VALUES (2019, 'first round', 'Lakers'), (2019, 'finals', 'Raptors')")
    cat = get_catalog(str(path), settings)

    def links(q):
        return {(m.table, m.column) for m in from_entities(cat, q, match_values(cat, q))}

    assert {(m.table, m.column) for m in match_values(cat, "Who went in the first round of the 2019 draft?")} >= {
        ("drafts", "round_label"), ("playoff_series", "round_name")}
    assert links("Who went in the first round of the 2019 draft?") == {("drafts", "round_label")}
    assert links("Which team lost in the first round of the playoffs?") >= {("playoff_series", "round_name")}
    assert ("playoff_series", "winner") in links("How many draft picks did the Lakers make?")    # a proper name
    assert ("teams", "region") in links("List the draft picks of the west coast franchises")   # a key joins it
    assert links("What happened in the first round?") == {("drafts", "round_label"), ("playoff_series", "round_name")}
