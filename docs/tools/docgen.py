"""The reference pages of the documentation site, generated from the code they describe: every setting
(``Settings``), every command's ``--help`` (``cli.build_parser``) and the module map (each module's docstring).

The pages in ``docs/reference/`` hold cog blocks that call these functions; ``cog -r docs/reference/*.md``
writes them and ``cog --check`` (CI, ``tests/test_docs.py``) fails when the code has moved on::

    python docs/tools/docgen.py settings|cli|modules|store|nodes     # print one page's generated part

It is documentation tooling, not part of the product: the wheel does not ship it. The cog blocks put
``docs/tools`` on ``sys.path`` (cog runs from the repository's root, as CI does).
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import inspect
import re
from pathlib import Path

import tomllib

from duckask.utils.config import takes
from duckask.utils.settings import Settings, field_docs

#: The repository's root (the generator runs from a checkout).
ROOT = Path(__file__).resolve().parents[2]
#: The folders of the module map, in the order a newcomer reads them.
PACKAGES = ("flow", "nodes", "utils", "utils/llm", "utils/db", "utils/access", "utils/writes", "utils/airtable",
            "utils/schema", "utils/semantic", "utils/sql", "utils/checks",
            "utils/knowledge", "utils/state", "utils/dialogue", "utils/trust", "utils/tools", "utils/delivery",
            "utils/eval",
            "utils/api", "utils/app", "data")


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
    from duckask.utils.app.cli import build_parser

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


def _path_of(module: str, root: Path = ROOT) -> Path:
    """A module's file or package folder in the checkout (``duckask`` is flow/, ``duckask.utils`` is utils/...)."""
    parts = module.split(".")[1:]
    top = {"utils": "utils", "nodes": "nodes", "data": "data", "flow": "flow"}
    base = root / top[parts[0]] / Path(*parts[1:]) if parts[0] in top else root / "flow"
    return base if base.is_dir() else base.with_suffix(".py")


def _what(path: Path) -> str:
    """What a module is for, in its docstring's first words: up to the first colon when two words or more come
    before it, else the first sentence (to its first full stop or semicolon)."""
    doc = " ".join((ast.get_docstring(ast.parse((path / "__init__.py" if path.is_dir() else path).read_text()))
                    or "").split())
    sentence = re.split(r"(?<!e\.g)[.;](?:\s|$)", doc, maxsplit=1)[0]
    head = sentence.split(": ", 1)[0]
    return _cell(head if head != sentence and len(head.split()) >= 2 else sentence)


def layer_table(root: Path = ROOT) -> str:
    """docs/design.md's layers, top first, read from the import contract (``[tool.importlinter]``'s ``layers``) that
    lint-imports holds: each floor's packages (``|``: siblings that may not import each other) and what each is
    for, from its docstring."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    layers = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")["layers"]
    rows = ["| floor | packages, and what each is for |", "|---|---|"]
    for i, layer in enumerate(layers, 1):
        cells = []
        for module in (m.strip() for m in layer.split("|")):
            path = _path_of(module, root)
            shown = path.relative_to(root).as_posix() + ("/" if path.is_dir() else "")
            cells.append(f"`{shown}`: {_what(path)}")
        rows.append(f"| {i} | {'; '.join(cells)} |")
    return "\n".join(rows) + "\n"


# --------------------------------------------------------------------------- the turn state
MUTATORS = {"append", "update", "extend", "pop", "clear", "insert", "setdefault", "remove"}
def _key_of(node) -> str | None:
    """The shared-store key an expression reaches into: ``shared["k"]``, ``shared["k"][i]["x"]``..."""
    while isinstance(node, ast.Subscript):
        if getattr(node.value, "id", None) == "shared" and isinstance(node.slice, ast.Constant):
            return node.slice.value
        node = node.value
    return None


def writes(tree: ast.AST) -> set[str]:
    """Every key written in ``tree``: assigned, updated, set by default, popped, or changed inside."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(_key_of(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            target = node.func.value
            if getattr(target, "id", None) == "shared":       # shared.update({...}), shared.pop("k"), ...
                args = node.args[0] if node.args else None
                if isinstance(args, ast.Dict):
                    found |= {k.value for k in args.keys if isinstance(k, ast.Constant)}
                elif isinstance(args, ast.Constant):
                    found.add(args.value)
            else:
                found.add(_key_of(target))
    return found - {None}


