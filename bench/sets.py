"""The benchmark question sets as ``bench/suites.yaml`` declares them, for the scripts that read a set outside an
eval run (the peer, the value-link and untied-signal measures): one place says which questions, which database and
which semantic folder a set uses.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


@cache
def _suites() -> dict:
    return yaml.safe_load((ROOT / "bench" / "suites.yaml").read_text())["suites"]


def question_set(suite: str, config: str | None = None) -> tuple[str, str | None, str | None]:
    """(questions, database or None when each question names its own, semantic folder or None) of an eval suite,
    with ``config``'s options (``--semantic``) over the suite's."""
    s = _suites()[suite]
    options = [*s.get("options", []), *(s["configs"].get(config) or [] if config else [])]
    semantic = options[options.index("--semantic") + 1] if "--semantic" in options else None
    return s["questions"], s.get("db"), semantic


def ids_of(suite: str) -> str | None:
    """The suite's ids file (a fixed sample of a larger folder, as Spider's held-out 100), or None: every question."""
    return _suites()[suite].get("ids")


def about(suite: str) -> str:
    """What the suite's figure means and what it is held out from (its ``about``)."""
    return _suites()[suite]["about"]
