"""Templates from kept pairs (issue 45): a question that is a kept pair's question with other literals (a year, a
number, a name or a category that is a value of the column the pair's SQL compares it with) is answered by the
pair's SQL with those literals put in, on sqlglot's parse tree, with no model call.

``match(question, example, values)`` gives a ``Template`` or None:

- the two questions, as folded words, differ only in slots (difflib's opcodes: ``replace`` blocks; a word added
  or left out, a slot of more than ``MAX_SLOT`` words, fewer than half the pair's words kept, or a block that is
  not a literal, is None: the question asks something else);
- each slot's old text stands in the pair's SQL as a literal: a number equal to it, or strings equal to its words
  once case and accents are set aside: one literal around it ("Yankees" inside 'New York Yankees': the slot grows
  to the whole value, and the new question's words at the same place are its new value), literals tiling it word
  for word ('Jackie' and 'Robinson' for "Jackie Robinson"), or one literal inside it ('Warriors' in "the Golden
  State Warriors": the new value is the longest run of the new words ending the slot that is a stored value);
- the new text is of the same kind: a number for a number, a year (1800-2200) for a year; for a string, a value of
  a column the literal is compared with (``values.values(table, column)``, its stored spelling used); a column
  whose values are not indexed gives no template (nothing says the new value exists);
- every occurrence of the old literal in the tree is replaced (``exp.Literal``), never the SQL's text;
- a slot whose old text is not in the SQL may still be a stored code of a literal's column (issue 65): "Canada" for
  'CAN', "Puerto Rico" for 'P.R.', "Venezuelan" for 'Venezuela' (``_coded``: the initials, an upper-case
  abbreviation that begins the word, or a shared stem; one value of the column only); the new text is then put in
  as the value it names the same way ("Mexico" -> 'Mexico', "Dominican Republic" -> 'D.R.').

A question equal to the pair's (folded) is a template with no slot (``exact``).
"""
from __future__ import annotations

import difflib
import os
import re
import unicodedata
from dataclasses import dataclass, field

from sqlglot import exp

from duckask.utils.checks.grounding import tables_of_column
from duckask.utils.db.tree import sql_tree
from duckask.utils.schema.value_index import normal

_WORD = re.compile(r"\w+(?:[.'-]\w+)*")
_NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")     # ASCII digits only: '٢٠٠٨' is no number to put into SQL
MAX_SLOT = 4            # words a slot may have (a value's name); a longer difference is another question
MAX_CODES = 1000        # values a column may hold for a slot to be read as one of its codes (``_coded``)


@dataclass
class Template:
    sql: str
    example_id: str
    slots: list[tuple[str, str]] = field(default_factory=list)    # (the pair's literal, the question's)

    @property
    def exact(self) -> bool:
        return not self.slots


def fold_word(word: str) -> str:
    """A word as two questions are compared: accents, case and a possessive ending set aside ("Arnold's" is
    "arnold", so a name's literal is seen in it; before, "List Jeremy Affeldt's hits" matched the pair "List Jamie
    Arnold's games" as a first name alone, and answered Jeremy Arnold's games)."""
    folded = unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode().lower()
    return folded[:-2] if folded.endswith("'s") else folded.rstrip("'")


_fold = fold_word


def question_words(text: str) -> list[str]:
    """The words of a question, as two questions are compared (a possessive stays on its word: ``fold_word``)."""
    return _WORD.findall(text or "")


def _is_year(text: str) -> bool:
    return text.isascii() and text.isdigit() and 1800 <= int(text) <= 2200


def _number(text: str) -> str:
    """The SQL literal of a number slot, built from the parsed number (never the question's characters)."""
    return str(float(text)) if "." in text else str(int(text))


def _slots(old: list[str], new: list[str]) -> list[tuple[int, int, int, int]] | None:
    """The replaced blocks (old start, old end, new start, new end), or None when a word is added or left out."""
    ops = difflib.SequenceMatcher(None, [_fold(w) for w in old], [_fold(w) for w in new], autojunk=False).get_opcodes()
    if any(tag in ("insert", "delete") for tag, *_ in ops):
        return None
    blocks = [(i1, i2, j1, j2) for tag, i1, i2, j1, j2 in ops if tag == "replace"]
    same = sum(i2 - i1 for tag, i1, i2, *_ in ops if tag == "equal")
    if same < max(2, len(old) / 2) or any(i2 - i1 > MAX_SLOT or j2 - j1 > MAX_SLOT for i1, i2, j1, j2 in blocks):
        return None                 # another question: most of its words are not the pair's, or a slot is a phrase
    return blocks


def _number_slot(tree, old: str, new: str) -> list[exp.Literal] | None:
    """The number literals equal to ``old`` when ``new`` may stand for it (a year for a year), else None."""
    if not (_NUMBER.match(old) and _NUMBER.match(new)) or _is_year(old) != _is_year(new):
        return None
    hits = [lit for lit in tree.find_all(exp.Literal)
            if (not lit.is_string and lit.this == old) or (lit.is_string and lit.this == old)]
    return hits or None


