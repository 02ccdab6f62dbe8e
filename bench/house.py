"""How the house is laid out, measured from a checkout's files (issue 66's before/after table; no model, nothing run).

    .venv/bin/python bench/house.py                       # this checkout
    .venv/bin/python bench/house.py ../before --json      # another checkout (a git worktree of an older commit)

Each figure is read from the code, so an older commit is measured the same way:

- **files to read for a wrong check**: for a check a grade names, the package files that define it, list it or
  decide something by its name (an identifier or a string of the name, found in the syntax tree), with the file
  that builds the facts it compares with and the file that defines them; the mean over every check of
  ``tests/fixtures/checks.yaml``, and their lines;
- **files to read for a wrong table**: TableSelector's file and the package modules it imports (one hop; not the
  turn state or the node base), and their lines;
- **modules defining checks** and **modules listing checks or deciding by a check's name** (outside the module
  that defines it);
- **places drafting or running SQL themselves**: functions outside the drafts service (``sql/drafts.py``, and the
  primitives' own modules) that call a primitive: ``complete_many``, a ``complete`` with the SQL fence, a database
  ``run`` with a timeout, ``run_repaired``, ``run_pivot``, ``repair``, ``vote`` or ``rerank``;
- **turn keys** and **untyped records** among them (``dict[str, Any]``, ``list[dict[str, Any]]``, a bare ``dict``);
- **Result fields copied by reflection** (a loop over ``fields(cls)`` in ``Result.from_turn``: the fields it copies);
- **utils/db files and lines**.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PRIMITIVES = {"complete_many", "run_repaired", "run_pivot", "vote", "rerank"}
#: The modules that are the primitives or the service itself: calls inside them are not a node's own drafting.
SERVICE = {"utils/sql/drafts.py", "utils/sql/voting.py", "utils/sql/repair.py", "utils/sql/pivot.py",
           "utils/llm/base.py", "utils/llm/batch.py"}


def _package(root: Path) -> dict[str, ast.Module]:
    files = [*root.glob("utils/**/*.py"), *root.glob("nodes/*.py"), *root.glob("flow/*.py"), *root.glob("data/*.py")]
    return {p.relative_to(root).as_posix(): ast.parse(p.read_text()) for p in files}


def _lines(root: Path, files) -> int:
    return sum(len((root / f).read_text().splitlines()) for f in files)


def _mentions(tree: ast.Module, name: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name or isinstance(node, ast.Attribute) and node.attr == name:
            return True
        if isinstance(node, ast.Constant) and node.value == name:
            return True
    return False


def _defines(tree: ast.Module, name: str) -> bool:
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def checks(root: Path, trees: dict[str, ast.Module]) -> dict:
    names = sorted({c["check"] for c in yaml.safe_load((root / "tests/fixtures/checks.yaml").read_text())["cases"]
                    if c.get("check")})
    facts = {f for f, t in trees.items() if any(isinstance(n, ast.FunctionDef) and n.name == "facts_for"
                                                  or isinstance(n, ast.ClassDef) and n.name == "Facts" for n in t.body)}
    defining = {f for f, t in trees.items() if any(_defines(t, n) for n in names)}
    listing = {f for f, t in trees.items() for n in names if _mentions(t, n) and not _defines(t, n)}
    per_check = []
    for n in names:
        files = {f for f, t in trees.items() if _mentions(t, n) or _defines(t, n)} | facts
        files = {f for f in files if not f.startswith(("utils/app/", "utils/eval/", "utils/api/"))}
        per_check.append((len(files), _lines(root, files)))
    return {"files to read for a wrong check (mean)": round(sum(a for a, _ in per_check) / len(per_check), 1),
            "lines to read for a wrong check (mean)": round(sum(b for _, b in per_check) / len(per_check)),
            "modules defining checks": len(defining),
            "modules listing checks or deciding by a check's name": len(listing),
            "checks defined in": sorted(defining), "checks listed or named in": sorted(listing)}


def table(root: Path, trees: dict[str, ast.Module]) -> dict:
    node = "nodes/table_selector.py"
    files = {node}
    for n in ast.walk(trees[node]):
        if isinstance(n, ast.ImportFrom) and n.module and n.module.startswith("duckask."):
            parts = n.module.split(".")[1:]
            if parts[-1] in ("turn", "_base"):
                continue
            path = Path(*parts)
            for candidate in (path.with_suffix(".py"), path / "__init__.py"):
                if candidate.as_posix() in trees:
                    files.add(candidate.as_posix())
    return {"files to read for a wrong table": len(files), "lines to read for a wrong table": _lines(root, files)}


def _drafts_or_runs(call: ast.Call) -> bool:
    f = call.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    keywords = {k.arg for k in call.keywords}
    if name in PRIMITIVES:
        return True
    if name == "run" and "timeout_s" in keywords:
        return True
    if name == "repair" and isinstance(f, ast.Attribute) and getattr(f.value, "id", "") in ("rules", "repair"):
        return True
    fenced = any(k.arg is None and getattr(k.value, "id", "") == "FENCE" for k in call.keywords) or any(
        k.arg == "prefix" and isinstance(k.value, ast.Constant) and "```sql" in str(k.value.value)
        for k in call.keywords)
    return name == "complete" and fenced


def drafting(trees: dict[str, ast.Module]) -> dict:
    places = set()
    for f, tree in trees.items():
        if f in SERVICE or not f.startswith(("nodes/", "utils/api/", "utils/app/", "utils/trust/")):
            continue
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)] + [
            m for c in tree.body if isinstance(c, ast.ClassDef) for m in c.body if isinstance(m, ast.FunctionDef)]
        for fn in functions:          # the outermost function or method: a closure is its function's
            if any(isinstance(c, ast.Call) and _drafts_or_runs(c) for c in ast.walk(fn)):
                places.add(f"{f}:{fn.name}")
    return {"places drafting or running SQL themselves": len(places), "drafting or running in": sorted(places)}


def turn(root: Path) -> dict:
    text = (root / "utils/turn.py").read_text()
    records = (root / "utils/records.py").read_text() if (root / "utils/records.py").exists() else ""
    keys = re.findall(r"^    (\w+): Annotated\[(.+?), \"", text + records, re.M)
    untyped = [k for k, a in keys if re.fullmatch(r"(list\[)?dict(\[str, Any\])?\]?( \| None)?", a.strip())]
    return {"turn keys": len(keys), "untyped records": len(untyped), "untyped": untyped}


def result(root: Path) -> dict:
    """The Result fields ``from_turn`` copies in a loop over ``fields(cls)``: those not set before the loop whose turn
    key (the field's name, or ``FROM_TURN``'s) the turn declares; 0 when each field is read by name."""
    tree = ast.parse((root / "utils/api/result.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Result")
    fields = [n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
              and not n.target.id.startswith("_")]
    from_turn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "from_turn")
    loop = any(isinstance(n, ast.For) and "fields(" in ast.unparse(n.iter) for n in ast.walk(from_turn))
    if not loop:
        return {"Result fields copied by reflection": 0}
    renamed = next((ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                    and getattr(n.targets[0], "id", "") == "FROM_TURN"), {})
    before = next(n for n in ast.walk(from_turn) if isinstance(n, ast.AnnAssign | ast.Assign) and isinstance(
        getattr(n, "value", None), ast.Dict))
    explicit = {k.value for k in before.value.keys if isinstance(k, ast.Constant)}
    keys = {k for k, _ in re.findall(r"^    (\w+): Annotated\[(.+?), \"", (root / "utils/turn.py").read_text(), re.M)}
    return {"Result fields copied by reflection": len([f for f in fields if f not in explicit
                                                        and renamed.get(f, f) in keys])}


def db(root: Path) -> dict:
    files = sorted((root / "utils/db").glob("*.py"))
    return {"utils/db files": len(files), "utils/db lines": _lines(root, [f.relative_to(root) for f in files])}


def measure(root: Path) -> dict:
    trees = _package(root)
    return {**checks(root, trees), **table(root, trees), **drafting(trees), **turn(root), **result(root), **db(root)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=str(ROOT), help="a checkout (default: this one)")
    ap.add_argument("--json", action="store_true", help="everything, with the lists, as JSON")
    args = ap.parse_args(argv)
    figures = measure(Path(args.root))
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        for k, v in figures.items():
            if not isinstance(v, list | dict) and not k.startswith("_"):
                print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
