"""Can this database answer the question at all? Decided from structure before any SQL is written (issue 64).

A question is tied to the database through its words: the names of tables and columns, their descriptions and
synonyms (the semantic file), the named metrics, the questions people taught, and the words of the values the
data holds (the value index). ``reach(question, vocabulary)`` reads the question's content words (what is left
after question words, query words such as "how many" or "average", numbers and short words) and says:

- ``world``: the question asks for advice, an opinion or an explanation of the world ("how should I ...", "what
  tips would you give", "why do people ..."), not for something recorded: the data cannot answer it;
- ``nothing_tied``: none of its content words is tied to the database, none is near a name, and no query word in it
  names a table ("how many patients were admitted to each ward" of a database of battles): it is about something
  else;
- ``measure_untied``: the thing it counts or measures (the words after "how many", "number of", "the average",
  "the most", ...) is tied to nothing, though the rest is ("how many Grammy awards has each singer won"): the
  database does not record it;
- otherwise it is attempted, and the words tied to nothing are kept (``missing``) so that the answer's confidence
  can say what it could not find. Those of them that name a thing (``absent``: "seat" in "what seat does each
  passenger prefer", not "produced" or "his", read by ``things``) make the answer ``low``: a query was written, but
  over something else than what was asked.

A word is tied when its stem is a stem of the vocabulary, when its first five letters begin a vocabulary word of five
letters or more ("Canadian": 'Canada'), or when it joins the next word into one ("home runs": ``homeruns``). Nothing
here reads the model. The outcome is a decision about structure, so it errs towards attempting: a vocabulary gap
that the model can bridge ("carriers" for airlines) is only ``missing``.

This follows the "abstain when the schema cannot support the question" line of work on unanswerable text-to-SQL
(Wang et al., "Know What I don't Know: Handling Ambiguous and Unanswerable Questions for Text-to-SQL", Findings of
ACL 2023; Zhang et al., "TrustSQL", 2024, which treats abstention as an outcome of its own), with the detection done
by schema linking rather than a trained classifier.
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import re
from dataclasses import dataclass, field

from duckask.utils.schema.catalog import Catalog, per_catalog
from duckask.utils.schema.terms import STOP, stem, text_terms

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+")
#: Words of asking and of SQL's own vocabulary: they say how to compute, not what about.
GENERIC = set("""
how many much what which who whom whose when where why there here is are was were be been being has have had do does
did can could would should will shall may might must please show list give tell find get me us i we you they it its
number count counts total totals sum average avg mean median mode max min maximum minimum highest lowest largest
smallest biggest most least fewest top bottom first last latest earliest newest oldest youngest longest shortest
more less fewer than over under above below between before after during since until per each every all any some
other others same different distinct unique only also both either neither not no none one two three four five six
seven eight nine ten hundred thousand million percent percentage percentages share ratio rate rates proportion
fraction value values amount amounts figure figures record records data database table tables row rows column
columns entry entries item items thing things kind kinds type types sort order ordered rank ranked ranking group
grouped grouping level levels result results answer name names named called list listed include including included
year years month months week weeks day days date dates time times today yesterday tomorrow season seasons
ago recent recently current currently now then ever never always often usually again also just still already
get got make made take taken use used having being doing done go going went come came see seen look looked
a an the of in on at to for from by with and or as into onto out up down off about across against along around
within without through throughout whether if so that this these those such own much many lot lots
round rounded decimal decimals digit digits rounding give given giving shown showing return returned returning
highest-ranked lowest-ranked top-ranked least-common most-common common uncommon question questions answer answers
ignore ignoring leave leaving blank blanks empty missing null nulls money identify identified man men woman women
person persons people someone anyone everyone full whole entire complete just nothing something anything
detail details info information single yes world
eleven twelve thirteen fifteen twenty thirty forty fifty sixty seventy eighty ninety dozen dozens
""".split())
#: Asking for advice, an opinion or an explanation of the world, not for something the data records.
WORLD = re.compile(
    r"\b(how (should|do|can|could|would|might) (i|we|you|one|people)\b|should (i|we|one)\b|"
    r"what (tips|advice|should)\b|(any|some|your) (tips|advice)\b|advice\b|recommend (a|an|some|me)\b|"
    r"(is it|would it be) (better|worth|wise|good)\b|what do you think|in your opinion|best way to\b|"
    r"why (do|does|are|is) (people|some|most|many)\b|explain (how|why|what)\b|who invented\b|meaning of life)", re.I)
#: A form that asks for figures from the data: a world-looking question in it is still a query ("how should I rank
#: the teams by wins" is not advice).
DATA_FORM = re.compile(r"\b(how many|number of|average|total|count|list|percentage|sum of|per cent|"
                       r"which \w+ (has|had|have))\b", re.I)
#: What a question counts or measures starts after one of these.
MEASURE_CUE = re.compile(
    r"\b(how many|how much|(?:the|a|total|average|what) number of|count of|amount of|average|mean|total|sum of|"
    r"percentage of|share of|^\s*what (?:is|was|are|were) the|"
    r"the most|the least|the fewest|the highest|the lowest|the largest|the smallest|the longest|the shortest)\s+",
    re.I)
#: Where the measured phrase ends.
_PHRASE_END = set("""of in on at for from by with per did does do was were is are has have had that who which whom
whose when where during since before after than across among between to into as each every and or but while whether
""".split())
#: Words before the thing counted that do not name it ("how many different ...").
MODIFIERS = set("different distinct unique other total separate individual new old more".split())
#: A thing counted said generically: people, rows, times (the database's own entities are then what is counted).
ENTITY_WORDS = set("people persons person men women records rows entries items things times values numbers".split())
TYPO = 0.85         # a word this close to a name's word (difflib's ratio) is that word misspelt
#: Words a schema often says otherwise (stemmed key): the question's word is tied when the database has one of these.
SAME = {"phone": ("cell", "mobile", "telephone"), "telephon": ("phone", "cell", "mobile"), "town": ("city",),
        "citi": ("town",), "salari": ("wage", "pay"), "wage": ("salary", "pay"), "sex": ("gender",),
        "gender": ("sex",), "job": ("occupation", "position", "role"), "occup": ("job",), "zip": ("postcode", "postal"),
        "postcod": ("zip",), "surnam": ("last",), "firstnam": ("first",), "birthday": ("birth",), "dob": ("birth",),
        "car": ("vehicle", "auto"), "vehicl": ("car",), "kid": ("child",), "children": ("child",)}
#: Endings of adjectives: after "the most" one says how, not what ("the most expensive charge", "most frequent").
ADJECTIVE = re.compile(r"(ive|ent|ant|ous|ful|able|ible|ular|ic|al)$")
MIN_PREFIX = 5      # "Canadian" ~ Canada: the first letters shared with a vocabulary word this long
#: Words that name no thing: pronouns, conjunctions, and the prepositions the stop list keeps.
FUNCTION = set("""his her hers him them their theirs our ours your yours mine itself themselves but yet though although
however among amongst via well using except minus besides whose also else ones""".split())
#: A comparative or superlative of a common adjective says how, not what ("older", "the greatest").
DEGREE = re.compile(r"^(high|low|larg|small|bigg|great|old|young|long|short|farth|furth|earli|lat|few|cheap|fast|slow|"
                    r"heavi|light|wid|tall|new|rich|poor|strong|weak|hard|easi|clos|near|deep|bett|wors|busi)(er|est)$")
#: Irregular past forms: a verb, not a thing ("won", "held").
IRREGULAR = set("""won held took paid sold bought chose chosen left spoken written given shown made known born grown
drawn driven flown thrown worn sent spent built brought caught taught thought fought found kept lost meant met ran
begun began done gone seen stolen broken""".split())
#: After one of these a word is a verb ("who live", "languages that are spoken").
BEFORE_VERB = set("to do does did who that which not will can could would should are is was were be been has have "
                  "had".split())
#: A thing is named within two words after one of these ("each passenger", "by email", "the closing stock").
DETERMINERS = set("what which each every per by the a an its their of for any much many".split())


@dataclass(frozen=True)
class Vocabulary:
    """Every stem the database answers to, and its names (for "the closest are ...")."""
    stems: frozenset[str]
    prefixes: frozenset[str]
    names: tuple[str, ...]           # table.column and table names, as written
    columns: frozenset[str] = frozenset()     # whole column names, lower-case ("average": a column of that name)
    opaque: bool = False             # a JSON column whose keys are not all listed: it may hold what no name says
    name_words: tuple[str, ...] = ()  # the words of table and column names, lower-case (typos are read against them)


@dataclass
class Reach:
    outcome: str                     # "answerable" or "cannot"
    rule: str = ""                   # world | nothing_tied | measure_untied ("" when answerable)
    missing: list[str] = field(default_factory=list)     # the question's content words tied to nothing
    closest: list[str] = field(default_factory=list)     # names nearest to what is missing
    reason: str = ""
    absent: list[str] = field(default_factory=list)      # those of them that name a thing (``things``)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _spaced(name: str) -> str:
    """A name's words apart: ``homeRuns`` -> "home Runs", ``num_of_staff`` -> "num of staff"."""
    return re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ")


