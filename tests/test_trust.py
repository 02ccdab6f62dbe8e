"""Trust: every answer's confidence (utils/trust/, AssessConfidence) and how it is shown.

- each signal from scripted runs: a first query that ran as written, a repair, an empty result, drafts that
  agree and drafts that disagree;
- the level rules on fixed inputs (a table of cases, with fixed weights so the cases do not move when the
  shipped model is refitted), and the shipped weights against the features they were fitted on;
- the not-sure path: below ``min_confidence`` two candidates with different results, no single answer;
- every surface shows the confidence, through the shared presentation layer;
- eval's per-bucket report, and the fit script on records it can fit.
"""
from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from duckask.utils.api import ask, present
from duckask.utils.eval.report import by_confidence, render_markdown, summarize
from duckask.utils.llm import ScriptedLLM
from duckask.utils.llm.decode import token_prob
from duckask.utils.trust import confidence as conf_mod
from duckask.utils.trust.confidence import FEATURES, assess, at_least, load_weights
from duckask.utils.trust.signals import query_shape

LAKERS_Q = "What are the points of Lakers players?"
LAKERS_SQL = ("SELECT p.name, p.points FROM players p JOIN teams t ON p.team_id = t.id "
              "WHERE t.name = 'Lakers' ORDER BY p.points DESC")
TOP_SQL = "SELECT name, points FROM players ORDER BY points DESC LIMIT 1"
OTHER_SQL = "SELECT name, points FROM players ORDER BY points ASC LIMIT 1"

COEF = {"first_try": 1.5, "retried": -1.0, "repaired": -0.5, "resampled": -1.0, "draft_agreement": 2.0,
        "draft_disagreement": -2.0, "empty": -2.0, "null_only": -2.0, "objected": -1.5, "moved": -1.0}
FIXED = {"features": [f.name for f in FEATURES], "coef": [COEF.get(f.name, 0.0) for f in FEATURES],
         "intercept": 0.0, "means": [0.0] * len(FEATURES), "impute": {}, "thresholds": {"high": 0.75, "low": 0.4}}


@pytest.fixture
def fixed_weights(monkeypatch):
    monkeypatch.setattr(conf_mod, "load_weights", lambda path=None: FIXED)
    return FIXED


@pytest.fixture
def run(small_db, isolated_env, fixed_weights):
    def _run(question, llm, **options):
        return ask(question, db=str(small_db), llm=llm,
                   **{"resample_drafts": 0, "analyzer": "rules", "router": "rules", **options})
    return _run


def signals(**kw):
    base = {"status": "answered", "path": "sql", "retries": 0, "repairs": 0, "resampled": False, "drafts": 0,
            "agree": 0, "grader": "pass", "grader_by": "rules", "objections": 0, "rows": 1, "empty": False,
            "null_only": False, "truncated": False, "tables": 1, "nested": 0, "example_similarity": None,
            "intent_by": None}
    return {**base, **kw}


