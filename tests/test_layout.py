"""The layout promises: every utility module with a job runs on its own (``python -m``), only the
``duckask`` package is installed, and files stay small enough to read."""
from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import duckask.utils

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(m.name for m in pkgutil.walk_packages(duckask.utils.__path__, "duckask.utils.")
                 if not m.name.endswith("__main__"))
HELPERS = {"duckask.utils.app", "duckask.utils.db", "duckask.utils.tools", "duckask.utils.eval", "duckask.utils.sql",
           "duckask.utils.knowledge", "duckask.utils.dialogue", "duckask.utils.delivery", "duckask.utils.app.terminal",
           "duckask.utils.app.commands", "duckask.utils.app.write_commands", "duckask.utils.app.deliver",
           "duckask.utils.app.queue",
           "duckask.utils.db.sqlite_source", "duckask.utils.db.table_builder",
           "duckask.utils.llm.base", "duckask.utils.llm.endpoint", "duckask.utils.llm.local",
           "duckask.utils.llm.scripted", "duckask.utils.schema.catalog", "duckask.utils.schema.introspect",
           "duckask.utils.schema.values", "duckask.utils.schema.semantic_md", "duckask.utils.sql.edit",
           "duckask.utils.sql.facts", "duckask.utils.settings",
           "duckask.utils.sql.join_repair"}


@pytest.mark.parametrize("name", [m for m in MODULES if m not in HELPERS])
def test_each_utility_runs_on_its_own(name, capsys):
    module = importlib.import_module(name)
    assert callable(getattr(module, "main", None)), f"{name} has no main()"
    with pytest.raises(SystemExit) as done:
        module.main(["--help"])
    assert done.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["duckask.utils.knowledge.examples", "duckask.utils.knowledge.store",
                                  "duckask.utils.schema.descriptions", "duckask.utils.schema.ddl",
                                  "duckask.utils.llm.cache", "duckask.utils.sql.tidy"])
def test_python_m_runs_a_module_once(name):
    """A package that imported its own modules at import time would make ``python -m`` warn that the
    module is found in sys.modules (and run it twice over)."""
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", name, "--help"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "RuntimeWarning" not in done.stderr


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_helper_modules_say_what_they_are_for(name):
    assert (importlib.import_module(name).__doc__ or "").strip(), f"{name} has no docstring"


def test_files_stay_small():
    """About 300 lines a utility file and 120 a node file (docs/design.md)."""
    too_long = [f"{p.relative_to(ROOT)}: {n}" for p in [*ROOT.glob("utils/**/*.py"), *ROOT.glob("flow/*.py")]
                if (n := len(p.read_text().splitlines())) > 300]
    too_long += [f"{p.relative_to(ROOT)}: {n}" for p in ROOT.glob("nodes/*.py")
                 if (n := len(p.read_text().splitlines())) > 120]
    assert not too_long
