"""What the documentation names exists (issue 55): every repository path, every ``python -m duckask...`` module and
every ``duckask <command>`` in README.md and docs/*.md. A description that names a file, a module without a main or
a command that is gone fails here, not in a reader's terminal."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from duckask.utils.app.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
TOP = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
#: The package's import names and where they live (pyproject.toml's package-dir mapping).
PACKAGE_DIRS = {"duckask": ROOT / "flow", "duckask.nodes": ROOT / "nodes", "duckask.utils": ROOT / "utils",
                "duckask.data": ROOT / "data"}
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.S)


def _command_lines(text: str) -> list[str]:
    """The lines of a page's code (spans and blocks) that run duckask: ``duckask ...`` or ``$ duckask ...``."""
    lines = (line for m in CODE.finditer(text) for line in m.group(0).strip("`").splitlines())
    return [line for line in lines if re.match(r"\s*(?:\$\s+)?duckask [a-z]", line)]


def _module_file(name: str) -> Path | None:
    base = max((k for k in PACKAGE_DIRS if name == k or name.startswith(k + ".")), key=len, default=None)
    if base is None:
        return None
    rest = name[len(base):].lstrip(".").split(".") if name != base else []
    path = PACKAGE_DIRS[base].joinpath(*rest)
    for candidate in (path / "__main__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _refs(kind: str) -> list[tuple[str, str]]:
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        where = str(page.relative_to(ROOT))
        if kind == "module":
            out += [(where, m) for m in re.findall(r"python3? -m (duckask[\w.]*)", text)]
        elif kind == "command":
            out += [(where, re.search(r"duckask ([a-z][a-z-]*)", line)[1]) for line in _command_lines(text)]
        else:
            for ref in re.findall(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|ya?ml|md|json|jsonl|sql|toml|txt))`", text):
                if ref.split("/")[0] in TOP and "<" not in ref:
                    out.append((where, ref))
    return sorted(set(out))


@pytest.mark.parametrize("page, module", _refs("module"))
def test_every_python_m_module_named_runs(page, module):
    found = _module_file(module)
    assert found is not None, f"{page} names python -m {module}, which is not a module of duckask"
    assert found.name == "__main__.py" or '__name__ == "__main__"' in found.read_text(), \
        f"{page} names python -m {module}, which has no main block"


COMMANDS = set(build_parser()._subparsers._group_actions[0].choices)      # the duckask subcommands


@pytest.mark.parametrize("page, command", _refs("command"))
def test_every_duckask_command_named_exists(page, command):
    assert command in COMMANDS, f"{page} names `duckask {command}`; the commands are {sorted(COMMANDS)}"


@pytest.mark.parametrize("page, path", _refs("path"))
def test_every_repository_path_named_exists(page, path):
    assert (ROOT / path).exists() or any(ROOT.glob(path)), f"{page} names {path}, which is not in the repository"


def test_the_pages_name_enough_to_be_worth_checking():
    assert len(_refs("module")) >= 5 and len(_refs("command")) >= 20 and len(_refs("path")) >= 100
