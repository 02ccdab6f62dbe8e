"""What a chat turn is: a data question, a schema question, general talk, or the user's own SQL.

``classify(text, catalog, follow_up=False)`` runs small named rules in order (sqlglot-optimizer style:
one list, each rule a function returning an intent or None). The first rule that decides wins; when
none does, the result is ``None`` and IntentRouter asks the LLM (one short call). The rules are:

1. ``pasted_sql``: DuckDB's parser accepts the text as SQL, or it starts like a statement and reads
   like one (keywords, commas, ``=``), so a typo does not turn it into a question;
2. ``change_request``: a plain-English request to change the data or the schema ("add an index on
   batting(year_id)", "please delete the test orders", "can you record his death date"): a change
   verb leads a sentence (after "please", "can you", "I want to", ...); "update me on ..." is not one,
   and a sentence that opens as a question ("which rows were deleted?") is left to the other rules;
3. ``small_talk``: greetings, thanks, "who are you", "what can you do", requests for poems, jokes,
   weather, news, predictions, SQL lessons: general;
4. ``follow_up``: with a conversation going, a fragment that leans on the last turn is data;
5. ``about_schema``: tables, columns, what a field means, where something is stored: schema, unless
   the text also asks for a count or other figure from the rows ("how many rows are in batting?");
6. ``about_data``: a schema word, a literal value from the data, a year or a number, or a request too
   vague to attempt ("show me the data": ClarifyQuery asks back): data.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from duckask.utils.db.ast import statement_types
from duckask.utils.dialogue.general import ABOUT
from duckask.utils.lexicon import MEASURED, one_of
from duckask.utils.schema.catalog import Catalog
from duckask.utils.schema.ranker import rank_tables
from duckask.utils.schema.values import match_values

INTENTS = ("data", "schema", "general", "sql", "change")

_SQL_START = re.compile(r"^\s*(--[^\n]*\n\s*)*\(?\s*(select|with|from|insert|update|delete|drop|create|alter|"
                        r"truncate|attach|detach|copy|export|import|install|load|pragma|set|call|grant|"
                        r"merge|replace|vacuum|checkpoint|explain|summarize)\b", re.I)
_SQL_SHAPE = re.compile(r"\b(from|where|join|group\s+by|order\s+by|limit|table|into|values|set|as)\b|[*=;,()]", re.I)
_SELECTISH = re.compile(r"^\s*(sel[ec]{1,2}t|selct|slect|seelct|wtih)\b", re.I)
# SHOW TABLES / DESCRIBE t parse as SQL, but the user wants the schema explained.
_SCHEMA_SQL = re.compile(r"^\s*(show\s+(all\s+)?tables|describe\s+\w+|show\s+\w+)\s*;?\s*$", re.I)


_RUN_PREFIX = re.compile(r"^\s*(please\s+)?(run|execute|try|check)(\s+(this|that|the following|my))?"
                         r"(\s+(sql|query|statement))?\s*:\s*", re.I)
_FENCE = re.compile(r"^\s*```(?:sql)?\s*\n?(.*?)\n?```\s*$", re.S | re.I)


def sql_of(text: str) -> str:
    """The SQL in a pasted turn: without a "run this:" lead-in, a markdown fence or a trailing semicolon."""
    t = _RUN_PREFIX.sub("", text, count=1)
    m = _FENCE.match(t)
    if m:
        t = m.group(1)
    return t.strip().rstrip(";").strip()


def pasted_sql(text: str, _cat: Catalog, _follow_up: bool) -> str | None:
    text = sql_of(text)
    if _SCHEMA_SQL.match(text):
        return "schema"
    starts = _SQL_START.match(text) or _SELECTISH.match(text)
    if not starts:
        return None
    body = text
    if "?" in body and "'" not in body:
        return None  # "select the players who ...?" is English
    if statement_types(body):
        return "sql"
    # Not parsable: SQL with a typo reads as keywords and symbols, English as words. A sentence with no
    # SQL symbol that opens with a change verb ("drop the fielding_of table, it's redundant") is a request.
    if _CHANGE.match(body) and not re.search(r"[=();*<>]", body):
        return None
    shape = len(_SQL_SHAPE.findall(body))
    words = len(re.findall(r"[A-Za-z]+", body))
    return "sql" if shape >= 2 and shape * 3 >= words * 0.5 else None


_CHANGE_LEAD = r"(?:(?:please|pls|kindly|go ahead and|can you|could you|would you|will you|can we|could we|" \
    r"i want to|i'd like to|i would like to|i need to|i need you to|we need to|let's|lets|you should|" \
    r"now|then|also|and)\s+)*"
_CHANGE_VERB = r"(add|insert|create|delete|remove|remvoe|delet|delte|drop|update|udpate|set|change|chnage|" \
    r"chang|mark|rename|fix|correct|fill|fill in|" \
    r"edit|modify|record|register|truncate|empty|clear|wipe|purge|bump|increase|decrease|raise|lower|" \
    r"put|append|replace|export|copy|install|attach|alter|retype|index|comment|log|enter|store|save)"
_CHANGE = re.compile(r"^\W*" + _CHANGE_LEAD + _CHANGE_VERB + r"\b(?!\s+(me|us|up)\b)", re.I)   # not "add up"
_SENTENCES = re.compile(r"(?<=[.!;])\s+|,\s*", re.I)     # "Chris Paul retired, change his status" asks too


_READ_ASK = re.compile(r"\b(give|show|tell|send) me\b|\bcreate an? (list|report|chart|summary|breakdown)\b", re.I)


def change_request(text: str, _cat: Catalog, _follow_up: bool) -> str | None:
    """A sentence that opens with a change verb (after a polite lead-in) asks for a change, unless the text
    asks to be shown something ("drop the percentages and just give me ...", "create a list of ...")."""
    if _READ_ASK.search(text):
        return None
    return "change" if any(_CHANGE.match(s) for s in _SENTENCES.split(text) if s) else None


_GREETING = (r"^\s*(hi|hello|hey|yo|hiya|howdy|thanks?|thank you|thx|cheers|ok(ay)?|cool|great|perfect|awesome|nice|"
             r"good (morning|afternoon|evening|night)|bye|goodbye|see you)([\s,!.']+(there|you|so|much|a|lot|very|"
             r"that|that's|thats|is|was|perfect|great|awesome|cool|nice|good|buddy|again|all|for|the|help|everyone|"
             r"friend|later|bot|duckask))*[\s!.?]*$|\bhow are you\b")
_GENERAL = re.compile(
    _GREETING +
    r"|\b(poem|haiku|limerick|joke|song|story|essay|recipe|horoscope|lyrics)\b"
    r"|\b(weather|forecast|temperature outside|stock price|news|headlines)\b"
    r"|\btranslate\b|\bwho will win\b|\bwill \w+ win\b|\bpredict\b|\bnext (year|season|week)\b"
    r"|\b(explain|what is|what's|what are|how does|how do i write)\b.{0,20}\b(an? )?(sql|left join|inner join|join|"
    r"group by|subquery|cte|window function|primary key in general|database normali[sz]ation)\b"
    r"\s*(is|are|works?)?\s*[?.!]*$"
    r"|\b(capital of|meaning of life)\b",
    re.I)


def small_talk(text: str, _cat: Catalog, _follow_up: bool) -> str | None:
    # Questions about duckask itself ("who are you?", "what can you do?") are general.ABOUT.
    return "general" if _GENERAL.search(text) or ABOUT.search(text) else None


_SCHEMA = re.compile(
    r"\b(what|which|list|show|name|tell me)\b[\w\s]{0,30}\btables?\b[\w\s]{0,25}(are there|exist|there are|"
    r"do you have|does (it|this|the database) have|in (the|this) (db|database|data)|available|\?|$)"
    r"|^\s*(list|show)( me)?( all)?( the)? (tables|columns|fields)\b"
    r"|\b(what|which) (columns|fields|attributes)\b|\bcolumns? (of|in|does|do)\b|\bfields? (of|in)\b"
    r"|\bwhat (does|do|is) (the )?(column |field |abbreviation )?[\"'`]?[\w.]+[\"'`]? (mean|stand for|represent|"
    r"refer to|contain|hold|store)\b"
    r"|\b(meaning|definition) of (the )?(column|field)\b|\bwhat is the (\w+ )?column\b"
    r"|\bwhich (table|tables|column|columns)\b[\w\s]{0,12}\b(has|have|holds?|contains?|stores?|keeps?|records?|"
    r"lists?|tracks?|includes?)\b"
    r"|\bwhere (are|is|do you keep|can i find)\b.{0,40}\b(stored|kept|recorded|found|held)\b"
    r"|\bin which table\b|\bwhat table\b"
    r"|\b(describe|explain) (the )?[\w]+ table\b|\bdescribe (the )?table\b|\bwhat('s| is) in the \w+ table\b"
    r"|\bschema\b|\bdata dictionary\b|\b(primary|foreign) keys?\b|\bhow (are|is) .{1,40} (related|linked|joined)\b"
    r"|\bwhat (kind|kinds|sort|type|types) of (data|information|tables)\b|\bwhat data (is|do you have)\b"
    r"|\bwhat (data )?type is\b|\bdata types?\b|\bdifference between\b.{0,60}\b(tables?|columns?|fields?)\b",
    re.I)
# A schema-shaped question that asks for a figure from the rows is a data question.
_ROW_FIGURE = re.compile(r"\b(how many|number of|count|average|avg|total|sum|max|min|"
                         + one_of(MEASURED, ("latest", "earliest")) + r"|distinct|"
                         r"who|when did|list (the|all) \w+ (who|that|with|whose))\b", re.I)
_ROW_WORDS = re.compile(r"\b(rows|records|entries)\b", re.I)
# ... and so is one that picks rows: "show all the fields of the responses with an overall satisfaction of 1".
_ROW_FILTER = re.compile(r"\b(where (the |an? )?\w+ (is|are|was|were|has|have)|whose|"
                         r"with (an?|the) \w+ (of|above|below|over|under|greater|less|equal)|"
                         r"(of|equals?|above|below|over|under|than) -?\d)", re.I)


def about_schema(text: str, _cat: Catalog, _follow_up: bool) -> str | None:
    if not _SCHEMA.search(text):
        return None
    if _ROW_FIGURE.search(text) and not re.search(r"\bwhich (table|column)s?\b", text, re.I):
        return "data"
    if _ROW_WORDS.search(text) or _ROW_FILTER.search(text):
        return "data"
    return "schema"


def follow_up(text: str, _cat: Catalog, is_follow_up: bool) -> str | None:
    return "data" if is_follow_up else None


def about_data(text: str, cat: Catalog, _follow_up: bool) -> str | None:
    from duckask.utils.dialogue.vague import fragment, no_subject

    if no_subject(text, cat, False) or fragment(text, cat, False):
        return "data"  # "show me the data", "stats?": a data request ClarifyQuery asks back about, no LLM call
    if re.search(r"\d", text):
        return "data"
    values = match_values(cat, text)
    if values:
        return "data"
    ranked = rank_tables(cat, text, values)
    if ranked and ranked[0].score > 0:
        return "data"
    return None


_CREATIVE = r"\b(poem|haiku|limerick|joke|song|story|essay|lyrics)s?\b"


def pleasantry(text: str) -> bool:
    """A greeting, thanks or goodbye, a question about duckask itself, or a poem or joke to write: no source
    has anything to add."""
    return bool(re.search(_GREETING, text or "", re.I) or ABOUT.search(text or "")
                or re.search(_CREATIVE, text or "", re.I))


Rule = Callable[[str, Catalog, bool], "str | None"]
#: The rules, in the order they run.
RULES: list[Rule] = [pasted_sql, change_request, small_talk, follow_up, about_schema, about_data]


def classify(text: str, catalog: Catalog, follow_up: bool = False) -> tuple[str | None, str]:
    """(intent, the rule that decided it), or (None, "undecided") when the LLM must decide."""
    text = text or ""
    if not text.strip():
        return "data", "empty"  # ClarifyQuery asks what the user wants
    for rule in RULES:
        intent = rule(text, catalog, follow_up)
        if intent:
            return intent, rule.__name__
    return None, "undecided"


def asks_to_write(text: str, catalog: Catalog) -> bool:
    """Whether the rules read ``text`` as a write: pasted SQL that is not a SELECT, or a change asked in
    words (what IntentRouter sends to ReviewWrite or ProposeWrite; the server refuses it before running
    for a role that may not propose)."""
    from duckask.utils.writes.tiers import is_write

    intent = classify(text, catalog)[0]
    return intent == "change" or (intent == "sql" and is_write(sql_of(text)))


PROMPT = """A database assistant answers questions about a database with these tables: {tables}.
Message: {text}
Is the message a question the data in those tables can answer (data), a question about the tables or
columns themselves (schema), or something else (general)? Reply with one word: data, schema or general."""


def parse_intent(reply: str) -> str:
    """The first intent word in an LLM reply; ValueError when there is none."""
    m = re.search(r"\b(data|schema|general)\b", reply.lower())
    if not m:
        raise ValueError(f"no intent in reply {reply[:60]!r}")
    return m.group(1)
