"""JSON from the wire (an HTTP body, an MCP line), read only when it is shallow enough to read.

Python's ``json`` recurses once per level: a 60 KB body nested 30,000 deep raises ``RecursionError`` (a 500 with a
traceback, or an MCP server that dies and loses every reply). ``depth`` counts the nesting without parsing
(strings skipped, one regular expression and a running sum), so ``loads`` refuses a text nested past
``MAX_DEPTH`` before ``json`` sees it; nothing duckask takes is nested more than a few levels.
"""
from __future__ import annotations

import itertools
import json
import re
from typing import Any

MAX_DEPTH = 64
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?', re.S)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class TooDeep(ValueError):
    """JSON nested deeper than ``MAX_DEPTH``."""


def depth(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest (its strings skipped), without parsing it."""
    brackets = re.findall(r"[\[\]{}]", _STRING.sub("", text))
    return max(itertools.accumulate(_STEP[b] for b in brackets), default=0)


def loads(text: str) -> Any:
    """``json.loads``, refusing a text nested past ``MAX_DEPTH`` first (TooDeep); ValueError as json's own."""
    if depth(text) > MAX_DEPTH:
        raise TooDeep(f"it is nested more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(text)
    except RecursionError:          # a guard against the guard: never a RecursionError out of here
        raise TooDeep(f"it is nested more than {MAX_DEPTH} levels deep") from None
