"""The SQL path's derivation in words (``utils/sql/describe.py``): each case of tests/fixtures/derivations.yaml is a
query the model could write and the sentence shown under its answer."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from duckask.utils.dialogue.answer_rules import derivation

CASES = yaml.safe_load((Path(__file__).parent / "fixtures" / "derivations.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["sql"][:60] for c in CASES])
def test_a_query_is_described_in_words(case):
    assert derivation(case["sql"]) == case["says"]


def test_no_alias_or_sql_keyword_of_a_plain_query_reaches_the_words():
    said = derivation("SELECT b.player_id FROM batting AS b WHERE b.year_id = 2019 AND b.hr >= 40 "
                      "ORDER BY b.hr DESC LIMIT 3")
    assert said == "Derived from batting, where year_id is 2019 and hr at least 40, highest hr first, top 3."
    assert not any(w in said for w in ("b.", "DESC", "LIMIT", "WHERE", ">="))
