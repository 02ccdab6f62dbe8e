"""The DuckDB-idioms question set (bench/idioms_dev.yaml, bench/idioms_heldout.yaml) is sound: its databases
build (bench/idioms_dbs.py, here into a temporary folder), both halves load, and every gold SQL runs through
duckask's safe executor and returns rows. No model is run; only the gold SQL, never the questions' text,
is looked at beyond its form."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from duckask.utils.db.database import open_database
from duckask.utils.eval.questions import Question, load_questions
from duckask.utils.sql.describe import has_top_level_order_by

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))   # bench/idioms_dbs.py: the builder the set's header tells users to run
import idioms_dbs  # noqa: E402

HALVES = {name: load_questions(ROOT / "bench" / f"idioms_{name}.yaml")[0] for name in ("dev", "heldout")}
QUESTIONS = [q for qs in HALVES.values() for q in qs]
#: Words that would hand the model the DuckDB idiom a question is meant to test.
GIVEAWAYS = re.compile(r"unnest|split_part|string_split|date_diff|date_trunc|date_sub|json_|list_|->|columns\(|"
                       r"\bexclude\b|\bpivot\b|\bstruct\b|\bmap\b|qualify|group by|regexp|parse_filename|select ",
                       re.IGNORECASE)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("idioms")
    idioms_dbs.build(out)
    return out


def local(q: Question, built: Path) -> Path:
    """The question's database in the test's build (the files name /tmp/duckask_idioms/<name>.duckdb)."""
    return built / Path(q.db).name


def test_both_halves_are_big_enough_and_disjoint():
    assert len(HALVES["dev"]) >= 40 and len(HALVES["heldout"]) >= 40
    assert not {q.id for q in HALVES["dev"]} & {q.id for q in HALVES["heldout"]}
    assert not {q.question for q in HALVES["dev"]} & {q.question for q in HALVES["heldout"]}
    for qs in HALVES.values():
        assert len({Path(q.db).name for q in qs}) >= 6


def test_every_question_names_a_built_database_and_one_kind(built):
    names = {f"{name}.duckdb" for name in idioms_dbs.BUILDERS}
    assert sorted(p.name for p in built.glob("*.duckdb")) == sorted(names)
    for q in QUESTIONS:
        assert Path(q.db).parent == Path(idioms_dbs.DEFAULT_OUT), q.id     # where the build command writes
        assert local(q, built).is_file(), q.id
        assert len([t for t in q.tags if t.startswith("kind:")]) == 1, q.id
        assert {"kind:feature", "kind:grain", "kind:plain"} >= {t for t in q.tags if t.startswith("kind:")}


def test_questions_do_not_name_the_idiom():
    named = [(q.id, m.group(0)) for q in QUESTIONS if (m := GIVEAWAYS.search(q.question))]
    assert not named


@pytest.mark.parametrize("q", QUESTIONS, ids=[q.id for q in QUESTIONS])
def test_gold_runs_through_the_safe_executor(q, built, settings):
    out = open_database(local(q, built), settings).run(q.gold_sql)
    assert out.ok, out.error
    assert len(out.df) > 0 and not out.truncated
    # Order is scored only where the gold sorts at the top level, and then the question asks for it.
    assert has_top_level_order_by(q.gold_sql) == q.ordered
    # A "the most ..." or "top 3" gold keeps the rows ranked 1 (to 3): more rows would be a tie at the edge.
    if top := re.search(r"QUALIFY rank\(\) OVER \(ORDER BY .*\) (= 1|<= 3)$", q.gold_sql.strip()):
        assert len(out.df) == (1 if top.group(1) == "= 1" else 3)
