"""Layers point one way (docs/design.md "Where things live"): nodes use utils; the surfaces (``utils/app``) and the
eval harness (``utils/eval``, which runs the product as a user would) use everything below them; nothing below
imports them. Read from every module's imports (top level and inside functions), so a lazy import counts too."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ABOVE = ("duckask.utils.app", "duckask.utils.eval")
#: The folders below the surfaces, and what none of their modules may import.
BELOW = {"nodes": ABOVE, "utils/db": ABOVE, "utils/sql": ABOVE, "utils/schema": ABOVE, "utils/llm": ABOVE,
         "utils/knowledge": ABOVE, "utils/semantic": ABOVE, "utils/dialogue": ABOVE, "utils/delivery": ABOVE,
         "utils/trust": ABOVE, "utils/tools": ABOVE, "utils/state": ABOVE, "data": ABOVE,
         "utils/config.py": ABOVE, "flow/flow.py": ABOVE}


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.update([node.module] + [f"{node.module}.{a.name}" for a in node.names])
    return found


def modules(where: str) -> list[Path]:
    p = ROOT / where
    return [p] if p.is_file() else sorted(p.rglob("*.py"))


@pytest.mark.parametrize("where", sorted(BELOW))
def test_nothing_below_imports_a_surface(where):
    bad = [f"{m.relative_to(ROOT)} imports {name}" for m in modules(where) for name in sorted(imports(m))
           if name.startswith(BELOW[where])]
    assert not bad, "\n".join(bad)


def test_the_rule_sees_every_folder_below():
    """A new utils package is placed on purpose: below the surfaces (and then listed here), or a surface."""
    packages = {p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "utils").glob("*/__init__.py")}
    assert packages - {"utils/app", "utils/eval"} == {w for w in BELOW if w.startswith("utils/") and "." not in w}


COMMANDS = ("cli", "commands", "write_commands", "semantic_commands", "deliver")


def test_the_command_modules_import_one_way():
    """cli wires the commands; the command modules use each other's public helpers one way only, never in a
    circle (lazy imports inside functions count) and never by a private name."""
    graph = {m: {n.rsplit(".", 1)[-1] for n in imports(ROOT / "utils" / "app" / f"{m}.py")
                 if n.startswith("duckask.utils.app.") and n.rsplit(".", 1)[-1] in COMMANDS} for m in COMMANDS}
    assert not [(a, b) for a in COMMANDS for b in graph[a] if a in graph[b]], graph
    private = [(m, n) for m in COMMANDS for n in imports(ROOT / "utils" / "app" / f"{m}.py")
               if n.startswith("duckask.utils.app.") and n.rsplit(".", 1)[-1].startswith("_")]
    assert not private, private
