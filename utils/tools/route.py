"""Which source answers a question: the database, an API tool, web search, or none; and the guard that keeps
the database's values out of a tool's arguments.

The order of preference is fixed: the database first, then the APIs (as configured), then the web. Rules
decide first (``by_rule``): no tools means the database (or AnswerGeneral for a general turn); with tools a
greeting or thanks goes to AnswerGeneral. Anything else is one short LLM call with ``PROMPT`` (the sources in
that order, one line each, the database as its table names; the answer pre-filled with ``PREFIX``);
``parse_choice`` reads its YAML reply (``source`` and the tool's ``args``), and a reply naming no source it
knows falls back to the database for a data question.

``database_values`` finds what a tool call would send that came from the database (a cell of an earlier
answer's rows) and not from the user's own words: refused unless that tool's config says
``send_database_values: true``. The rule, for every cell of the rows the history keeps:

- a number (an int or float cell, or a text cell that is one number such as ``"1,207"``) with at least
  ``MIN_DIGITS`` digits (leading zeros aside) counts when the arguments hold it as a number: ``38652``,
  ``38,652`` and ``38652.0`` are one number, and so are ``33000000`` and ``3.3e7``; ``386520`` is another; ``7``,
  ``30`` and ``2.5`` are too common to hold back;
- any other cell (text, a date) with at least ``MIN_CHARS`` letters or digits counts when its words appear in the
  arguments as whole words, ignoring case, punctuation and spacing (``LeBron James`` in ``lebron  james's news``,
  ``O'Neal`` as ``O’Neal``; ``Ann`` not in ``annual``), a cell of two words or more also in any order
  (``Clayton Kershaw`` for the cell ``Kershaw, Clayton``); ``LA`` or ``x`` are too short to hold back;
- true, false and empty cells never count; a cell the user typed (by the same rule) is theirs to send.
"""
from __future__ import annotations

import re
from decimal import Decimal

from duckask.utils.llm.yaml_reply import yaml_mapping
from duckask.utils.tools.base import Tool

PROMPT = """Which source should answer the question? The sources, in order of preference:
{sources}
Pick the FIRST source in the list that can answer it. For a tool, also give its arguments from the question.
Question: {question}
Reply in YAML:
source: <one of {names}>
args: {{<argument>: <value>}}"""
PREFIX = "source:"


def sources_text(tables: str, tools: list[Tool]) -> str:
    lines = [f"1. database: tables {tables}; only for questions the data in these tables answers"]
    lines += [f"{i}. {t.describe()}" for i, t in enumerate(tools, 2)]
    lines.append(f"{len(tools) + 2}. none: only greetings, thanks and chit-chat")
    return "\n".join(lines)


def tables_summary(catalog, limit: int = 600) -> str:
    """The tables' names (what the database is about, in the fewest words)."""
    text = ", ".join(catalog.tables) if catalog else ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def prompt(question: str, catalog, tools: list[Tool]) -> str:
    names = ", ".join(["database", *(t.name for t in tools), "none"])
    return PROMPT.format(sources=sources_text(tables_summary(catalog), tools), question=question, names=names)


def by_rule(question: str, intent: str, tools: list[Tool]) -> str | None:
    """The source when rules can tell, else None: the model decides. Without tools the intent decides; with
    tools only a greeting, thanks or a question about duckask is decided (``none``). Whether a question names
    the data is no rule here: on a real database too many words match a stored value or a column ("Field of
    Dreams", "Boston", "won"; bench/tool_routing.py)."""
    from duckask.utils.dialogue.intent import pleasantry

    if not tools:
        return "none" if intent == "general" else "database"
    return "none" if pleasantry(question) else None


def parse_choice(reply: str, intent: str, tools: list[Tool]) -> tuple[str, dict[str, str], str]:
    """(source, args, how it was read) from the model's reply; what it cannot read falls back by intent."""
    names = {"database", "none", *(t.name for t in tools)}
    text = re.sub(r"```(?:ya?ml)?", "", reply or "")
    try:
        data = yaml_mapping(reply)
    except ValueError:
        data = None
    source: str | None = None
    args: dict = {}
    if data is not None:
        source = str(data.get("source") or "").strip().lower() or None
        given = data.get("args")
        args = given if isinstance(given, dict) else {}
    if source not in names:
        m = re.search(r"source:\s*([\w-]+)", text, re.I)
        source = m.group(1).lower() if m and m.group(1).lower() in names else None
    if source is None:
        return ("database" if intent == "data" else "none"), {}, "unreadable reply: by intent"
    return source, {str(k): str(v) for k, v in args.items() if v is not None}, "llm"


