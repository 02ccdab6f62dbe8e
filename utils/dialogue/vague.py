"""Is a question too underspecified to attempt? The rules ClarifyQuery runs, each a small function.

A vocabulary gap is not ambiguity: a question whose words match no table ("account holders with
negative balances" on tables ``users`` and ``transactions``) is attempted, since mapping words to the
schema is the tool's job. A question is asked back only when a careful analyst would have to ask too:

- ``empty``: nothing asked;
- ``no_subject``: "show me the data", "give me some numbers", "give me the top 10": a request with no
  subject;
- ``unresolved_reference``: "is he in the Hall of Fame?", "show me the stats for that team" with no
  conversation before it: "he"/"that team" points at nothing;
- ``no_measure``: "who is the best?", "which shows did well?", "how did Smith do?": a judgement with
  no measure to rank by;
- ``fragment``: "stats?", "what changed?": one word, or two or three that name nothing in the database.

Measured on bench/clarify_heldout.yaml (clear questions from Spider dev and the NBA set, vague ones
written for it): docs/benchmarks.md.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from duckask.utils.lexicon import MEASURED, one_of
from duckask.utils.schema.catalog import Catalog, is_text, per_catalog
from duckask.utils.schema.ranker import rank_tables
from duckask.utils.schema.terms import question_terms, split_ident
from duckask.utils.schema.values import match_values

Found = dict  # {"reason": ..., "question": the clarifying question}


def empty(q: str, cat: Catalog, history: bool) -> Found | None:
    if not q.strip():
        return {"reason": "the question is empty", "question": "What would you like to know about this database?"}
    return None


_NO_SUBJECT = re.compile(
    r"^\s*(please\s+)?(show|give|tell|get|list)( me)?( (all|some|the|any|a few))? (data|stuff|things|info|information|"
    r"everything|something|numbers|figures|stats|statistics|results|rows)\s*[?.!]*\s*$"
    r"|^\s*(please\s+)?(show|give|list|get)( me)?( the)? (top|bottom|first|last) \d+\s*[?.!]*\s*$"
    r"|^\s*(what'?s|anything) (interesting|new|up)\b|^\s*(help|hi|hello|test)\s*[?.!]*\s*$", re.I)


def no_subject(q: str, cat: Catalog, history: bool) -> Found | None:
    if _NO_SUBJECT.search(q):
        return {"reason": "the request has no subject to turn into a query",
                "question": "Which figures do you want to see, and about what (e.g. a table, a person, a year)?"}
    return None


_PRONOUN = re.compile(r"\b(he|she|him|his|her|hers|they|them|their|it|its)\b", re.I)
_POINTER = re.compile(r"\b(for|of|about|on|from|in|by|with|at|to|did|does|do|is|was|were|are|show|give|list|"
                      r"compare)\s+(that|those|these)\s+(?!are\b|were\b|is\b|was\b|who\b|which\b)([a-z]\w*)", re.I)
_OPENERS = {"is", "was", "are", "were", "did", "does", "do", "has", "have", "had", "what", "who", "which", "how",
            "where", "when", "why", "can", "could", "show", "list", "give", "tell", "me", "many", "much", "about"}


def unresolved_reference(q: str, cat: Catalog, history: bool) -> Found | None:
    if history:
        return None
    m = _POINTER.search(q)
    # Late in a long question, "that"/"those" points back inside it ("For each citizenship, how many
    # singers are from that country?"); a dangling one comes early ("show me the stats for that team").
    if m and len(re.findall(r"[\w']+", q[: m.start()])) > 6:
        m = None
    if m:
        what = f"{m.group(2)} {m.group(3)}"
    else:
        p = _PRONOUN.search(q)
        # A pronoun is unresolved when nothing but question words comes before it ("Is he ...?",
        # "What did she ...?"); "Which students own a cat? Give their names" has its antecedent.
        if not p or any(w.lower() not in _OPENERS for w in re.findall(r"[A-Za-z']+", q[: p.start()])):
            return None
        what = p.group(1)
    return {"reason": f'"{what}" refers to something not named in the question',
            "question": f'Who or what do you mean by "{what}"? Please name it.'}


_JUDGEMENT = re.compile(r"\b(best|greatest|worst|better|worse|good|bad|great|finest|favou?rite|"
                        r"did (well|badly|poorly|good)|do (well|badly)|doing (well|badly)|successful|important|"
                        r"interesting|impressive|popular|strongest|weakest)\b", re.I)
_MEASURE = re.compile(r"\b(" + one_of(MEASURED) + r"|number of|how many|count|"
                      r"average|avg|total|sum|rate|ratio|percentage|percent|share|per|by|in terms of|based on|"
                      r"measured|according to|rank(ed|ing)?|score[ds]?|rating|votes?|points|wins|won|record|"
                      r"winning|sold|sales|revenue|salary|salaries|era|amount|size|age|price|cost)\b", re.I)
_HOW_DID = re.compile(r"^\s*how (did|does|do|is|was|were|has|have) .{1,40}\b(do|doing|done|perform|performing|"
                      r"performed|play|playing|fare|faring)\s*[?.!]*\s*$", re.I)


@per_catalog
def _numeric_terms(cat: Catalog) -> set[str]:
    """Stemmed words of the numeric columns' names: "best finishes" names ``Best_Finish``."""
    return {w for t in cat.tables.values() for c in t.columns if not is_text(c.type)
            for w in split_ident(c.name) if len(w) > 2 and w not in ("id", "key", "code")}


def no_measure(q: str, cat: Catalog, history: bool) -> Found | None:
    judged = _JUDGEMENT.search(q) and not _MEASURE.search(q) \
        and not (set(question_terms(q)) & _numeric_terms(cat))
    if _HOW_DID.search(q) or judged:
        return {"reason": "the question asks for a judgement without a measure to rank by",
                "question": "By what measure? For example a count, a total, an average or a rate, and over "
                            "which period?"}
    return None


_NOTHING_NAMED = re.compile(r"^\s*(what|anything|something)( (else|new))? (changed|happened|is new|new|else|"
                            r"going on|up)\s*[?.!]*\s*$", re.I)


def fragment(q: str, cat: Catalog, history: bool) -> Found | None:
    words = re.findall(r"[\w'-]+", q)
    if len(words) > 3 or any(ch.isdigit() for ch in q):
        return None
    values = match_values(cat, q)
    if values:
        return None  # "Lakers?": a name from the data is something to look up
    # One word ("stats?") asks nothing even when a table is named like it; two or three must name
    # nothing in the schema.
    if len(words) > 1 and not _NOTHING_NAMED.match(q):
        ranked = rank_tables(cat, q, values)
        if ranked and ranked[0].score > 0:
            return None
    names = ", ".join(list(cat.tables)[:12])
    return {"reason": "a few words that name nothing in this database",
            "question": f"Could you ask a full question? This database has tables such as {names}."}


Rule = Callable[[str, Catalog, bool], "Found | None"]
#: The rules, in the order they run; the first that finds a problem decides.
RULES: list[Rule] = [empty, no_subject, unresolved_reference, no_measure, fragment]


def vagueness(question: str, catalog: Catalog, history: bool = False) -> Found | None:
    """Why ``question`` cannot be attempted as asked, with the question to ask back; None when clear."""
    for rule in RULES:
        found = rule(question or "", catalog, history)
        if found:
            return {**found, "rule": rule.__name__}
    return None