# --------------------------------------------------------------------------- the level rules, fixed inputs
CASES = [
    # (what, signals, level, a reason that must be given)
    ("first query ran as written", signals(), "high", "the first query ran as written"),
    ("a repair", signals(repairs=1), "low", "needed a repair"),
    ("a corrected attempt after the grader objected", signals(retries=1, grader="fail", objections=1), "low",
     "the grader objected"),
    ("a resample where 3 of 5 drafts agree", signals(resampled=True, drafts=5, agree=3), "low",
     "3 of 5 drafts agree on the result"),
    ("drafts that all agree", signals(drafts=5, agree=5), "high", "5 of 5 drafts agree on the result"),
    ("an empty result is never high, however sure the rest", signals(drafts=5, agree=5, rows=0, empty=True),
     "medium", "empty result"),
    ("an all-NULL result", signals(null_only=True), "low", "the result is all NULL"),
    ("no result at all", signals(status="error", rows=None), "low", "no answer: the question ended without a result"),
    # a plan is as right as its semantic file: high only when a second candidate confirmed it
    ("a plan confirmed by its candidates", signals(path="plan", drafts=5, agree=5), "high",
     "a plan over named metrics, as right as its semantic file"),
    ("a plan no candidate confirmed", signals(path="plan"), "medium",
     "not high: a plan over named metrics, not confirmed by a second candidate"),
    ("a plan whose signals are poor is low, as any answer", signals(path="plan", repairs=3, resampled=True), "low",
     "a plan over named metrics, as right as its semantic file"),
    ("a plan that found nothing", signals(path="plan", rows=0, empty=True), "low", "empty result"),
    # candidates that ran and gave another result: never high, whatever the rest says
    ("4 of 5 candidates agree, 1 gives another result", signals(drafts=5, agree=4, dissent=1), "medium",
     "not high: 1 of 5 candidates give another result"),
    ("4 of 5 agree, the fifth failed to run", signals(drafts=5, agree=4, dissent=0), "high",
     "4 of 5 drafts agree on the result"),
    ("the checks rejected the first group", signals(drafts=5, agree=2, dissent=3, moved=1), "medium",
     "the checks rejected 1 other answer first"),
    # a name the question says that the query never uses: never high, on any path (issue 53, item 5)
    ("a condition the query left out", signals(drafts=5, agree=5, untied=["Canadian"]), "medium",
     "not high: the question says Canadian, which the query never uses"),
    ("a confirmed plan that leaves out a name", signals(path="plan", drafts=5, agree=5, untied=["Halloween"]),
     "medium", "not high: the question says Halloween, which the query never uses"),
    ("a template that leaves out a name", signals(path="template", untied=["Halloween"]), "medium",
     "not high: the question says Halloween, which the query never uses"),
]


@pytest.mark.parametrize("what,sig,level,reason", CASES, ids=[c[0] for c in CASES])
def test_levels_and_reasons_on_fixed_inputs(what, sig, level, reason):
    out = assess(sig, FIXED)
    assert out["level"] == level, (what, out)
    assert reason in out["reasons"], (what, out["reasons"])
    assert 0.0 <= out["score"] <= 1.0


def test_a_low_answer_names_what_lowered_it_first():
    out = assess(signals(repairs=1, drafts=5, agree=5, rows=0, empty=True), FIXED)
    assert out["level"] == "low"
    assert out["reasons"] == ["empty result", "needed a repair", "5 of 5 drafts agree on the result"]


def test_a_capped_answer_keeps_its_score_and_says_why_first():
    """The cap changes the level, not the score (what the signals alone say), and is the first reason."""
    free, capped = assess(signals(drafts=5, agree=5), FIXED), assess(signals(drafts=5, agree=4, dissent=1), FIXED)
    assert free["level"] == "high" and capped["level"] == "medium"
    assert capped["score"] >= FIXED["thresholds"]["high"]
    assert capped["reasons"][0] == "not high: 1 of 5 candidates give another result"


def test_the_names_a_question_says_are_tied_to_its_query():
    """``untied_names``: capitalised words past the first that name no table or column and are nowhere in the SQL
    (a demonym is tied by its first five letters); words in capitals and the question's first word are not asked."""
    from duckask.utils.trust.grounding import untied_names

    names = {"player", "country", "name", "team", "game", "date"}
    q = "Which Canadian player scored the most for the Lakers?"
    assert untied_names(q, "SELECT name FROM players ORDER BY points DESC LIMIT 1", names) == ["Canadian", "Lakers"]
    assert untied_names(q, "SELECT p.name FROM players p JOIN teams t USING (team_id) WHERE p.country = 'Canada' "
                           "AND t.nickname = 'Lakers' ORDER BY points DESC LIMIT 1", names) == []
    assert untied_names("How many NBA games were played on Halloween?", "SELECT count(*) FROM games", names) == [
        "Halloween"]
    assert untied_names("Which Team won?", "SELECT 1", names) == []                     # a column word, capitalised
    assert untied_names("Average trip time? Round to 1 decimal.", "SELECT round(avg(t), 1) FROM trips", names) == []
    assert untied_names("How many drivers on 30 June 2024?", "SELECT count(*) FROM d WHERE day = '2024-06-30'",
                        names) == []
    assert untied_names("Trips on each Monday in May?", "SELECT count(*) FROM t WHERE dayofweek(d) = 1 AND "
                        "month(d) = 5", names) == []
    assert untied_names("Trips on each Monday in May?", "SELECT count(*) FROM t", names) == ["Monday", "May"]
    assert untied_names("Who is Jokic's coach?", "SELECT coach FROM t WHERE player = 'Nikola Jokic'", names) == []


