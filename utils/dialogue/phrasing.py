"""An answer sentence built from the question's own words and the result, without a model (issue 47).

"Which team won the World Series in 2016?" with one row, Chicago Cubs, reads "Chicago Cubs won the World Series
in 2016.", not "The answer is Chicago Cubs (name)."; "How many home runs did Babe Ruth hit in 1927?" reads "Babe
Ruth hit 60 home runs in 1927.": the number keeps the question's noun, and no column name is shown. Each rule is
a small named function ``rule(words, df) -> sentence or None`` in ``RULES``, tried in order, the first sentence
wins; ``words`` is the question without its question mark and without a second question tacked on (", and how
many did he hit?"). A result no rule fits is said with the question's own head ("Total payroll of the Yankees
in 2016: 213,472,857."). ``template.template_answer`` asks it first; cases in tests/fixtures/sentences.yaml.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

#: Words that, after a wh-word, make it the object of the question, not its subject ("what did ...").
AUX = {"is", "are", "was", "were", "has", "have", "had", "did", "does", "do", "can", "could", "will", "would",
       "should", "'s"}
#: Words that end a noun phrase ("the most home runs in 2018": "home runs").
STOP = {"in", "of", "for", "during", "by", "with", "at", "on", "from", "since", "between", "before", "after",
        "the", "a", "an", "and", "or", "than", "to", "as", "per", "each", "that", "who", "which", "over", "under"}
#: Verbs whose past tense is not the verb with -ed ("how many games did they win" -> "won").
IRREGULAR = {"win": "won", "hit": "hit", "lose": "lost", "make": "made", "get": "got", "steal": "stole",
             "throw": "threw", "take": "took", "give": "gave", "run": "ran", "have": "had", "do": "did",
             "go": "went", "pay": "paid", "earn": "earned", "catch": "caught", "draw": "drew", "put": "put",
             "lead": "led", "beat": "beat", "begin": "began", "become": "became", "spend": "spent", "sell": "sold",
             "buy": "bought", "teach": "taught", "grow": "grew", "fly": "flew", "see": "saw", "come": "came",
             "shoot": "shot", "hold": "held", "keep": "kept", "leave": "left", "meet": "met", "sit": "sat",
             "sink": "sank", "swing": "swung", "strike": "struck", "choose": "chose", "bring": "brought"}
MAX_LISTED = 5


def fmt(v) -> str:
    """A value as a person reads it: thousands separated, no trailing zeros, NULL for a missing one."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NaT:
        return "NULL"
    if isinstance(v, (float, np.floating)):
        return f"{v:,.4f}".rstrip("0").rstrip(".") if abs(v) < 1e15 else f"{v:.6g}"
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and abs(v) >= 10000:
        return f"{v:,}"
    return str(v)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _listed(values: list[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


def _numeric(df: pd.DataFrame, i: int) -> bool:
    return df.dtypes.iloc[i].kind in "iuf"


def _lead(df: pd.DataFrame) -> tuple[str | None, list[str]]:
    """One row: the value that answers "who"/"which" (its first text column) and the numbers beside it."""
    text = [i for i in range(df.shape[1]) if not _numeric(df, i)]
    lead = fmt(df.iat[0, text[0]]) if text else None
    extras = [fmt(df.iat[0, i]) for i in range(df.shape[1]) if i != (text[0] if text else -1) and _numeric(df, i)]
    return lead, extras


def _noun_after(words: str, pattern: str) -> str | None:
    """The noun phrase after ``pattern`` ("most" in "hit the most home runs in 2018": "home runs")."""
    m = re.search(rf"\b{pattern}\s+(.+)", words, re.I)
    if not m:
        return None
    out = []
    for w in m.group(1).split():
        if w.lower() in STOP or re.fullmatch(r"[\d,.]+", w):
            break
        out.append(w)
    return " ".join(out[:3]) or None


def _column(df: pd.DataFrame) -> list[str] | None:
    """The values of a one-column result, or None (a result of several columns is listed row by row instead:
    a sentence naming only one of its columns would drop the others)."""
    return [fmt(v) for v in df.iloc[:, 0]] if df.shape[1] == 1 else None


def _several(values: list[str]) -> str:
    if len(values) <= MAX_LISTED:
        return _listed(values)
    return f"{', '.join(values[:MAX_LISTED])} and {len(values) - MAX_LISTED} more"


# --------------------------------------------------------------------------- the rules
def copula(words: str, df: pd.DataFrame) -> str | None:
    """"What was the average salary in 2016?" -> "The average salary in 2016 was 1,234,567." (one value), or the
    values listed after a colon."""
    m = re.fullmatch(r"(?:what|who|which)\s+(is|was|are|were)\s+(the\s+.+|.+?)", words, re.I)
    if not m or m.group(2).split()[0].lower() in AUX:
        return None
    verb, subject = m.group(1).lower(), m.group(2)
    if df.shape == (1, 1) or (len(df) == 1 and _lead(df)[0]):
        lead, extras = _lead(df) if df.shape[1] > 1 else (fmt(df.iat[0, 0]), [])
        return f"{_cap(subject)} {verb} {lead}" + (f" ({', '.join(extras)})" if extras else "") + "."
    values = _column(df)
    return f"{_cap(subject)} {verb} {_several(values)}." if values else None


def subject_wh(words: str, df: pd.DataFrame) -> str | None:
    """"Which team won the World Series in 2016?" -> "Chicago Cubs won the World Series in 2016."; "Who hit the
    most home runs in 2018?" -> "Khris Davis hit the most home runs in 2018, with 48 home runs."; several rows
    -> the values listed as the subject."""
    m = re.fullmatch(r"(who|which\s+(\w+)|what\s+(\w+))\s+(\S+)(.*)", words, re.I)
    if not m or m.group(4).lower() in AUX or (m.group(2) or m.group(3) or "").lower() in AUX:
        return None
    rest = m.group(4) + m.group(5)
    if len(df) == 1:
        lead, extras = _lead(df) if df.shape[1] > 1 else (fmt(df.iat[0, 0]), [])
        if lead is None:
            return None
        counted = _noun_after(rest, r"(?:most|fewest|least|highest|lowest|more|fewer)")
        more = f", with {_listed([f'{x} {counted}' if counted else x for x in extras])}" if extras else ""
        return f"{lead} {rest}{more}."
    values = _column(df)
    return f"{_cap(_several(values))} {rest}." if values else None


def how_many_aux(words: str, df: pd.DataFrame) -> str | None:
    """"How many players were inducted in 2019?" -> "6 players were inducted in 2019." (1: "1 player was ...")."""
    m = re.fullmatch(r"how\s+many\s+(.+?)\s+(are|were|is|was|have|has|had)\b(.*)", words, re.I)
    if not m or df.shape != (1, 1) or not _numeric(df, 0) or set(m.group(1).lower().split()) & AUX:
        return None
    noun, verb, rest = m.group(1), m.group(2).lower(), m.group(3)
    n = df.iat[0, 0]
    if n == 1:
        noun = re.sub(r"(?<=[a-z])s$", "", noun)
        verb = {"are": "is", "were": "was", "have": "has"}.get(verb, verb)
    if rest.strip().lower() == "there":          # "How many players are there?" -> "There are 6 players."
        return f"There {verb} {fmt(n)} {noun}."
    return f"{fmt(n)} {noun} {verb}{rest}."


def _past(verb: str) -> str:
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    return verb + "ed"


def _present(verb: str) -> str:
    if verb == "have":
        return "has"
    return verb + ("es" if re.search(r"(s|sh|ch|x|o)$", verb) else "s")


def how_many_did(words: str, df: pd.DataFrame) -> str | None:
    """"How many home runs did Babe Ruth hit in 1927?" -> "Babe Ruth hit 60 home runs in 1927."; "How much did
    Alex Rodriguez earn in 2005?" -> "Alex Rodriguez earned 26,000,000 in 2005."."""
    m = re.fullmatch(r"how\s+(?:many\s+(.+?)|much)\s+(did|does|do)\s+(.+?)\s+([a-z]+)((?:\s+(?:in|during|for|on|at|"
                     r"since|between|from|before|after|by|with|against|over|as)\b.*)?)", words, re.I)
    if not m or df.shape != (1, 1) or not _numeric(df, 0):
        return None
    noun, aux, subject, verb, rest = m.group(1), m.group(2).lower(), m.group(3), m.group(4).lower(), m.group(5)
    if subject.split()[-1].lower() in STOP:
        return None
    said = _past(verb) if aux == "did" else _present(verb) if aux == "does" else verb
    return f"{_cap(subject)} {said} {fmt(df.iat[0, 0])}{' ' + noun if noun else ''}{rest}."


def head_and_value(words: str, df: pd.DataFrame) -> str | None:
    """Any other answer of one row or one column: the question's head, then the values: "Total payroll of the
    Yankees in 2016: 213,472,857."; "The names of all singers: Joe Sharp, Timbaland and Justin Brown."."""
    values = [fmt(df.iat[0, i]) for i in range(df.shape[1])] if len(df) == 1 else _column(df)
    head = re.sub(r"^(?:what(?:'s| is| was| are| were)?|show(?: me)?|give(?: me)?|tell me|list|find|get|"
                  r"how (?:many|much)|which|who)\s+", "", words, flags=re.I)
    if not (head and values):
        return None
    return f"{_cap(head)} ({len(df)}): {_several(values)}." if len(df) > 1 else f"{_cap(head)}: {', '.join(values)}."


RULES = (copula, subject_wh, how_many_aux, how_many_did, head_and_value)


def question_words(question: str) -> str:
    """The question as the rules read it: one line, no question mark, no second question after ", and"."""
    words = " ".join((question or "").split()).rstrip("?.! ")
    return re.sub(r",?\s+and\s+(?:how|what|who|which|when|where)\b.*$", "", words, flags=re.I)


def answer_sentence(question: str, df: pd.DataFrame) -> str | None:
    """The first rule's sentence for a non-empty result of at most a few rows, or None."""
    words = question_words(question)
    if df is None or len(df) == 0 or not words or df.shape[1] == 0:
        return None
    for rule in RULES:
        if (said := rule(words, df)):
            return said
    return None
