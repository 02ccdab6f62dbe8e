"""The ``tools`` setting turned into tools: built-in types (``http_json``, ``searxng``) and plug-ins.

A plug-in is a package that declares an entry point in the ``duckask.tools`` group, named after its type,
pointing at a callable that takes the tool's config (a dict) and returns a ``Tool`` (``utils/tools/base``)::

    [project.entry-points."duckask.tools"]
    weather = "my_package.weather:WeatherTool"

Tools are off by default: with no ``tools`` setting the router never leaves the database. Names must be
unique words, and not ``database`` or ``none`` (the router's other answers). ``ordered`` puts them in the
order of preference the router follows: APIs (as listed), then web search.

Run on its own to check a config file's tools::

    python -m duckask.utils.tools.registry --config config.yaml
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points

from duckask.utils.tools.base import Tool
from duckask.utils.tools.http_api import HttpJsonTool
from duckask.utils.tools.searxng import SearxngTool

BUILT_IN: dict[str, Callable[[dict], Tool]] = {"http_json": HttpJsonTool, "searxng": SearxngTool}
RESERVED = {"database", "none"}
GROUP = "duckask.tools"


def factories() -> dict[str, Callable[[dict], Tool] | EntryPoint]:
    """Every tool type there is: the built-ins, then plug-ins (loaded when used; none replaces a built-in)."""
    out: dict = dict(BUILT_IN)
    for ep in entry_points(group=GROUP):
        out.setdefault(ep.name, ep)
    return out


def load_tools(configs: list[dict]) -> list[Tool]:
    """Tools from the ``tools`` setting, in the router's order; ValueError naming the entry that is wrong."""
    made: list[Tool] = []
    kinds = factories()
    for i, config in enumerate(configs or []):
        name, kind = config.get("name"), config.get("type")
        if not isinstance(name, str) or not name.isidentifier() or name in RESERVED:
            raise ValueError(f"tools[{i}]: name must be a word (letters, digits, _) other than "
                             f"{' or '.join(sorted(RESERVED))}, not {name!r}")
        if name in {t.name for t in made}:
            raise ValueError(f"tools[{i}]: a second tool named {name!r}")
        if kind not in kinds:
            raise ValueError(f"tools[{i}] ({name}): unknown type {kind!r}; known: {', '.join(sorted(kinds))} "
                             f"(plug-ins add types through the {GROUP!r} entry point group)")
        factory = kinds[kind]
        tool = (factory.load() if isinstance(factory, EntryPoint) else factory)(config)
        if not isinstance(tool, Tool):
            raise ValueError(f"tools[{i}] ({name}): type {kind!r} did not make a duckask Tool")
        made.append(tool)
    return ordered(made)


def ordered(tools: list[Tool]) -> list[Tool]:
    """APIs first (in the order configured), then web search: the order the router prefers them in."""
    return [t for t in tools if t.kind != "web"] + [t for t in tools if t.kind == "web"]


def main(argv: list[str] | None = None) -> int:
    from duckask.utils.config import load_settings

    ap = argparse.ArgumentParser(description="List the tools a config file turns on, in the router's order.")
    ap.add_argument("--config", help="the YAML settings file (default: DUCKASK_CONFIG)")
    args = ap.parse_args(argv)
    try:
        tools = load_tools(load_settings(args.config).tools)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not tools:
        print("no tools: answers come from the database only (add a `tools:` list to the config to turn some on)")
    for t in tools:
        print(t.describe())
    return 0


if __name__ == "__main__":
    sys.exit(main())
