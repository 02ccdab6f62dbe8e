"""An answer's confidence: ``high``, ``medium`` or ``low``, with the reasons in words.

The signals (``signals.py``) become features, small named functions run from one list (``FEATURES``); a logistic
model fitted on labelled eval records (``bench/fit_confidence.py`` writes ``weights.json`` beside this file) turns
them into the probability that the answer is right, and two thresholds, chosen on the fit set's cross-validated
scores, cut it into levels. Rules sit on top: an answer that is not an answer (no result) is ``low``; an answer the
grader or a grounding check still objects to is never above ``low`` (issue 53: a plan's "Chicago White Sox won the
2016 World Series", the grader objecting and the time budget ending the turn before the SQL path ran, read
``medium``), and a turn the budget stopped says what it did not get to do; an empty or all-NULL result is never
``high``; an answer whose query never uses a name the question says ("Which Canadian player ...": no country in
the SQL, ``grounding.untied_names``) is never ``high``, whichever path wrote it; an answer some candidates contradict
(they ran and gave another result) is never ``high``; and a plan over
named metrics is ``high`` only when a second candidate confirmed it: whether a plan is right depends on its semantic
file, which no weight fitted on other files can see (10 NBA plans, 0 right; 13 on the demo, 9 right), so otherwise
its level is the model's, at most ``medium``. An answer from a kept pair's template (``path: template``: a question
a person answered, with values of their columns put in) is ``high`` unless one of the rules above doubts it; one
reached by meaning (``reach: paraphrase``, the question worded otherwise: ``knowledge.reach``) is ``medium``. The
reasons are the features that moved the score most, in words ("3 of 5 drafts agree", "needed a repair", "empty
result", ...), largest first, after the rule that capped the level, if one did.

Run on its own (the confidence of one eval record, or of the signals given as JSON)::

    python -m duckask.utils.trust.confidence '{"status": "answered", "rows": 0, ...}'
"""
from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from duckask.utils.checks.registry import GROUNDING

LEVELS = ("low", "medium", "high")
WEIGHTS = Path(__file__).with_name("weights.json")


def _nll(p: float | None) -> float | None:
    return None if p is None else min(10.0, -math.log(max(p, 1e-12)))


@dataclass(frozen=True)
class Feature:
    name: str
    value: Callable[[dict], float | None]     # None: not measured (the fit set's mean stands in)
    words: Callable[[dict], str]              # the reason, in the user's words
    speaks_when_zero: bool = False            # a reason even at 0 (else only an event that happened is named)


def _drafts(s):
    return f"{s['agree']} of {s['drafts']} drafts agree on the result"