def test_no_examples_is_not_a_far_example():
    """Without verified examples the similarity is unmeasured (the fit set's value), not 0: a database
    nobody taught must not read as one whose examples are all far from the question."""
    w = {**FIXED, "coef": [1.0 if f.name == "example_similarity" else 0.0 for f in FEATURES],
         "impute": {"example_similarity": 0.5}}
    assert assess(signals(), w)["score"] == assess(signals(example_similarity=0.5), w)["score"]
    assert assess(signals(example_similarity=0.95), w)["score"] > assess(signals(), w)["score"]
    near = assess(signals(example_similarity=0.95), w)["reasons"]
    assert "the closest verified example is a near match, 0.95 alike" in near


def test_unmeasured_signals_take_the_fit_sets_value():
    w = {**FIXED, "coef": [1.0 if f.name == "hesitation" else 0.0 for f in FEATURES], "impute": {"hesitation": 2.0}}
    unsure = assess(signals(min_prob=math.exp(-2.0)), w)["score"]
    assert assess(signals(), w)["score"] == pytest.approx(unsure, abs=1e-3)   # missing: the imputed 2.0
    assert "the model hesitated over part of the query: one token at probability 0.14" in \
        assess(signals(min_prob=math.exp(-2.0)), {**w, "coef": [-1.0 if f.name == "hesitation" else 0.0
                                                                for f in FEATURES]})["reasons"]


@pytest.mark.parametrize("level,minimum,ok", [("low", "off", True), ("low", None, True), ("low", "medium", False),
                                               ("medium", "medium", True), ("high", "medium", True),
                                               ("medium", "high", False)])
def test_at_least(level, minimum, ok):
    assert at_least(level, minimum) is ok


def test_the_shipped_weights_match_the_features_and_say_what_they_were_fitted_on():
    w = load_weights()
    assert w["features"] == [f.name for f in FEATURES] and len(w["coef"]) == len(FEATURES)
    assert 0 <= w["thresholds"]["low"] <= w["thresholds"]["high"]
    assert w["fit"]["n"] >= 50 and w["fitted_on"]


def test_weights_fitted_on_other_features_are_refused(tmp_path):
    p = tmp_path / "w.json"
    p.write_text(json.dumps({**FIXED, "features": ["first_try"]}))
    with pytest.raises(ValueError, match="refit it with bench/fit_confidence.py"):
        load_weights.__wrapped__(str(p))


def test_query_shape_and_token_probability():
    assert query_shape(LAKERS_SQL) == {"tables": 2, "nested": 0}
    assert query_shape("SELECT name FROM players WHERE team_id IN (SELECT id FROM teams)") == {"tables": 2, "nested": 1}
    assert query_shape("not sql") == {"tables": 0, "nested": 0}
    row = pd.Series([0.0, math.log(3.0)]).to_numpy()
    assert token_prob(row, 1) == pytest.approx(0.75)