def vocabulary(catalog: Catalog) -> Vocabulary:
    """The database's words: names, descriptions, synonyms, metrics, instructions, nested keys and the words of the
    values it holds (the taught questions are added by ``taught_vocabulary``)."""
    stems: set[str] = set()
    names: list[str] = []
    columns: set[str] = set()
    opaque = False
    texts = [catalog.instructions]
    for t in catalog.tables.values():
        names.append(t.name)
        texts += [t.name, t.comment, *t.synonyms]
        for c in t.columns:
            names.append(f"{t.name}.{c.name}")
            texts += [_spaced(c.name), c.comment, *c.synonyms, c.shape, *c.samples]   # nested keys, a few values
            columns.add(c.name.lower())
            opaque = opaque or (c.type.upper() == "JSON" and not c.shape) or c.shape.endswith("…")
    texts += [f"{_spaced(m.name)} {m.description}" for m in catalog.metrics]
    texts += list(catalog.values)                     # the value index: lower-cased short text values
    for text in texts:
        stems |= text_terms(text or "")
    prefixes = {s[:MIN_PREFIX] for s in stems if len(s) >= MIN_PREFIX}
    words = sorted({w for n in names for w in re.findall(r"[a-z]+", _spaced(n).lower()) if len(w) >= 3})
    return Vocabulary(frozenset(stems), frozenset(prefixes), tuple(names), frozenset(columns), opaque, tuple(words))