FEATURES: list[Feature] = [
    Feature("first_try", lambda s: float(not (s["retries"] or s["repairs"] or s["resampled"])),
            lambda s: "the first query ran as written" if not (s["retries"] or s["repairs"] or s["resampled"])
            else "the first query did not stand as written", True),
    Feature("first_try_one_table", lambda s: float(not (s["retries"] or s["repairs"] or s["resampled"])
                                                    and s["tables"] == 1),
            lambda s: "a single-table query that ran as written"),
    Feature("retried", lambda s: float(min(s["retries"], 3)),
            lambda s: f"needed {s['retries']} corrected attempt{'s' * (s['retries'] != 1)}"),
    Feature("repaired", lambda s: float(min(s["repairs"], 3)), lambda s: "needed a repair"),
    Feature("resampled", lambda s: float(s["resampled"]),
            lambda s: "the first query failed or found nothing; new drafts were voted on"),
    Feature("draft_agreement", lambda s: s["agree"] / s["drafts"] if s["drafts"] >= 2 else 0.0, _drafts),
    Feature("draft_disagreement", lambda s: 1 - s["agree"] / s["drafts"] if s["drafts"] >= 2 else 0.0, _drafts),
    Feature("empty", lambda s: float(bool(s["empty"])), lambda s: "empty result"),
    Feature("null_only", lambda s: float(bool(s["null_only"])), lambda s: "the result is all NULL"),
    Feature("truncated", lambda s: float(bool(s["truncated"])), lambda s: "the result was cut at the row cap"),
    Feature("objected", lambda s: float(s["grader"] == "fail"), lambda s: "the grader objected"),
    Feature("llm_grader_passed", lambda s: float(s["grader"] == "pass" and s.get("grader_by") == "llm"),
            lambda s: "the grader checked the result and agreed"),
    Feature("hesitation", lambda s: _nll(s.get("min_prob")),
            lambda s: (f"the model hesitated over part of the query: one token at probability {s['min_prob']:.2f}"
                       if s["min_prob"] < 0.5 else "the model was sure of every part of the query"), True),
    Feature("mean_nll", lambda s: None if s.get("mean_logprob") is None else -s["mean_logprob"],
            lambda s: "the model was unsure of the query overall" if s["mean_logprob"] < -0.15
            else "the model wrote the query fluently", True),
    Feature("joins", lambda s: None if s["tables"] is None else float(min(max(0, s["tables"] - 1), 4)),
            lambda s: f"joins {s['tables']} tables"),
    Feature("nested", lambda s: None if s["nested"] is None else float(min(s["nested"], 3)),
            lambda s: "a nested query"),
    # None without verified examples (not 0: Spider has none, and "none" must not read as "far")
    Feature("example_similarity", lambda s: s.get("example_similarity"),
            lambda s: ("no verified examples to compare with" if s.get("example_similarity") is None else
                       f"the closest verified example is a near match, {s['example_similarity']:.2f} alike"
                       if s["example_similarity"] >= 0.8 else
                       f"no verified example is close, the best {s['example_similarity']:.2f} alike"), True),
    Feature("moved", lambda s: float(min(s.get("moved") or 0, 2)),
            lambda s: f"the checks rejected {s['moved']} other answer{'s' * (s['moved'] != 1)} first"),
    Feature("rows_log", lambda s: math.log10(1 + (s["rows"] or 0)),
            lambda s: f"{s['rows']} row{'s' * (s['rows'] != 1)}", True),
    # Grounding (issue 44): what ties the answer to the question's words and the data, the same on every kind
    Feature("ungrounded", lambda s: float(min(len(s.get("ungrounded") or []), 2)),
            lambda s: "not tied to the question: " + ", ".join(GROUNDING_WORDS.get(n, n) for n in s["ungrounded"])),
    Feature("literals_verified", lambda s: {True: 1.0, False: -1.0, None: 0.0}.get(s.get("literals_verified"), 0.0),
            lambda s: "every value it compares is one the data holds" if s.get("literals_verified")
            else "it compares a value its column does not hold"),
]

#: The grounding checks (``trust.grounding``) in a reason's words (``checks.registry``: each says its own).
GROUNDING_WORDS: dict[str, str] = {c.name: c.words for c in GROUNDING if c.words}


def features(signals: dict[str, Any], impute: dict[str, float] | None = None) -> list[float]:
    """The feature vector (``FEATURES`` order); a signal not measured takes ``impute``'s value (0 without)."""
    out = []
    for f in FEATURES:
        v = f.value(signals)
        out.append((impute or {}).get(f.name, 0.0) if v is None else float(v))
    return out


@cache
def load_weights(path: str | None = None) -> dict[str, Any]:
    """The fitted model: {"features", "coef", "intercept", "means", "impute", "thresholds", "fitted_on"}."""
    data = json.loads(Path(path or WEIGHTS).read_text())
    names = [f.name for f in FEATURES]
    if data.get("features") != names:
        raise ValueError(f"{path or WEIGHTS} was fitted on features {data.get('features')}, not {names}; "
                         "refit it with bench/fit_confidence.py")
    return data


def score(signals: dict[str, Any], weights: dict[str, Any]) -> tuple[float, list[float]]:
    """The probability that the answer is right, and each feature's contribution to the log-odds
    (against the fit set's mean answer)."""
    x = features(signals, weights["impute"])
    contrib = [c * (v - m) for c, v, m in zip(weights["coef"], x, weights["means"])]
    z = weights["intercept"] + sum(c * v for c, v in zip(weights["coef"], x))
    return 1 / (1 + math.exp(-z)), contrib


def _called(words: list[str]) -> str:
    """What the database lacks, as a reason says it."""
    return f"nothing in the database is called {', '.join(repr(w) for w in words)}"


def _level(p: float, weights: dict[str, Any]) -> str:
    t = weights["thresholds"]
    return "high" if p >= t["high"] else "low" if p < t["low"] else "medium"