def fill_args(tool: Tool, args: dict[str, str], question: str) -> dict[str, str]:
    """The tool's arguments: those the model gave that the tool takes; a lone missing one is the question."""
    out = {p.name: args[p.name] for p in tool.params if str(args.get(p.name) or "").strip()}
    missing = [p.name for p in tool.params if p.required and p.name not in out]
    if len(missing) == 1 and len(tool.params) == 1:
        out[missing[0]] = question
    return out


MIN_CHARS = 3       # a text cell with fewer letters and digits is not looked for ('LA', 'x', '7b')
MIN_DIGITS = 3      # nor a number written with fewer digits, leading zeros aside (7, 30, 2.5, 0.05)
#: 38652, 38,652, 38652.0, 27.1, 3.3e7 (the same number as 33000000)
NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


def cells(history: list[dict]) -> list:
    """Every cell of the rows the history keeps of earlier answers (a row is a list, or a dict of columns)."""
    out: list = []
    for turn in history or []:
        for row in turn.get("rows") or []:
            out.extend(row.values() if isinstance(row, dict) else row if isinstance(row, list | tuple) else [])
    return out


def words(text: str) -> str:
    """The text's words, casefolded, one space apart and padded with one: ``" o neal s news "``; a cell's words
    are in an argument's when ``words(cell) in words(argument)``."""
    return " " + " ".join(re.findall(r"[^\W_]+", text.casefold())) + " "


def numbers(text: str) -> set[Decimal]:
    """The numbers written in ``text`` (signs dropped; ``1,234``, ``1234.0`` and ``1.234e3`` are 1234)."""
    return {d for m in NUMBER.findall(text) if (d := Decimal(m.replace(",", ""))).is_finite()}


def holds(text_words: str, cell_words: str) -> bool:
    """Whether a text (``words``) holds a cell's words: in their order, or, for a cell of two words or more, each
    as a whole word in any order ("Clayton Kershaw" holds the cell "Kershaw, Clayton")."""
    if cell_words in text_words:
        return True
    parts = cell_words.split()
    return len(parts) >= 2 and set(parts) <= set(text_words.split())


def as_number(cell) -> Decimal | None:
    """The cell's value if it is a number (an int or float, or text that is one number), else None."""
    if isinstance(cell, int | float | Decimal) and not isinstance(cell, bool):
        d = Decimal(str(cell))
        return abs(d) if d.is_finite() else None
    if isinstance(cell, str) and NUMBER.fullmatch(cell.strip().lstrip("+-")):
        d = Decimal(cell.strip().lstrip("+-").replace(",", ""))
        return d if d.is_finite() else None
    return None


def number_text(n: Decimal) -> str:
    """``1234`` for 1234.0, ``27.1`` for 27.10: how a withheld number is named."""
    return format(n.normalize(), "f")


def digits(n: Decimal) -> int:
    """How many digits the number is written with, leading zeros aside: 3 for 100 and 27.1, 1 for 0.05."""
    return len(number_text(n).replace(".", "").lstrip("0"))


def database_values(args: dict[str, str], typed: str, history: list[dict]) -> list[str]:
    """Values from earlier answers' rows that ``args`` would send and the user did not type themselves, by the
    module's rule (numbers as numbers, other cells as whole words): text cells as stored, numbers as
    ``number_text``; sorted, each once."""
    sent = " ".join(str(v) for v in args.values())
    sent_words, sent_numbers = words(sent), numbers(sent)
    typed_words, typed_numbers = words(typed or ""), numbers(typed or "")
    found = set()
    for cell in cells(history):
        if cell is None or isinstance(cell, bool):
            continue
        n = as_number(cell)
        if n is not None:
            if digits(n) >= MIN_DIGITS and n in sent_numbers and n not in typed_numbers:
                found.add(number_text(n))
        else:
            w = words(str(cell))
            if len(w.replace(" ", "")) >= MIN_CHARS and holds(sent_words, w) and not holds(typed_words, w):
                found.add(str(cell).strip())
    return sorted(found)
