"""The layout promises: the modules that are tools run on their own (``python -m``) and only they have a main(),
only the ``duckask`` package is installed, and files stay small enough to read."""
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
#: The modules that are tools of their own (``python -m duckask.utils...``): only these have a main().
TOOLS = {"duckask.utils.config", "duckask.utils.llm", "duckask.utils.llm.model_store", "duckask.utils.llm.cache",
         "duckask.utils.sql.reference", "duckask.utils.db.models", "duckask.utils.writes.tiers",
         "duckask.utils.state.writes",
         "duckask.utils.app.import_command", "duckask.utils.semantic.airtable", "duckask.utils.airtable.api",
         "duckask.utils.airtable.schema", "duckask.utils.delivery.mail", "duckask.utils.delivery.export",
         "duckask.utils.tools.registry", "duckask.utils.knowledge.examples",
         "duckask.utils.trust.confidence", "duckask.utils.app.cli",
         "duckask.utils.app.mcp_server", "duckask.utils.semantic",
         "duckask.utils.trust"}


def test_a_main_only_where_a_module_is_a_tool():
    """A main() elsewhere would be a second way in that nothing documents, and it drew surfaces' imports into
    modules below them (present, result and trust_view once imported the API for theirs)."""
    with_main = {m for m in MODULES if callable(getattr(importlib.import_module(m), "main", None))}
    assert with_main == TOOLS


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_each_tool_runs_on_its_own(name, capsys):
    module = importlib.import_module(name)
    with pytest.raises(SystemExit) as done:
        module.main(["--help"])
    assert done.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.slow           # a python -m subprocess each
@pytest.mark.parametrize("name", ["duckask.utils.knowledge.examples", "duckask.utils.app.import_command",
                                  "duckask.utils.semantic", "duckask.utils.llm.cache",
                                  "duckask.utils.sql.reference"])
def test_python_m_runs_a_module_once(name):
    """A package that imported its own modules at import time would make ``python -m`` warn that the
    module is found in sys.modules (and run it twice over)."""
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-m", name, "--help"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "RuntimeWarning" not in done.stderr


@pytest.mark.parametrize("name", MODULES)
def test_every_module_says_what_it_is_for(name):
    assert (importlib.import_module(name).__doc__ or "").strip(), f"{name} has no docstring"


def test_files_stay_small():
    """At most 400 lines a file of the product and its benchmarks, 120 a node file (docs/design.md)."""
    code = [*ROOT.glob("utils/**/*.py"), *ROOT.glob("flow/*.py"), *ROOT.glob("data/*.py"), *ROOT.glob("bench/*.py")]
    too_long = [f"{p.relative_to(ROOT)}: {n}" for p in code if (n := len(p.read_text().splitlines())) > 400]
    too_long += [f"{p.relative_to(ROOT)}: {n}" for p in ROOT.glob("nodes/*.py")
                 if (n := len(p.read_text().splitlines())) > 120]
    assert not too_long


def test_every_package_is_in_the_wheel():
    """pyproject.toml lists the packages a regular ``pip install .`` builds: a new folder missing there is missing
    from every non-editable install (the editable one still finds it, so nothing else would notice)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {"duckask.utils." + p.parent.relative_to(ROOT / "utils").as_posix().replace("/", ".")
               for p in (ROOT / "utils").rglob("__init__.py") if p.parent != ROOT / "utils"}
    assert folders - {"duckask.utils.app.static"} <= listed, sorted(folders - listed)