# --------------------------------------------------------------------------- signals from scripted runs
def test_a_first_query_that_ran_as_written(run):
    r = run(LAKERS_Q, ScriptedLLM({"SQLGenerator": [LAKERS_SQL]}))
    s = r.confidence["signals"]
    assert (s["retries"], s["repairs"], s["resampled"], s["rows"], s["tables"]) == (0, 0, False, 3, 2)
    assert r.confidence["level"] == "high" and "the first query ran as written" in r.confidence["reasons"]


def test_a_repair_is_a_signal(run):
    r = run("Which players have the most points?",
            ScriptedLLM({"SQLGenerator": ["SELECT name, pointz FROM players ORDER BY pointz DESC LIMIT 2"]}))
    assert r.confidence["signals"]["repairs"] == 1
    assert r.confidence["level"] == "low" and "needed a repair" in r.confidence["reasons"]


def test_an_empty_result_is_a_signal(run):
    r = run(LAKERS_Q, ScriptedLLM({"SQLGenerator": [LAKERS_SQL.replace("'Lakers'", "'lakers'")]}),
            max_grader_rounds=0)
    assert r.confidence["signals"]["empty"] is True and r.confidence["level"] != "high"
    assert "empty result" in r.confidence["reasons"]


def test_drafts_that_agree(run):
    llm = ScriptedLLM({"SQLGenerator": [TOP_SQL], "AssessConfidence": [TOP_SQL, TOP_SQL.replace("name, points",
                                                                                                  "points, name")]})
    r = run("Who scored the most points?", llm, confidence_drafts=2)
    s = r.confidence["signals"]
    assert (s["drafts"], s["agree"]) == (3, 3) and llm.count("AssessConfidence") == 2
    assert "3 of 3 drafts agree on the result" in r.confidence["reasons"]
    assert [c["seed"] for c in llm.calls if c["node"] == "AssessConfidence"] == [101, 102]
    assert r.status == "answered"


def test_drafts_that_disagree(run):
    llm = ScriptedLLM({"SQLGenerator": [TOP_SQL], "AssessConfidence": [OTHER_SQL, OTHER_SQL, "SELECT nonsense"]})
    r = run("Who scored the most points?", llm, confidence_drafts=3)
    s = r.confidence["signals"]
    assert (s["drafts"], s["agree"]) == (4, 1)
    assert r.confidence["level"] != "high" and "1 of 4 drafts agree on the result" in r.confidence["reasons"]
    groups = r.confidence["drafts"]
    assert groups[0]["answer"] and groups[0]["sql"] == TOP_SQL and groups[1]["drafts"] == 2


def test_the_users_own_sql_is_not_assessed(run):
    r = run(None, ScriptedLLM({}), sql=TOP_SQL)
    assert r.status == "answered" and r.confidence is None


def test_no_drafts_without_the_setting(run):
    llm = ScriptedLLM({"SQLGenerator": [TOP_SQL]})
    r = run("Who scored the most points?", llm)
    assert llm.count("AssessConfidence") == 0 and r.confidence["signals"]["drafts"] == 0


# --------------------------------------------------------------------------- the not-sure path
def test_below_the_minimum_two_candidates_are_shown_instead_of_one_answer(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name, pointz FROM players ORDER BY pointz DESC LIMIT 1"],
                       "AssessConfidence": [OTHER_SQL, OTHER_SQL, TOP_SQL, OTHER_SQL]})
    r = run("Who scored the most points?", llm, min_confidence="high", resample_drafts=4)
    assert r.status == "unsure" and not r.ok and r.df is None
    assert llm.count("AssessConfidence") == 4      # resample_drafts drafts, drawn because the answer was low
    assert [a["drafts"] for a in r.alternatives] == [2, 3]
    a, b = r.alternatives
    assert a["sql"] == TOP_SQL and b["sql"] == OTHER_SQL
    assert a["df"].values.tolist() != b["df"].values.tolist()
    assert r.answer.startswith("I am not sure of this answer (confidence low, below high:")
    assert "The two most likely answers differ" in r.answer
    assert present.exit_code(r.status) == present.EXIT_CLARIFY
    shown = present.text(r)
    assert "Candidate 1 (2 drafts):" in shown and "Candidate 2 (3 drafts):" in shown and OTHER_SQL in shown