@per_catalog
def catalog_vocabulary(catalog: Catalog) -> Vocabulary:
    """The catalog's vocabulary, built once a catalog (the value index's words are most of it)."""
    return vocabulary(catalog)


@functools.lru_cache(maxsize=64)
def _with_taught(base: Vocabulary, taught: tuple[str, ...]) -> Vocabulary:
    stems = set(base.stems)
    for q in taught:
        stems |= text_terms(q)
    return Vocabulary(frozenset(stems), frozenset(base.prefixes | {s[:MIN_PREFIX] for s in stems
                                                                   if len(s) >= MIN_PREFIX}), base.names, base.columns,
                      base.opaque, base.name_words)


def taught_vocabulary(catalog: Catalog, taught: tuple[str, ...] = ()) -> Vocabulary:
    """The catalog's vocabulary and the words of the questions people taught for it."""
    base = catalog_vocabulary(catalog)
    return _with_taught(base, taught) if taught else base


def content_words(question: str) -> list[str]:
    """The words that say what the question is about (lower-case, in order, once each)."""
    out = []
    for w in _WORD.findall(question):
        low = w.lower().strip("'-").removesuffix("'s")
        if len(low) < 3 or low.isdigit() or low in GENERIC or low in STOP:
            continue
        out.append(low)
    return list(dict.fromkeys(out))


def tied(word: str, vocab: Vocabulary) -> bool:
    """Its stem is the database's; or its first five letters begin a word of it ("Canadian": 'Canada'); or a name's
    word of four letters or more begins it ("voters": VOTES) or ends a longer one ("towns": Hometown); or it is a
    name's word misspelt ("popuation"); or a word it stands for is ("phone": cell_number); a hyphenated word when a
    part of it is ("win-loss")."""
    if "-" in word:
        return any(tied(part, vocab) for part in word.split("-") if len(part) >= 3)
    s = stem(word)
    if s in vocab.stems or word in vocab.stems or any(stem(w) in vocab.stems for w in SAME.get(s, ())):
        return True
    if len(s) >= 4 and any(len(w) >= 6 and w.endswith(s) for w in vocab.name_words):
        return True
    if len(word) >= MIN_PREFIX and word[:MIN_PREFIX] in vocab.prefixes:
        return True
    if any(word.startswith(w) for w in vocab.name_words if len(w) >= 4):
        return True
    return bool(difflib.get_close_matches(word, vocab.name_words, n=1, cutoff=TYPO))


def _joined(words: list[str], vocab: Vocabulary) -> set[str]:
    """Words tied only together: a pair joined ("home runs" ~ homeruns), two to four words whose initials are a
    name ("miles per gallon": MPG, "simple rating system": SRS)."""
    out = {w for a, b in zip(words, words[1:]) if stem(a + b) in vocab.stems for w in (a, b)}
    names = set(vocab.name_words) | set(vocab.columns)
    for n in (2, 3, 4):
        for i in range(len(words) - n + 1):
            if "".join(w[0] for w in words[i:i + n]) in names:
                out |= set(words[i:i + n])
    return out


