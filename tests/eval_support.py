"""What test_eval.py and test_eval_runs.py share: the question set, the scripted models, the fixtures."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from duckask.utils.eval import run as evaluation
from duckask.utils.llm import ScriptedLLM

# --------------------------------------------------------------------------- the question set
# question -> (gold, graph SQL, baseline SQL). Gold is ("sql", text) or ("rows", rows, ordered).
TEAMS_Q = "How many teams are there?"
HIGH_Q = "Which players scored more than 25 points?"
GARDEN_Q = "What is the capacity of the TD Garden arena?"
BULLS_Q = "Which city are the Bulls from?"
ROSTER_Q = "How many players does each team have?"
LAKERS_Q = "What are the points of Lakers players, highest first?"

LAKERS_DESC = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id "
               "WHERE t.name = 'Lakers' ORDER BY p.points DESC")
GRAPH_SQL = {
    TEAMS_Q: "SELECT count(*) AS n FROM teams",                                            # right
    HIGH_Q: "SELECT name FROM players WHERE points > 25",                                  # right
    GARDEN_Q: "SELECT capacity + 1 AS capacity FROM arenas WHERE name = 'TD Garden'",     # wrong (no rule sees it)
    BULLS_Q: "SELECT city FROM teams WHERE name = 'Bulls'",                                # gold errors
    ROSTER_Q: ("SELECT t.name, count(*) AS n FROM teams t JOIN players p ON p.team_id = t.id "
               "GROUP BY t.name"),                                                         # right
    LAKERS_Q: LAKERS_DESC.replace("DESC", "ASC"),                                          # wrong order
}
BASELINE_SQL = {
    TEAMS_Q: "SELECT count(*) FROM teams",                                                 # right
    HIGH_Q: "SELECT name FROM players WHERE points >= 25",                                 # wrong
    GARDEN_Q: "SELECT capacity FROM arenas WHERE name = 'TD Garden'",                      # right
    BULLS_Q: "SELECT city FROM teams WHERE name = 'Bulls'",                                # gold errors
    ROSTER_Q: "SELECT count(*) FROM players",                                              # wrong
    LAKERS_Q: LAKERS_DESC.replace("DESC", "ASC"),                                          # wrong order
}
ROWS = [
    {"id": "q1", "question": TEAMS_Q, "gold_sql": "SELECT count(*) FROM teams", "tags": ["count"]},
    {"id": "q2", "question": HIGH_Q, "gold_sql": "SELECT name FROM players WHERE points > 25", "tags": ["filter"]},
    {"id": "q3", "question": GARDEN_Q, "gold_sql": "SELECT capacity FROM arenas WHERE name = 'TD Garden'",
     "tags": ["filter"]},
    {"id": "q4", "question": BULLS_Q, "gold_sql": "SELECT city FROM franchises WHERE name = 'Bulls'"},
    {"id": "q5", "question": ROSTER_Q, "expected": [["Lakers", 3], ["Celtics", 2], ["Bulls", 1]],
     "tags": ["count", "join"]},
    {"id": "q6", "question": LAKERS_Q,
     "expected": [["LeBron James", 30], ["Anthony Davis", 25], ["Austin Reaves", 15]], "ordered": True,
     "tags": ["join"]},
]
GRAPH_RIGHT = {"q1", "q2", "q5"}
BASELINE_RIGHT = {"q1", "q3"}
ALL_IDS = [r["id"] for r in ROWS]
RECORD_KEYS = {"id", "db", "question", "sql", "status", "correct", "first_sql", "first_correct", "grades",
               "fixer_attempts", "llm_calls", "prompt_tokens", "completion_tokens", "seconds", "error",
               "baseline_sql", "baseline_correct"}


def router(answers: dict[str, str], asked: list[str] | None = None):
    """A ScriptedLLM callable: the SQL for whichever known question the prompt holds."""
    def reply(messages: list[dict[str, str]]) -> str:
        text = "\n".join(m["content"] for m in messages)
        for q in sorted(answers, key=len, reverse=True):
            if q in text:
                if asked is not None:
                    asked.append(q)
                return answers[q]
        if asked is not None:
            asked.append("<unknown>")
        return "SELECT 'unscripted question' AS oops"
    return reply


def scripted(graph: dict[str, str] | None = None, baseline: dict[str, str] | None = None,
             asked: list[str] | None = None) -> ScriptedLLM:
    return ScriptedLLM({"SQLGenerator": router(graph or GRAPH_SQL, asked),
                        "Baseline": router(baseline or BASELINE_SQL, asked)})


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(autouse=True)
def no_real_model(monkeypatch):
    """Never the real model: any fallback to get_llm() fails the test unless the test patched it."""
    import duckask.utils.api as api

    def refuse(settings=None):
        raise AssertionError("the real LLM backend was requested")

    monkeypatch.setattr(api, "get_llm", refuse)
    monkeypatch.setattr(evaluation, "get_llm", refuse)


@pytest.fixture
def env(isolated_env):
    """The cache (catalogs, imports, default eval output) in a temp dir, no user config."""
    return isolated_env


@pytest.fixture
def qfile(tmp_path) -> Path:
    return write_jsonl(tmp_path / "questions.jsonl", ROWS)


def lines_of(path: Path) -> list[str]:
    return [line for line in Path(path).read_text().splitlines() if line.strip()]

def interrupt_after(n: int, seen: list[str]):
    """An on_record callback that records ids and simulates a kill (Ctrl-C) after ``n`` records."""
    def on_record(rec):
        seen.append(rec["id"])
        if len(seen) == n:
            raise KeyboardInterrupt
    return on_record