def test_a_sure_enough_answer_is_not_held_back(run):
    llm = ScriptedLLM({"SQLGenerator": [TOP_SQL]})
    r = run("Who scored the most points?", llm, min_confidence="medium")
    assert r.status == "answered" and r.alternatives == [] and llm.count("AssessConfidence") == 0


def test_drafts_that_agree_can_lift_an_answer_over_the_minimum(run):
    llm = ScriptedLLM({"SQLGenerator": ["SELECT name, pointz FROM players ORDER BY pointz DESC LIMIT 1"],
                       "AssessConfidence": [TOP_SQL] * 4})
    r = run("Who scored the most points?", llm, min_confidence="medium", resample_drafts=4)
    assert r.status == "answered" and (r.confidence["signals"]["drafts"], r.confidence["signals"]["agree"]) == (5, 5)


# --------------------------------------------------------------------------- every surface, one layer
def test_every_surface_shows_the_confidence(run):
    r = run(LAKERS_Q, ScriptedLLM({"SQLGenerator": [LAKERS_SQL]}))
    line = "Confidence: high — " + "; ".join(r.confidence["reasons"])
    assert "(" not in line                                               # words, no parentheses in parentheses
    assert line in present.text(r)                                     # CLI, chat (piped)
    assert any(line in str(x) for x in present.rich_lines(r))          # CLI, chat (terminal)
    page = present.html(r)                                             # notebook
    assert "confidence: high" in page and r.confidence["reasons"][0] in page
    d = present.as_json(r)                                             # --json, HTTP, the page
    assert d["confidence"]["level"] == "high" and d["confidence"]["reasons"] == r.confidence["reasons"]
    assert "signals" in d["confidence"] and d["alternatives"] == []
    agent = present.for_agent(r, 10)                                   # MCP
    assert agent["confidence"] == d["confidence"]
    assert r.to_dict()["confidence"]["level"] == "high"


# --------------------------------------------------------------------------- eval
def _rec(i, level, correct):
    return {"id": f"q{i}", "db": "d", "question": "?", "status": "answered", "correct": correct, "seconds": 1.0,
            "llm_calls": 1, "prompt_tokens": 10, "completion_tokens": 5, "grades": [],
            "confidence": {"level": level, "score": 0.5, "reasons": []}}


def test_eval_reports_ex_and_coverage_per_bucket():
    recs = [_rec(0, "high", True), _rec(1, "high", True), _rec(2, "high", False), _rec(3, "medium", True),
            _rec(4, "low", False), _rec(5, "low", False)]
    c = by_confidence(recs)
    assert c["high"] == {"n": 3, "share": 50.0, "ex": 66.7}
    assert c["medium"] == {"n": 1, "share": 16.7, "ex": 100.0} and c["low"]["ex"] == 0.0 and c["assessed"] == 6
    md = render_markdown(summarize(recs))
    assert "| high | 3 | 50.0 | 66.7 |" in md and "| low | 2 | 33.3 | 0.0 |" in md


def test_records_with_signals_only_are_read_by_the_shipped_model():
    rec = {**_rec(0, "high", True), "confidence": None, "signals": signals(status="error", rows=None)}
    assert by_confidence([rec])["low"]["n"] == 1


