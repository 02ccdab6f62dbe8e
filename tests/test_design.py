"""docs/design.md is the source of truth and must match the code: the flow's edges and the shared store's
keys. (Settings, environment variables and the module map: tests/test_docs.py.)"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from duckask.flow import build_flow

ROOT = Path(__file__).resolve().parents[1]
DESIGN = (ROOT / "docs" / "design.md").read_text()


def section(title: str) -> str:
    start = DESIGN.index(f"## {title}")
    nxt = DESIGN.find("\n## ", start + 1)
    return DESIGN[start: nxt if nxt != -1 else None]


def first_cells(text: str) -> set[str]:
    """The backticked names in the first cell of each table row."""
    return {name for line in text.splitlines() if line.startswith("| `")
            for name in re.findall(r"`([^`]+)`", line.split("|")[1])}


# --------------------------------------------------------------------------- the flow
MERMAID_EDGE = re.compile(r"^\s*(\w+)(?:\[[^\]]*\]|\(\([^)]*\)\))?\s*"
                          r"(?:--\s*([\w ]+?)\s*-->|-->|-\.\s*([^.]+?)\s*\.->)\s*(\w+)")


def mermaid_edges() -> set[tuple[str, str, str]]:
    body = section("2. Flow").split("```mermaid", 1)[1].split("```", 1)[0]
    names = dict(re.findall(r"(\w+)\[(\w+)\]", body))
    edges = set()
    for line in body.splitlines():
        m = MERMAID_EDGE.match(line)
        if m:
            src, label, dotted, dst = m.group(1), m.group(2), m.group(3), m.group(4)
            action = (label or "default") if not dotted else "end"
            edges.add((names.get(src, src), action, names.get(dst, dst)))
    return edges


def code_edges() -> set[tuple[str, str, str]]:
    flow = build_flow(None)      # nodes keep their context until they run; wiring needs none
    seen, todo, edges = set(), [flow.start_node], set()
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for action, nxt in node.successors.items():
            edges.add((type(node).__name__, action, type(nxt).__name__))
            todo.append(nxt)
    return edges


def test_the_mermaid_diagram_draws_exactly_the_edges_flow_py_wires():
    drawn = mermaid_edges()
    wired = drawn - {e for e in drawn if e[2] == "done"}
    assert wired == code_edges()
    # Edges to the end are actions with no successor in the code.
    for src, action, _ in drawn - wired:
        assert (src, action) not in {(s, a) for s, a, _ in code_edges()}


# --------------------------------------------------------------------------- the shared store
def store_keys() -> tuple[set[str], set[str]]:
    """Keys of ``shared`` read and written in the nodes and the API."""
    read, written = set(), set()
    for path in [*(ROOT / "nodes").glob("*.py"), ROOT / "utils" / "app" / "api.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and getattr(node.value, "id", None) == "shared" \
                    and isinstance(node.slice, ast.Constant):
                (written if isinstance(node.ctx, ast.Store) else read).add(node.slice.value)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and getattr(node.func.value, "id", None) == "shared":
                if node.func.attr in ("get", "setdefault") and isinstance(node.args[0], ast.Constant):
                    read.add(node.args[0].value)
                    if node.func.attr == "setdefault":
                        written.add(node.args[0].value)
                elif node.func.attr == "update" and isinstance(node.args[0], ast.Dict):
                    written |= {k.value for k in node.args[0].keys if isinstance(k, ast.Constant)}
            elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "shared" \
                    and isinstance(node.value, ast.Dict):
                written |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    return read, written


def test_the_shared_store_table_lists_exactly_the_keys_that_are_read():
    read, written = store_keys()
    assert first_cells(section("5. Shared store")) == read
    assert written - read == set(), "keys written that nobody reads"
    assert read - written == set(), "keys read that nobody writes"
