"""Answers without a model read as answers to the question (issue 47): the sentence fixtures, and no fixture's
sentence shows a column name the question does not say or reads "The answer is"."""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from duckask.utils.dialogue.answer_rules import rules_answer
from duckask.utils.dialogue.phrasing import question_words

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from sentences import raw_names

CASES = yaml.safe_load((Path(__file__).parent / "fixtures" / "sentences.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["question"][:50] for c in CASES])
def test_the_answer_reads_as_an_answer_to_the_question(case):
    df = pd.DataFrame(case["rows"], columns=case["columns"])
    said = rules_answer(df, question=case["question"])
    assert said == case["says"]
    assert not raw_names(said, case["question"], case["columns"]) and not said.startswith("The answer is")


def test_the_second_question_and_the_question_mark_are_not_read():
    assert question_words("Which player led in 2001, and how many did he hit? ") == "Which player led in 2001"


def test_a_capped_result_is_not_said_as_if_whole():
    df = pd.DataFrame({"name": ["A", "B"]})
    said = rules_answer(df, truncated=True, question="Which teams won?")
    assert said == "2+ rows (capped at the row limit): A; B."
