"""docs/design.md is the source of truth and must match the code: the flow's edges.
(The turn state: tests/test_turn.py; settings, environment variables and the module map: tests/test_docs.py.)"""
from __future__ import annotations

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