def reads(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _key_of(node):
            found.add(_key_of(node))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and getattr(node.func.value, "id", None) == "shared" and node.args \
                and isinstance(node.args[0], ast.Constant):
            found.add(node.args[0].value)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "take" and len(node.args) > 1:
            found.add(node.args[1].value)
    return found


def node_files(root: Path = ROOT) -> dict[str, ast.Module]:
    """Each node's class name (TracedNode for the base) and its file's tree."""
    out = {}
    for path in sorted((root / "nodes").glob("*.py")):
        tree = ast.parse(path.read_text())
        names = [c.name for c in tree.body if isinstance(c, ast.ClassDef) and (
            c.name == "TracedNode" or any(getattr(b, "id", "") == "TracedNode" for b in c.bases))]
        if names:
            assert len(names) == 1, f"{path.name}: one node per file"
            out[names[0]] = tree
    return out



def store_tables() -> str:
    """The turn state by group: each key's type, owner, the nodes that read it, and what it holds."""
    from duckask.utils.turn import GROUPS, owners

    who = owners()
    readers: dict[str, set[str]] = {}
    for node, tree in node_files().items():
        for key in reads(tree):
            readers.setdefault(key, set()).add(node)
    parts = []
    for group in GROUPS:
        body = ast.parse(inspect.getsource(group)).body[0].body
        hints = {a.target.id: ast.unparse(a.annotation.slice.elts[0]) for a in body if isinstance(a, ast.AnnAssign)}
        parts.append(f"## {group.__name__}: {_cell(group.__doc__ or '')}\n")
        rows = ["| key | type | owner | read by | what it holds |", "|---|---|---|---|---|"]
        docs = field_docs(group)
        for key, hint in hints.items():
            kind = hint.replace(" | ", " or ")
            rows.append(f"| `{key}` | `{kind}` | {who[key]} | {', '.join(sorted(readers.get(key, ()))) or 'the API'} "
                        f"| {_cell(docs.get(key, ''))} |")
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


# --------------------------------------------------------------------------- the nodes (design.md section 4)
def _edges(flow_file: Path) -> tuple[list[str], dict[str, list[tuple[str, str]]]]:
    """The nodes in the order ``build_flow`` makes them, and each one's edges ``(action, next node)`` read from its
    wiring (``a - "x" >> b`` and ``a >> b >> c``; both branches of an ``if``)."""
    tree = ast.parse(flow_file.read_text())
    build = next(f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "build_flow")
    cls, order = {}, []
    for node in ast.walk(build):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
            for target, value in zip(node.targets[0].elts, node.value.elts):
                cls[target.id] = value.func.id
                order.append(value.func.id)
    edges: dict[str, list[tuple[str, str]]] = {}

    def end(expr) -> tuple[str, str]:          # the node an expression ends on, and the action it left by
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Sub):
            return cls[expr.left.id], expr.right.value
        if isinstance(expr, ast.BinOp):          # a >> b: b is where a chain goes on from
            return cls[_chain(expr)], "default"
        return cls[expr.id], "default"

    def _chain(expr) -> str:
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.RShift):
            left, action = end(expr.left)
            nxt = expr.right.id
            if (action, cls[nxt]) not in edges.setdefault(left, []):
                edges[left].append((action, cls[nxt]))
            return nxt
        return expr.id

    for node in ast.walk(build):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.BinOp):
            _chain(node.value)
    return order, edges


def nodes_table(root: Path = ROOT) -> str:
    """design.md section 4: one row per node, in the order the graph makes them: what it does (its module
    docstring's first paragraph), where each action leads (the wiring in ``flow/flow.py``) and the keys it writes
    directly or through a hand-off (``utils/turn.py``, the ``@callers`` it is named in)."""
    from duckask.utils import turn

    order, edges = _edges(root / "flow" / "flow.py")
    files = node_files(root)
    paths = {name: path.name for path in (root / "nodes").glob("*.py") for name in files
             if f"class {name}(" in path.read_text()}
    handoffs = {f.__name__: f.callers for f in vars(turn).values() if callable(f) and hasattr(f, "callers")}
    rows = ["| node | what it does | actions → next | writes (through) |", "|---|---|---|---|"]
    for name in order:
        doc = _summary(root / "nodes" / paths[name]).removeprefix(f"{name}: ")
        by_action: dict[str, list[str]] = {}
        for action, nxt in edges.get(name, []):       # an action wired two ways (confirm on/off, tools or none)
            by_action.setdefault(action, []).append(nxt)
        leads = ", ".join(("→ " if a == "default" else f"`{a}` → ") + " or ".join(b)
                          for a, b in by_action.items()) or "end"
        own = sorted(writes(files[name]))
        via = sorted(h for h, who in handoffs.items() if name in who)
        written = ", ".join(f"`{k}`" for k in own) + ("; " if own and via else "") + ", ".join(via)
        rows.append(f"| `{name}` (`{paths[name]}`) | {_cell(doc)} | {leads} | {written or '—'} |")
    return "\n".join(rows) + "\n"


PAGES = {"settings": settings_table, "cli": cli_help, "modules": module_map, "store": store_tables,
         "nodes": nodes_table}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print the generated part of one reference page.")
    ap.add_argument("page", choices=sorted(PAGES))
    print(PAGES[ap.parse_args(argv).page](), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
