"""Follow-ups: is a turn leaning on the last one, and what is it as a standalone question?

``is_follow_up(text)`` is the cue check (a leading "and"/"what about"/"only", a back-reference such as
"them" or "that team", or a fragment too short to be a question). ``rewrite(text, previous)`` is the
deterministic rewrite for the two shapes it handles reliably, run from one list of small rules:

- ``swap_period``: "and in 2018?", "what about the 1990s?" -> the previous question with its year or
  decade replaced (or the period appended when it had none);
- ``add_modifier``: "only the left-handed ones", "sort that by salary", "show the top 3" -> the previous
  question with the restriction, order or limit appended.

Everything else (a new subject, "he", "them", "how many of those ...") returns None and goes to the
LLM with ``PROMPT``: the previous question, a line of its answer, and the turn. Which shapes the rules
take is measured on bench/lahman_conversations.yaml (docs/benchmarks.md).
"""
from __future__ import annotations

import re
from collections.abc import Callable

_LEAD = re.compile(r"^\s*(and|but|also|now|then|plus|ok(ay)?|so|what about|how about|same (for|with|but|in)|"
                   r"only|just|except|excluding|without|not counting|sort|sorted|order|ordered|rank|ranked|"
                   r"instead|limit|filter|break (it|that|them) down|split|group (it|that|them)|per|by)\b", re.I)
_BACKREF = re.compile(r"\b(them|those|these|they|their|theirs|he|she|his|her|him|it|its|"
                      r"(that|this|the same) (team|player|players|year|season|one|ones|list|result|results|club|"
                      r"manager|pitcher|pitchers|league|guy|period|decade|franchise|park|stadium|country|state|"
                      r"school|college|award|game|games|query|table)|that year|the same|the previous|the last one|"
                      r"above|instead)\b", re.I)
_QUESTION_START = re.compile(r"^\s*(who|what|which|when|where|how|list|show|give|find|count|name|is|are|was|were|"
                             r"did|does|do|tell)\b", re.I)


def is_follow_up(text: str) -> bool:
    """Whether ``text`` leans on an earlier turn (only meaningful when there is one)."""
    t = text.strip()
    if not t:
        return False
    if _LEAD.match(t) or _BACKREF.search(t):
        return True
    words = re.findall(r"[\w'-]+", t)
    # "2018?", "the Yankees?", "left-handed only": a fragment, not a question of its own.
    return len(words) <= 3 and not _QUESTION_START.match(t)


_PERIOD = r"(?:the\s+)?(?:(?:19|20)\d0s|'\d0s|(?:18|19|20)\d\d(?:\s*(?:-|to|through|and)\s*(?:18|19|20)\d\d)?)"
_PERIOD_TURN = re.compile(
    r"^\s*(?:(?:and|but|ok(?:ay)?|now|so)\s*,?\s*)?(?:(?:and\s+)?(?:what|how)\s+about\s+|same\s+(?:for|in)\s+|"
    r"(?:the\s+)?same\s+(?:question\s+)?(?:for|in)\s+)?(?:(?:in|for|during|from|between)\s+)?"
    r"(?:the\s+)?(?:(?:year|season)\s+)?(?P<period>" + _PERIOD + r")(?:\s+season)?(?:\s+instead)?\s*[?.!]*\s*$", re.I)
_PREV_PERIOD = re.compile(r"\b(?:(?P<prep>in|during|for|of|from|between)\s+)?(?:the\s+)?(?:(?:year|season)\s+)?"
                          r"(?P<period>" + _PERIOD + r")(?P<season>\s+season)?\b", re.I)


def _phrase(period: str) -> str:
    p = re.sub(r"^the\s+", "", period.strip(), flags=re.I)
    if re.match(r"(\d{4}|'\d\d)s$", p):
        return f"the {p}"
    if re.search(r"\d\s*(-|to|through|and)\s*\d", p):
        a, b = re.findall(r"\d{4}", p)
        return f"from {a} to {b}"
    return p


