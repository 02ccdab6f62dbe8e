"""An answer sentence built from the question's own words and the result, without a model (issue 47).

"Which team won the World Series in 2016?" with one row, Chicago Cubs, reads "Chicago Cubs won the World Series
in 2016.", not "The answer is Chicago Cubs (name)."; "How many home runs did Babe Ruth hit in 1927?" reads "Babe
Ruth hit 60 home runs in 1927.": the number keeps the question's noun, and no column name is shown. Each rule is
a small named function ``rule(words, df) -> sentence or None`` in ``RULES``, tried in order, the first sentence
wins; ``words`` is the question without its question mark and without a second question tacked on (", and how
many did he hit?"). A result no rule fits is said with the question's own head ("Total payroll of the Yankees
in 2016: 213,472,857."). ``answer_rules.rules_answer`` asks it first; cases in tests/fixtures/sentences.yaml.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal

import numpy as np
import pandas as pd

from duckask.utils.lexicon import AMOUNTS, COMPARATIVES, one_of

#: Auxiliary verbs: where a question's noun phrase ends ("how many players | were inducted").
AUX = {"is", "are", "was", "were", "has", "have", "had", "did", "does", "do", "can", "could", "will", "would",
       "should", "'s"}
#: After the wh-phrase, these make it the object ("which team did they beat"), not the subject.
OBJECT_AUX = {"did", "does", "do", "can", "could", "will", "would", "should", "'s"}
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
NUMBER = re.compile(r"-?[\d,]*\.?\d+")


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
    """A column of numbers (a DECIMAL comes from DuckDB as Python Decimals: numbers too)."""
    col = df.iloc[:, i]
    if col.dtype.kind in "iuf":
        return True
    vals = col.dropna()        # numbers kept as text (a warehouse's '100.7') read as numbers too
    return len(vals) > 0 and all(isinstance(v, Decimal) or (isinstance(v, str) and NUMBER.fullmatch(v.strip()))
                                 for v in vals)


def _name_parts(columns: list[str]) -> bool:
    """The text columns are a name's parts (first and last), said together as one name."""
    low = " ".join(c.lower() for c in columns)
    return len(columns) == 2 and "first" in low and "last" in low


def _lead(df: pd.DataFrame) -> tuple[str | None, list[str], list[str]]:
    """One row: the value that answers "who"/"which" (its text, a name's parts as one name), the numbers beside it,
    and the other values (a date), so that nothing of the row is dropped."""
    text = [i for i in range(df.shape[1]) if not _numeric(df, i) and df.dtypes.iloc[i].kind not in "mM"]
    if not text:
        return None, [], []
    lead_cols = text if _name_parts([str(df.columns[i]) for i in text]) else text[:1]
    lead = " ".join(fmt(df.iat[0, i]) for i in lead_cols)
    numbers = [fmt(df.iat[0, i]) for i in range(df.shape[1]) if i not in lead_cols and _numeric(df, i)]
    others = [fmt(df.iat[0, i]) for i in range(df.shape[1]) if i not in lead_cols and not _numeric(df, i)]
    return lead, numbers, others


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
        lead, numbers, others = _lead(df) if df.shape[1] > 1 else (fmt(df.iat[0, 0]), [], [])
        extras = [v for v in (fmt(x) for x in df.iloc[0]) if v in numbers + others]     # in the columns' order
        return f"{_cap(subject)} {verb} {lead}" + (f" ({', '.join(extras)})" if extras else "") + "."
    values = _column(df)
    return f"{_cap(subject)} {verb} {_several(values)}." if values else None