def assess(signals: dict[str, Any], weights: dict[str, Any] | None = None, *, max_reasons: int = 4) -> dict[str, Any]:
    """{"level", "score", "reasons", "signals"} for one question's signals."""
    if signals.get("status") != "answered" or signals.get("rows") is None:
        return {"level": "low", "score": 0.0, "reasons": ["no answer: the question ended without a result"],
                "signals": signals}
    weights = weights or load_weights()
    p, contrib = score(signals, weights)
    level = _level(p, weights)
    doubted = signals["empty"] or signals["null_only"] or signals["grader"] == "fail" or signals.get("ungrounded")
    dissent = signals.get("dissent") or 0
    confirmed = signals["drafts"] >= 2 and signals["agree"] >= 2
    untied = signals.get("untied") or []
    missing = signals.get("missing") or []      # words of the question tied to nothing in the database
    cap = ("" if level != "high" else
           "nothing found, an objection left standing, or an answer not tied to the question" if doubted else
           f"the question says {', '.join(untied)}, which the query never uses" if untied else
           _called(missing) if missing else
           f"{dissent} of {signals['drafts']} candidates give another result" if dissent else
           "a plan over named metrics, not confirmed by a second candidate"
           if signals["path"] == "plan" and not confirmed else "")
    if cap:
        level = "medium"        # never "sure" (the score is kept: it says how the signals alone read)
    objected = signals["grader"] == "fail" or bool(signals.get("ungrounded"))
    absent = signals.get("absent") or []        # things the question names that nothing in the database is called
    if objected:
        level, cap = "low", "the grader or a check still objects to this answer"
    elif absent:
        level, cap = "low", f"{_called(absent)}: the query answers something near it, not what was asked"
    reworded = signals.get("reach") == "paraphrase"       # a paraphrase is not a variant: its own level
    if signals["path"] == "template" and not doubted and not dissent and not objected and not untied and not missing:
        level = "medium" if reworded else "high"    # a kept pair's own query, the question's values put in
    # What moved the score most comes first; for a high answer what raised it, for a low one what lowered it.
    lean = {"high": 1, "low": -1}.get(level, 0)
    order = sorted(range(len(FEATURES)), key=lambda i: (-(lean * contrib[i] > 0), -abs(contrib[i])))
    reasons: list[str] = []
    for i in order:
        f = FEATURES[i]
        v = f.value(signals)
        if abs(contrib[i]) < 0.1 or v is None or (v == 0 and not f.speaks_when_zero):
            continue
        words = f.words(signals)
        if words not in reasons:
            reasons.append(words)
        if len(reasons) == max_reasons:
            break
    if dissent and not any("agree" in r for r in reasons):
        reasons.insert(0, _drafts(signals))
    if signals.get("moved") and not any(r.startswith("the checks rejected") for r in reasons):
        reasons.append(next(f.words(signals) for f in FEATURES if f.name == "moved"))
    if signals["path"] == "plan":
        reasons.insert(0, "a plan over named metrics, as right as its semantic file")
    if signals["path"] == "template":
        reasons.insert(0, "a kept pair's query with the question's values, each a value of its column" + (
            "; the question words it otherwise, so it is matched by meaning, not word for word" if reworded else ""))
    if signals.get("budget_stop"):
        reasons.insert(0, f"the time budget ended the turn instead of {signals['budget_stop']}: not checked further")
    if missing and not cap.startswith("nothing in the database"):     # what it could not find, at any level
        reasons.append(_called(missing))
    if cap and cap not in reasons:
        reasons.insert(0, f"{'low' if objected or absent else 'not high'}: {cap}")
    return {"level": level, "score": round(p, 3), "reasons": reasons or ["nothing stood out"], "signals": signals}


def at_least(level: str, minimum: str | None) -> bool:
    """Whether ``level`` meets ``minimum`` (None or "off": every level does)."""
    if not minimum or minimum == "off":
        return True
    return LEVELS.index(level) >= LEVELS.index(minimum)


def unsure_answer(conf: dict[str, Any], alternatives: list[dict], minimum: str) -> str:
    """What duckask says instead of one answer when it is less sure than ``minimum``."""
    why = "; ".join(conf["reasons"])
    head = f"I am not sure of this answer (confidence {conf['level']}, below {minimum}: {why})."
    if len(alternatives) < 2:
        return head + " No other draft gave a different result; the one candidate is shown with its SQL."
    return head + (" The two most likely answers differ; both are shown with their SQL "
                   f"({alternatives[0]['drafts']} and {alternatives[1]['drafts']} drafts).")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="The confidence of one question's signals (JSON).")
    ap.add_argument("signals", help="a JSON object of signals (see utils/trust/signals.py)")
    ap.add_argument("--weights", default=None, help=f"a fitted model (default {WEIGHTS.name} beside this file)")
    a = ap.parse_args(argv)
    print(json.dumps({k: v for k, v in assess(json.loads(a.signals), load_weights(a.weights)).items()
                      if k != "signals"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