def _literal_words(tree) -> list[tuple[exp.Literal, list[str]]]:
    return [(lit, [_fold(w) for w in _WORD.findall(lit.this)]) for lit in tree.find_all(exp.Literal) if lit.is_string]


def _same_text(tree, lit: exp.Literal) -> list[exp.Literal]:
    return [x for x in tree.find_all(exp.Literal) if x.is_string and x.this == lit.this]


def _string_slot(tree, words: list[str], new_words: list[str], block, values):
    """[(literals, stored new value)] and the old words covered, for the string literals of the pair's SQL that
    account for the block's words, each new value a stored value of the column its literal is compared with:

    - one literal covering the block ("Yankees" in 'New York Yankees': the whole value, and the new question's
      words at its place);
    - literals tiling a block of as many new words ('Jackie', 'Robinson' for "Hank Aaron": word for word);
    - one literal ending (or starting) the block ('Warriors' in "the Golden State Warriors"), the new value the
      longest run of words ending (starting) the new block that is a stored value ("Chicago Bulls": 'Bulls');
    - one literal the block's words name as a code ("Canada": 'CAN'), the new words' value named the same way.
    Else None."""
    i1, i2, j1, j2 = block
    folded = [_fold(w) for w in words]
    lits = _literal_words(tree)
    spoken = {w for _, parts in lits for w in parts}
    for lit, parts in lits:                                         # one literal covering the block
        n = len(parts)
        for a in range(max(0, i2 - n), min(i1, len(words) - n) + 1):
            if n and folded[a:a + n] == parts and a <= i1 and i2 <= a + n:
                said = " ".join(new_words[j1 - (i1 - a):j2 + (a + n - i2)])
                if (stored := _stored(tree, lit, said, values)) is not None:
                    return [(_same_text(tree, lit), stored)], (a, a + n)
    if i2 - i1 == j2 - j1:                                          # literals tiling the block, word for word
        swaps, k = [], i1
        while k < i2:
            if hits := _number_slot(tree, words[k], new_words[j1 + k - i1]):     # a year beside a name
                swaps.append((hits, new_words[j1 + k - i1]))
                k += 1
                continue
            step = next(((lit, len(parts)) for lit, parts in lits
                         if parts and folded[k:k + len(parts)] == parts and k + len(parts) <= i2), None)
            if step is None:
                break
            lit, n = step
            stored = _stored(tree, lit, " ".join(new_words[j1 + k - i1:j1 + k - i1 + n]), values)
            if stored is None:
                break
            swaps.append((_same_text(tree, lit), stored))
            k += n
        if k == i2 and swaps:
            return swaps, (i1, i2)
    for lit, parts in lits:                     # one literal ending (or starting) the block, the new value likewise
        n = len(parts)
        at_end, at_start = n and folded[i2 - n:i2] == parts, n and folded[i1:i1 + n] == parts
        rest = folded[i1:i2 - n] if at_end else folded[i1 + n:i2]
        if any(_NUMBER.match(w) or w in spoken for w in rest):
            continue                                # the rest of the block is in the SQL too: not only this value
        for size in range(j2 - j1, 0, -1):
            for b in ([j2 - size] if at_end else []) + ([j1] if at_start else []):
                if (stored := _stored(tree, lit, " ".join(new_words[b:b + size]), values)) is not None:
                    return [(_same_text(tree, lit), stored)], (i1, i2)
    if any(w in spoken for w in folded[i1:i2]):
        return None
    for a, b in ((0, 0), (0, 1), (1, 0), (0, 2)):   # a code for the block's words, with a word kept beside them
        beside = new_words[j1 - a:j1] + new_words[j2:j2 + b]
        if i1 - a < 0 or i2 + b > len(words) or j2 + b > len(new_words) or \
                folded[i1 - a:i1] + folded[i2:i2 + b] != [_fold(w) for w in beside]:
            continue                                # ("Canada": 'CAN'; "American League": 'AL')
        old_said, new_said = " ".join(words[i1 - a:i2 + b]), " ".join(new_words[j1 - a:j2 + b])
        for lit, _ in lits:
            if _stored(tree, lit, old_said, values, coded=True) == lit.this and \
                    (stored := _stored(tree, lit, new_said, values, coded=True)) is not None:
                return [(_same_text(tree, lit), stored)], (i1 - a, i2 + b)
    return None


def _coded(held, said: str) -> str | None:
    """The one value of ``held`` that ``said`` names as a code: its initials ("Puerto Rico": 'P.R.'), an upper-case
    abbreviation of two to four letters that begins it ("Canadian": 'CAN'), or a word sharing its stem ("Venezuelan":
    'Venezuela', "Mexican": 'Mexico'). None when no value or several do, or when the column holds more than
    ``MAX_CODES`` values (codes are a small vocabulary; a names column is not read value by value)."""
    words = [_fold(w) for w in re.findall(r"[^\W\d_]+", said)]
    if not words or not held or len(held) > MAX_CODES:
        return None
    said_letters = "".join(words)

    def names(v: str) -> bool:
        letters = "".join(re.findall(r"[^\W\d_]+", _fold(v)))
        if not letters:
            return False
        if len(words) >= 2:
            return letters == "".join(w[0] for w in words)
        if v.isupper() and v.isalpha() and 2 <= len(v) <= 4:
            return said_letters.startswith(letters) and len(said_letters) > len(letters)
        stem_len = len(os.path.commonprefix([letters, said_letters]))
        return stem_len >= 4 and stem_len >= min(len(letters), len(said_letters)) - 2 and " " not in v

    found = [v for v in held if names(str(v))]
    return found[0] if len(found) == 1 else None