def test_the_fit_script_fits_records_and_writes_loadable_weights(tmp_path):
    pytest.importorskip("sklearn", reason="the bench extra (scikit-learn) is not installed")
    import random

    from conftest import bench_module

    fit = bench_module("fit_confidence")
    rnd = random.Random(1)
    recs = []
    for i in range(300):
        bad = rnd.random() < 0.4
        sig = signals(repairs=int(bad and rnd.random() < 0.7), rows=0 if bad and rnd.random() < 0.3 else 2,
                      min_prob=rnd.uniform(0.05, 0.4) if bad else rnd.uniform(0.5, 1.0), mean_logprob=-0.1)
        sig["empty"] = sig["rows"] == 0
        recs.append({"id": str(i), "signals": sig, "correct": not bad})
    path = tmp_path / "fit.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "weights.json"
    assert fit.main([str(path), "--out", str(out)]) == 0
    w = load_weights.__wrapped__(str(out))
    coef = dict(zip(w["features"], w["coef"]))
    assert coef["hesitation"] < 0 and coef["repaired"] < 0
    assert assess(signals(min_prob=0.9, mean_logprob=-0.1), w)["level"] == "high"
    assert assess(signals(repairs=1, min_prob=0.1, mean_logprob=-0.1), w)["level"] == "low"


# --------------------------------------------------------------------------- the LLM grader through an endpoint
@pytest.mark.parametrize("verdict,level,reason", [
    ("verdict: pass\ncritique: \"\"", "high", "the grader checked the result and agreed"),
    ("verdict: fail\ncritique: the question asks for Lakers players only", "low", "the grader objected"),
])
def test_the_llm_graders_verdict_through_an_endpoint_is_a_signal(small_db, isolated_env, monkeypatch,
                                                                  verdict, level, reason):
    """A local OpenAI-compatible stub serves a recorded verdict to ``grader: llm`` (``auto``, the rules, asks
    the endpoint nothing: the LLM grader has not earned its call)."""
    from openai_stub import StubOpenAI

    w = {**FIXED, "coef": [{"llm_grader_passed": 1.5, "objected": -2.0}.get(f.name, 0.0) for f in FEATURES]}
    monkeypatch.setattr(conf_mod, "load_weights", lambda path=None: w)

    def responder(body):
        last = body["messages"][-1]["content"]
        return verdict if "Does this SQL result correctly" in last else "```sql\n" + LAKERS_SQL + "\n```"

    with StubOpenAI(responder) as stub:
        opts = {"db": str(small_db), "base_url": stub.base_url, "api_key": "k", "model": "m", "resample_drafts": 0,
                "analyzer": "rules", "router": "rules", "max_grader_rounds": 0}
        plain = ask(LAKERS_Q, **opts)
        assert not [b for b in stub.bodies if "Does this SQL result correctly" in b["messages"][-1]["content"]]
        assert plain.grades[-1]["by"] == "rules"
        r = ask(LAKERS_Q, grader="llm", **opts)
        graded = [b for b in stub.bodies if "Does this SQL result correctly" in b["messages"][-1]["content"]]
    assert len(graded) == 1 and r.grades[-1]["by"] == "llm"
    assert r.confidence["signals"]["grader_by"] == "llm" and r.confidence["level"] == level
    assert reason in r.confidence["reasons"]


@pytest.mark.parametrize("extra", [{}, {"min_prob": 0.2, "mean_logprob": -0.5}, {"example_similarity": 0.9},
                                   {"example_similarity": 0.4}, {"moved": 2, "path": "plan"}, {"path": "template"},
                                   {"retries": 2, "repairs": 1, "resampled": True, "drafts": 5, "agree": 2,
                                    "dissent": 3, "ungrounded": ["constraint_dropped"], "grader": "fail"}])
def test_every_reason_reads_as_words_with_no_parentheses(extra):
    """Issue 47: 'medium (a plan over named metrics (as right as its semantic file))' read badly; a reason is words."""
    from duckask.utils.api.trust_view import confidence_line

    conf = assess(signals(**extra), load_weights())      # the shipped model: its reasons are what people read
    assert conf["reasons"] and not any("(" in r or ")" in r for r in conf["reasons"]), conf["reasons"]
    assert confidence_line(conf).count("(") == 0