def swap_period(text: str, previous: str) -> str | None:
    m = _PERIOD_TURN.match(text)
    if not m:
        return None
    new = _phrase(m.group("period"))
    prev = previous.strip()
    old = _PREV_PERIOD.search(prev)
    if old is None:
        return prev.rstrip(" ?.") + (f" {new}" if new.startswith("from") else f" in {new}") + "?"
    prep = old.group("prep")
    if new.startswith("from"):
        repl = new
    elif prep and prep.lower() in ("in", "during", "for", "of"):
        repl = f"{prep} {new}"
    else:
        repl = f"in {new}"
    if re.fullmatch(r"\d{4}", new) and re.search(r"\bthe\s+$", prev[old.start(): old.start("period")], re.I):
        repl = repl.replace(new, f"the {new}")  # "each of the 2017 winners" -> "each of the 2015 winners"
    if old.group("season") and re.fullmatch(r"(in |during |for |of )?(the )?\d{4}", repl):
        repl += old.group("season")  # "in the 1998 season" -> "in the 1990 season"
    out = prev[: old.start()] + repl + prev[old.end():]
    # The same year again later ("2017 Rookie of the Year winners ... in 2017") changes with it.
    core_old = re.sub(r"^the\s+", "", old.group("period"), flags=re.I)
    core_new = re.sub(r"^the\s+", "", new)
    if re.fullmatch(r"\d{4}s?", core_old) and re.fullmatch(r"\d{4}s?", core_new):
        head, tail = out[: old.start() + len(repl)], out[old.start() + len(repl):]
        out = head + re.sub(rf"\b{re.escape(core_old)}\b", core_new, tail)
    return out


_MODIFIER = re.compile(
    r"^\s*(?:(?:and|but|now|ok(?:ay)?|so|then)\s*,?\s*)?(?:can you\s+|please\s+)?(?P<mod>"
    r"(?:only|just|excluding|except|without|not counting)\s+.+"
    r"|(?:sort|sorted|order|ordered|rank|ranked)\s+(?:it|them|that|those|these|this|the (?:list|results?|rows))?\s*"
    r"(?:by|on)\s+.+"
    r"|(?:show|give|list)\s+(?:me\s+)?(?:only\s+)?(?:the\s+)?(?:top|first|bottom|last)\s+\d+.*"
    r"|(?:the\s+)?(?:top|first|bottom|last)\s+\d+.*)$", re.I)


def _modifier(mod: str) -> str:
    mod = mod.strip().rstrip(" ?.!")
    mod = re.sub(r"\s+instead$", "", mod, flags=re.I)
    m = re.match(r"(?:sort|sorted|order|ordered|rank|ranked)\s+(?:it|them|that|those|these|this|"
                 r"the (?:list|results?|rows))?\s*(?:by|on)\s+(.+)", mod, re.I)
    if m:
        return f"sorted by {m.group(1)}"
    m = re.match(r"(?:show|give|list)\s+(?:me\s+)?(?:only\s+)?(?:the\s+)?((?:top|first|bottom|last)\s+\d+.*)",
                 mod, re.I)
    if m:
        return f"only the {m.group(1)}"
    m = re.match(r"(?:the\s+)?((?:top|first|bottom|last)\s+\d+.*)", mod, re.I)
    if m:
        return f"only the {m.group(1)}"
    return mod


def add_modifier(text: str, previous: str) -> str | None:
    m = _MODIFIER.match(text)
    if not m or _BACKREF_NOUN.search(m.group("mod")):
        return None
    return previous.strip().rstrip(" ?.") + ", " + _modifier(m.group("mod")) + "?"


# "only those of his teams ..." reaches back further than the previous question's words: the LLM's case.
_BACKREF_NOUN = re.compile(r"\b(he|she|his|her|him|it|its|that team|that player)\b", re.I)

Rule = Callable[[str, str], "str | None"]
#: The deterministic rewrites, in the order they are tried.
RULES: list[Rule] = [swap_period, add_modifier]


def rewrite(text: str, previous: str) -> tuple[str | None, str]:
    """(standalone question, the rule that wrote it), or (None, "") when the LLM must rewrite."""
    for rule in RULES:
        out = rule(text, previous)
        if out:
            return out, rule.__name__
    return None, ""


PROMPT = """Rewrite the follow-up as one standalone question that says everything it takes from the previous
question and its answer. Reply with the question only.
Previous question: {previous}
Its answer: {answer}
Follow-up: {text}
Standalone question:"""


def clean_rewrite(reply: str, text: str, previous: str) -> str:
    """The LLM's rewrite as one question; ValueError when it is not usable."""
    line = next((ln.strip() for ln in reply.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^(standalone question|question|rewritten)\s*:\s*", "", line, flags=re.I).strip().strip('"')
    if not line or len(line) > 400:
        raise ValueError(f"unusable rewrite {reply[:80]!r}")
    return line
