"""The reference pages of the documentation site, generated from the code they describe: every setting
(``Settings``), every command's ``--help`` (``cli.build_parser``) and the module map (each module's docstring).

The pages in ``docs/reference/`` hold cog blocks that call these functions; ``cog -r docs/reference/*.md``
writes them and ``cog --check`` (CI, ``tests/test_docs.py``) fails when the code has moved on::

    python -m duckask.utils.app.reference settings|cli|modules     # print one page's generated part
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
from pathlib import Path

from ..config import takes
from ..settings import Settings, field_docs

#: The repository's root (the source tree; the generator runs from a checkout).
ROOT = Path(__file__).resolve().parents[2]
#: The folders of the module map, in the order a newcomer reads them.
PACKAGES = ("flow", "nodes", "utils", "utils/llm", "utils/db", "utils/schema", "utils/semantic", "utils/sql",
            "utils/knowledge", "utils/dialogue", "utils/trust", "utils/tools", "utils/delivery", "utils/eval",
            "utils/app", "data")


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _default(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (dict, list)):
        return "`{}`" if isinstance(value, dict) else "`[]`"
    return f"`{value}`"


def settings_table() -> str:
    """One row per setting: name, default, what it takes, what it does."""
    docs = field_docs(Settings)
    rows = ["| setting | default | takes | what it does |", "|---|---|---|---|"]
    for f in dataclasses.fields(Settings):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        rows.append(f"| `{f.name}` | {_default(default)} | {_cell(takes(f.name))} | {_cell(docs.get(f.name, ''))} |")
    return "\n".join(rows) + "\n"


def cli_help() -> str:
    """``duckask --help`` and each command's ``--help``, as the terminal shows them at 100 columns."""
    from .cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    parsers = [parser, *sub.choices.values()]
    for p in parsers:       # the width a terminal of 100 columns gives, whatever this one is
        p.formatter_class = functools.partial(p.formatter_class, width=100)
    parts = ["```text\n" + parser.format_help().rstrip() + "\n```\n"]
    for name, command in sub.choices.items():
        parts.append(f"## duckask {name}\n\n```text\n{command.format_help().rstrip()}\n```\n")
    return "\n".join(parts)


def _summary(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return _cell(doc.split("\n\n", 1)[0])


def module_map(root: Path = ROOT) -> str:
    """For each folder: what it is for (its ``__init__`` docstring's first paragraph), then one row per module
    with the first paragraph of the module's docstring."""
    parts = []
    for folder in PACKAGES:
        where = root / folder
        init = where / "__init__.py"
        parts.append(f"## `{folder}/`\n")
        if init.exists() and _summary(init):
            parts.append(_summary(init) + "\n")
        rows = ["| module | what it is for |", "|---|---|"]
        for path in sorted(where.glob("*.py")):
            if path.name in ("__init__.py", "__main__.py"):
                continue
            rows.append(f"| `{path.name}` | {_summary(path)} |")
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


PAGES = {"settings": settings_table, "cli": cli_help, "modules": module_map}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print the generated part of one reference page.")
    ap.add_argument("page", choices=sorted(PAGES))
    print(PAGES[ap.parse_args(argv).page](), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