def measured(question: str, columns: frozenset[str] = frozenset()) -> list[str]:
    """The words of what the question counts or measures: up to three after a cue, to the phrase's end; a query word
    counts when a column has that very name ("the highest average" where a column is ``Average``); a word in -ed
    or -ing is a verb or a participle ("how many started", "staff working"), and an adjective after "the most" a
    degree ("the most expensive"), not the thing measured."""
    out: list[str] = []
    for m in MEASURE_CUE.finditer(question):
        words = [w.lower() for w in _WORD.findall(question[m.end():])[:3]]
        head = next((w for w in words if w not in MODIFIERS), "")
        if head in ENTITY_WORDS:            # "how many people live in ...": the thing counted is said generically
            continue
        for low in words:
            if low in _PHRASE_END:
                break
            if m.group(1).lower().startswith("the") and ADJECTIVE.search(low) and low == words[0]:
                continue        # "the most expensive charge type": a degree, then the thing
            if low in columns or (low not in GENERIC and low not in STOP and len(low) >= 3 and not low.isdigit()
                                  and not low.endswith(("ed", "ing"))):
                out.append(low)
    return list(dict.fromkeys(out))


@functools.cache
def _generic_stems() -> frozenset[str]:
    """The stems of the query words: "numbers" and "values" are query words in another form."""
    return frozenset(stem(g) for g in GENERIC)


def things(question: str, words: list[str]) -> list[str]:
    """Those of ``words`` (the question's untied words) that name a thing: a word within two words after a determiner
    or a preposition that asks for one ("each passenger", "by email", "the closing stock price"), no query word
    between ("many people live"), not a verb (after "who", "to", "are"; in -ed or -ing; an irregular past), a
    pronoun or conjunction, an adverb in -ly, a degree ("older") or a query word in another form ("numbers"). A
    reading of word order, not a parser: on Spider dev it marks about 5 answerable questions in 100, on the NBA and
    Lahman questions none, on the idioms' a quarter (``bench/answerable.py``)."""
    said = [w.lower().strip("'-").removesuffix("'s") for w in _WORD.findall(question)]
    out = []
    for w in words:
        if w in FUNCTION or w in IRREGULAR or DEGREE.match(w) or w.endswith(("ed", "ing", "ly")) \
                or stem(w) in _generic_stems():
            continue
        at = [i for i, x in enumerate(said) if x == w]
        if any(i and said[i - 1] in BEFORE_VERB for i in at):
            continue
        if any(said[j] in DETERMINERS and not GENERIC & set(said[j + 1:i])
               for i in at for j in range(max(0, i - 2), i)):
            out.append(w)       # "each passenger", "the closing stock"; not "many people live"
    return out


def closest(words: list[str], vocab: Vocabulary, n: int = 3) -> list[str]:
    """The names nearest in spelling to the missing words (what the user may have meant), best first."""
    by_key = {name.split(".")[-1].lower().replace("_", " "): name for name in vocab.names}
    found: list[str] = []
    for w in words:
        found += [by_key[k] for k in difflib.get_close_matches(w, list(by_key), n=n, cutoff=0.6)]
    return list(dict.fromkeys(found))[:n]


def _said(words: list[str]) -> str:
    return ", ".join(f"'{w}'" for w in words)


def reach(question: str, vocab: Vocabulary) -> Reach:
    """Whether the database can answer ``question`` (see the module's rules), with what is missing."""
    words = content_words(question)
    pairs = _joined([w.lower() for w in _WORD.findall(question)], vocab)
    missing = [w for w in words if w not in pairs and not tied(w, vocab)]
    near = closest(missing, vocab)
    if WORLD.search(question) and not DATA_FORM.search(question):
        return Reach("cannot", "world", missing, near,
                     "it asks for advice, an opinion or an explanation, not for something the data records")
    # "count the people over 60" where a table is ``people``: a query word that names a table or column ties it
    named = any(w.lower() in vocab.columns or w.lower() in vocab.name_words for w in _WORD.findall(question))
    if words and len(missing) == len(words) and len(words) >= 2 and not named and not near:
        return Reach("cannot", "nothing_tied", missing, near,
                     f"nothing in this database is about {_said(missing)}")
    phrase = measured(question, vocab.columns)        # its words tied as a pair ("of staff": Num_of_Staff) are tied
    asked = [w for w in phrase if w in missing]
    if asked and asked == phrase and not vocab.opaque:
        return Reach("cannot", "measure_untied", missing, near,
                     f"no table or column holds {_said(asked)}")
    return Reach("answerable", "", missing, near, "", absent=things(question, missing))


def cannot_answer_text(r: Reach) -> str:
    """The answer's words: what cannot be answered and why, and the nearest names the database has."""
    text = f"The data cannot answer this: {r.reason}."
    if r.closest and r.rule != "world":
        text += f" The closest it has: {', '.join(r.closest)}."
    return text