def _stored(tree, literal: exp.Literal, said: str, values, coded: bool = False) -> str | None:
    """The stored spelling of ``said`` in a column ``literal`` is compared with (the column itself, or inside a
    function of it: ``strip_accents(name) = 'Nikola Jokic'``), or None; ``coded``: also a value it names as a code
    (``_coded``)."""
    parent = literal.parent
    while isinstance(parent, (exp.Tuple, exp.Paren)):
        parent = parent.parent
    if not isinstance(parent, (exp.Predicate, exp.In)):
        return None
    for column in [c for c in parent.find_all(exp.Column)][:3]:
        wrapped = column.parent is not parent and not isinstance(column.parent, (exp.Paren, exp.Tuple))
        for table in tables_of_column(tree, column, values)[:3]:
            held = values.values(table, column.name)
            by_fold, by_normal = _lookup(held)
            found = by_fold.get(_fold(said)) or by_normal.get(normal(said)) or []     # 'Bonds' before 'Bond'
            if not found and coded and (code := _coded(held, said)) is not None:
                found = [code]
            if found:
                return _styled(literal.this, found[0]) if wrapped else found[0]
    return None


_LOOKUPS: dict[int, tuple[list, int, tuple[dict, dict]]] = {}


def _lookup(held: list[str] | None) -> tuple[dict, dict]:
    """A column's values by their folded and by their normal text, built once per value list (the value index keeps
    one list per column), so a question's many word runs are each looked up, not compared with every value."""
    if not held:
        return {}, {}
    hit = _LOOKUPS.get(id(held))
    if hit is not None and hit[0] is held and hit[1] == len(held):
        return hit[2]
    by_fold: dict[str, list[str]] = {}
    by_normal: dict[str, list[str]] = {}
    for v in held:
        by_fold.setdefault(_fold(v), []).append(v)
        by_normal.setdefault(normal(v), []).append(v)
    if len(_LOOKUPS) > 512:
        _LOOKUPS.clear()
    _LOOKUPS[id(held)] = (held, len(held), (by_fold, by_normal))
    return by_fold, by_normal


def _styled(kept: str, value: str) -> str:
    """A stored value written as the kept literal was, for a column inside a function (``strip_accents(name) =
    'Nikola Jokic'``: no accents; ``lower(name) = 'lebron james'``: lower case)."""
    if kept.isascii():
        value = _fold(value) if kept == kept.lower() else unicodedata.normalize("NFKD", value).encode(
            "ascii", "ignore").decode()
    return value.lower() if kept == kept.lower() else value


def match(question: str, example, values) -> Template | None:
    """The pair's SQL for ``question`` when the two differ only in literals (see the module's list), else None."""
    old, new = question_words(example.question), question_words(question)
    blocks = _slots(old, new)
    tree = sql_tree(example.sql) if blocks is not None else None
    if tree is None:
        return None
    if not blocks:
        return Template(example.sql, example.id)
    swaps: list[tuple[list[exp.Literal], str, str]] = []
    covered: list[tuple[int, int]] = []
    for block in blocks:
        i1, i2, j1, j2 = block
        if any(a <= i1 and i2 <= b for a, b in covered):
            continue                                    # a second word of a value already taken whole
        if i2 - i1 == 1 and j2 - j1 == 1 and (hits := _number_slot(tree, old[i1], new[j1])):
            swaps.append((hits, old[i1], new[j1]))
            continue
        found = values is not None and _string_slot(tree, old, new, block, values)
        if not found:
            return None
        pairs, span = found
        swaps += [(hits, hits[0].this, stored) for hits, stored in pairs]
        covered.append(span)
    for hits, _, value in swaps:
        for lit in hits:
            lit.replace(exp.Literal.string(value) if lit.is_string else exp.Literal.number(_number(value)))
    return Template(tree.sql(dialect="duckdb"), example.id, [(a, b) for _, a, b in swaps])


def provenance(record: dict) -> str:
    """What an answer from a template says of it (``shared["template"]``): the kept pair and the literals put in."""
    pair = record["pair"]
    put = "; ".join(f"{s['asked']} for {s['kept']}" for s in record.get("slots") or [])
    how = " asked in other words" if record.get("reach") == "paraphrase" else ""
    by = f" (kept by {pair['by']})" if pair.get("by") else ""
    return (f"From the kept pair #{pair['id']}{by} ({pair['question']!r}){how}"
            + (f", with {put}." if put else ", as kept."))
