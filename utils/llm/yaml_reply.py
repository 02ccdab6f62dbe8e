"""Structured LLM output: parse a YAML reply and validate it against the keys a node needs.

Models wrap YAML in fences, add prose, or get the types wrong; every such reply raises
``ValueError`` with a precise message, so the node's PocketFlow ``max_retries`` can ask again and
``exec_fallback`` can take a degraded path. Nothing here ever returns half-valid data.
"""
from __future__ import annotations

import re
from typing import Any

import yaml

_FENCE = re.compile(r"```(?:ya?ml|json)?\s*\n(.*?)(?:```|$)", re.S | re.I)

_TYPES = {"str": str, "bool": bool, "list": list, "int": int}


def yaml_mapping(reply: str) -> dict[str, Any]:
    """The YAML mapping a model's reply holds (inside its ``` fence when it has one: yaml, json or none named);
    ``ValueError`` saying why there is none. The one reader of the model's YAML: ``parse_yaml`` (the nodes),
    ``semantic.plan.parse_plan`` and ``tools.route.parse_choice`` all start here."""
    text = reply or ""
    m = _FENCE.search(text)
    if m:
        text = m.group(1)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"reply is not valid YAML: {' '.join(str(e).split())[:160]}") from e
    if not isinstance(data, dict):
        raise ValueError(f"reply must be a YAML mapping, got {type(data).__name__}")
    return data


def parse_yaml(reply: str, required: dict[str, type | tuple[type, ...]],
               choices: dict[str, set[str]] | None = None) -> dict[str, Any]:
    """The mapping in ``reply`` with each ``required`` key of the given type (and allowed value)."""
    data = yaml_mapping(reply)
    for key, typ in required.items():
        if key not in data:
            raise ValueError(f"reply lacks the key '{key}'")
        if not isinstance(data[key], typ):
            raise ValueError(f"'{key}' must be {getattr(typ, '__name__', typ)}, got {type(data[key]).__name__}")
    for key, allowed in (choices or {}).items():
        val = str(data.get(key, "")).strip().lower()
        if val not in allowed:
            raise ValueError(f"'{key}' must be one of {sorted(allowed)}, got {data.get(key)!r}")
        data[key] = val
    return data
