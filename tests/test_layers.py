"""Layers point one way and no package's modules import each other in a circle, held by import-linter (the contracts
in pyproject.toml's ``[tool.importlinter]``; grimp builds the graph of every import, a lazy one inside a function
too). duckask's package-dir mapping (``duckask`` is ``flow/``, ``duckask.utils`` is ``utils/``) is not a tree grimp
can walk, so the test lays the sources out as the wheel installs them (symlinks in a temporary folder) and runs
``lint-imports`` there; a broken contract fails with import-linter's own report of the imports that break it."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = shutil.which("lint-imports", path=str(Path(sys.executable).parent))


def wheel_tree(where: Path) -> Path:
    """``where/duckask`` laid out as the wheel installs it (pyproject's package-dir), by symlinks to the sources."""
    pkg = where / "duckask"
    pkg.mkdir(parents=True)
    for f in (ROOT / "flow").glob("*.py"):
        (pkg / f.name).symlink_to(f)
    for name in ("nodes", "utils", "data"):
        (pkg / name).symlink_to(ROOT / name, target_is_directory=True)
    return where


@pytest.mark.skipif(LINT is None, reason="import-linter is not installed (the test extra has it)")
def test_the_import_contracts_are_kept(tmp_path):
    tree = wheel_tree(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([LINT, str(ROOT / "pyproject.toml"), "--no-cache"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    analyzed = re.search(r"Analyzed (\d+) files", report)
    assert "0 broken" in report and analyzed and int(analyzed.group(1)) >= 150    # the whole package, not an empty one


MYPY = shutil.which("mypy", path=str(Path(sys.executable).parent))


@pytest.mark.slow       # about 60 s: the checker reads the whole package
@pytest.mark.skipif(MYPY is None, reason="mypy is not installed (the test extra has it)")
def test_the_whole_package_type_checks(tmp_path):
    """mypy with ``check_untyped_defs`` over every module of nodes/, flow/, utils/ and data/ ([tool.mypy] in
    pyproject.toml): each key a node reads or writes against the turn's declared type (``utils/turn.py``), each
    hand-off's arguments, and every function body, annotated or not."""
    tree = wheel_tree(tmp_path)
    done = subprocess.run([MYPY, "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / ".mypy"),
                           "--python-executable", sys.executable, "-p", "duckask"], capture_output=True, text=True,
                          cwd=tree, timeout=900)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    checked = re.search(r"no issues found in (\d+) source files", report)
    sources = [p for folder in ("flow", "nodes", "utils", "data") for p in (ROOT / folder).rglob("*.py")]
    assert checked and int(checked[1]) >= len(sources), report          # every module was read