def subject_wh(words: str, df: pd.DataFrame) -> str | None:
    """"Which team won the World Series in 2016?" -> "Chicago Cubs won the World Series in 2016."; "Who hit the
    most home runs in 2018?" -> "Khris Davis hit the most home runs in 2018, with 48 home runs."; several rows
    -> the values listed as the subject. Not for a question whose wh-word is the object ("who did they beat")."""
    m = re.fullmatch(r"(who|which|what)\s+(.+)", words, re.I)
    if not m:
        return None
    rest = m.group(2).split()
    if m.group(1).lower() != "who":        # "which Canadian player scored": the noun, and an adjective before it
        while len(rest) > 1 and rest[0][:1].isupper() and rest[0].lower() not in AUX:
            rest = rest[1:]
        rest = rest[1:]
    # "which model of the car ...": the noun goes on; "which team did they beat": the object. Asked as it was.
    if not rest or rest[0].lower() in OBJECT_AUX | STOP:
        return None
    said = " ".join(rest)
    if len(df) == 1:
        lead, numbers, others = _lead(df) if df.shape[1] > 1 else (
            (fmt(df.iat[0, 0]), [], []) if not _numeric(df, 0) else (None, [], []))
        if lead is None:            # a number is no answer to "who" or "which": said with the question instead
            return None
        counted = _noun_after(said, one_of(AMOUNTS, COMPARATIVES))
        counts = [f"{numbers[0]} {counted}"] if counted and len(numbers) == 1 else numbers   # whose noun, if many?
        return (f"{lead}" + (f" ({', '.join(others)})" if others else "") + f" {said}"
                + (f", with {_listed(counts)}" if counts else "") + ".")
    values = _column(df)
    return f"{_cap(_several(values))} {said}." if values and not _numeric(df, 0) else None


def how_many_aux(words: str, df: pd.DataFrame) -> str | None:
    """"How many players were inducted in 2019?" -> "6 players were inducted in 2019." (1: "1 player was ...")."""
    m = re.fullmatch(r"how\s+many\s+(.+?)\s+(are|were|is|was|have|has|had)\b(.*)", words, re.I)
    if not m or df.shape != (1, 1) or not _numeric(df, 0) or set(m.group(1).lower().split()) & AUX:
        return None
    if re.match(r"\s+(?:the\s+|a\s+|[A-Z])", m.group(3)):    # "how many times has LeBron James been ...": asked
        return None                                             # the other way round
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
    named = re.fullmatch(r"((?:the\s+)?(?:[A-Z][\w.'-]*\s+)*[A-Z][\w.'-]*|we|they|you|he|she|it|I)\s+([a-z]+)(.*)",
                         f"{subject} {verb}{rest}")
    if named:               # "did the Lakers win this season": the subject is the name, the verb the word after it
        subject, verb, rest = named.group(1), named.group(2), named.group(3)
    if subject.split()[-1].lower() in STOP:
        return None
    said = _past(verb) if aux == "did" else _present(verb) if aux == "does" else verb
    return f"{_cap(subject)} {said} {fmt(df.iat[0, 0])}{' ' + noun if noun else ''}{rest}."


def head_and_value(words: str, df: pd.DataFrame) -> str | None:
    """Any other answer of one row or one column: an instruction or "what is" as its head, then the values
    ("Total payroll of the Yankees in 2016: 213,472,857."; "The names of all singers (3): Joe Sharp, Timbaland and
    Justin Brown."); another question as it was asked, then the values ("On what date was it played? 2016-05-10.")."""
    values = [fmt(df.iat[0, i]) for i in range(df.shape[1])] if len(df) == 1 else _column(df)
    if not values:
        return None
    shown = _several(values) if len(df) > 1 else ", ".join(values)
    head = re.sub(r"^(?:what(?:'s| is| was| are| were)|show(?: me)?|give(?: me)?|tell me|list|find|get|return|count)"
                  r"\s+", "", words, flags=re.I)
    if head == words and re.match(r"(?:who|which|what|when|where|how|on|in|at|for|did|does|do|is|are|was|were)\b",
                                  words, re.I):
        return f"{_cap(words)}? {shown}."
    return f"{_cap(head)} ({len(df)}): {shown}." if len(df) > 1 else f"{_cap(head)}: {shown}."


RULES = (copula, subject_wh, how_many_aux, how_many_did, head_and_value)


def question_words(question: str) -> str:
    """The question as the rules read it: one line, its first sentence, no question mark, no second question after
    ", and" ("..., and in which season?")."""
    words = re.split(r"(?<=\?)\s+", " ".join((question or "").split()))[0].rstrip("?.! ")   # the first sentence
    return re.sub(r",?\s+and\s+(?:\w+\s+)?(?:how|what|who|whom|which|when|where)\b.*$", "", words, flags=re.I)


def answer_sentence(question: str, df: pd.DataFrame) -> str | None:
    """The first rule's sentence for a non-empty result of at most a few rows, or None."""
    words = question_words(question)
    if df is None or len(df) == 0 or not words or df.shape[1] == 0:
        return None
    for rule in RULES:
        if (said := rule(words, df)):
            return said
    return None
