"""Settings for duckask: defaults, a YAML config file, environment variables and call options.

Precedence (last wins): defaults < YAML file < environment < keyword options.

Run on its own to print the effective settings::

    python -m duckask.utils.config [--config FILE]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import Any

import yaml

from .settings import Settings, default_cache_dir

__all__ = ["Settings", "default_cache_dir", "load_settings", "check_setting", "check_settings", "with_options",
           "SettingError", "takes", "ENV_VARS", "MAX_QUESTION", "ALIASES"]

#: Environment variables read, and the setting each one fills.
ENV_VARS = {
    "DUCKASK_BASE_URL": "base_url", "OPENAI_BASE_URL": "base_url", "DUCKASK_API_KEY": "api_key",
    "OPENAI_API_KEY": "api_key", "DUCKASK_MODEL": "model", "DUCKASK_MODEL_PATH": "model_path",
    "DUCKASK_CACHE_DIR": "cache_dir", "DUCKASK_THREADS": "n_threads", "DUCKASK_BACKEND": "backend",
    "DUCKASK_DESCRIPTIONS": "descriptions", "DUCKASK_SEMANTIC": "descriptions", "DUCKASK_EXAMPLES": "examples",
    "DUCKASK_ALLOW_WRITES": "allow_writes", "DUCKASK_AUDIT_FILE": "audit_file", "DUCKASK_SMTP_HOST": "smtp_host",
    "DUCKASK_SMTP_USER": "smtp_user", "DUCKASK_SMTP_PASSWORD": "smtp_password", "DUCKASK_STATE": "state",
    "DUCKASK_SOURCE_MODE": "source_mode",
}

#: The longest question any surface takes, in characters: checked where every turn starts (``api.new_shared``).
MAX_QUESTION = 2000


def default_config_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "duckask" / "config.yaml"


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
_CHOICES = {"backend": ("auto", "local", "openai"), "column_pruning": ("budget", "wide", "off"),
            "dialect_notes": ("auto", "off"), "learned": ("auto", "off"), "rerank": ("off", "reviewer"),
            "router": ("auto", "rules", "off"),
            "follow_ups": ("auto", "rules", "llm", "off"), "analyzer": ("auto", "llm", "rules"),
            "clarify": ("rules", "llm", "off"), "answerable": ("on", "off"), "grader": ("auto", "rules", "llm", "off"),
            "plan_path": ("auto", "on", "off"), "templates": ("on", "words", "off"),
            "plan_grammar": ("auto", "on", "off"),
            "min_confidence": ("off", "low", "medium", "high"), "source_mode": ("copy", "live", "auto")}
#: Inclusive bounds of the numeric settings: the costly ones (drafts, retries, row caps, timeouts) are held
#: to what a laptop or a shared server can carry; every other number is at least 0.
_BOUNDS = {"temperature": (0, 2), "resample_temperature": (0, 2), "request_timeout_s": (0.01, 3600),
           "max_http_retries": (0, 10), "n_threads": (1, 256), "n_ctx": (512, 131072), "draft_tokens": (0, 32),
           "max_fix_retries": (0, 5), "max_grader_rounds": (0, 3), "table_llm_threshold": (0, 1000),
           "table_shortlist": (1, 50), "table_sure_band": (0, 1), "resample_drafts": (0, 8),
           "confidence_drafts": (0, 8), "candidates": (0, 8), "schema_char_budget": (0, 200_000),
           "wide_table_columns": (1, 1000), "example_count": (0, 20), "example_threshold": (0, 1),
           "timeout_s": (0.01, 3600), "row_cap": (1, 1_000_000), "time_budget_s": (0, 86_400),
           "export_row_cap": (1, 100_000_000), "smtp_port": (1, 65535), "smtp_timeout_s": (0.01, 600),
           "source_sample_rows": (0, 100_000), "result_bytes": (1024, 4_000_000_000),
           "cell_bytes": (16, 1_000_000_000), "export_bytes": (1024, 100_000_000_000),
           "live_sessions": (1, 100), "live_sessions_per_user": (1, 100)}
#: Values a setting took under an older name, read as today's ("template" now means only a kept pair's reuse).
_RENAMED = {("analyzer", "template"): "rules"}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


class SettingError(ValueError):
    """A setting's value is not one it takes; the message names the setting and what it takes."""


def _kind(name: str) -> str:
    f = _FIELDS[name]
    t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
    if t.startswith("list[str]"):
        return "names"
    return next((k for k in ("bool", "int", "float", "dict", "list", "str") if t.startswith(k)), "str")


def takes(name: str) -> str:
    """What setting ``name`` takes, in words (for error messages and docs)."""
    kind = _kind(name)
    if name in _CHOICES:
        return "one of " + ", ".join(_CHOICES[name])
    if kind == "bool":
        return "true or false"
    if kind in ("int", "float"):
        lo, hi = _BOUNDS.get(name, (0, None))
        what = "a whole number" if kind == "int" else "a number"
        return f"{what} from {lo} to {hi}" if hi is not None else f"{what} of at least {lo}"
    if name == "state":
        return "a postgresql://user:password@host:port/database URL (unset: the local files)"
    if kind == "names":
        return "a list of names or globs (or one text of them, comma-separated)"
    if kind == "list":
        return "a list of tools, each a mapping with a name and a type (utils/tools)"
    return "a mapping of node name to options" if kind == "dict" else "text"


def check_setting(name: str, value: Any) -> Any:
    """``value`` as setting ``name`` holds it (numbers and booleans from text too), within its choices and
    bounds; SettingError naming the setting and what it takes otherwise. The one validation behind the
    config file, the environment, CLI flags, ``ask(**options)``, ``Conversation`` and HTTP ``options``."""
    if name not in _FIELDS:
        raise SettingError(f"unknown setting {name!r}; known: {', '.join(sorted(_FIELDS))}")
    if value is None:
        return None
    kind = _kind(name)
    bad = SettingError(f"{name} takes {takes(name)}, not {value!r}")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        raise bad
    if kind in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise bad
        try:
            number = float(value) if kind == "float" else int(str(value).strip()) if isinstance(value, str) else value
        except ValueError:
            raise bad from None
        if kind == "int" and (isinstance(number, float) and not number.is_integer()):
            raise bad
        number = int(number) if kind == "int" else float(number)
        lo, hi = _BOUNDS.get(name, (0, None))
        if number != number or number < lo or (hi is not None and number > hi):
            raise bad
        return number
    if kind == "dict" and not isinstance(value, dict):
        raise bad
    if kind == "names":
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(t, str) and t.strip() for t in items):
            raise bad
        return [t.strip() for t in items]
    if kind == "list" and not (isinstance(value, list) and all(isinstance(t, dict) and t.get("name") and t.get(
            "type") for t in value)):
        raise bad
    if kind in ("dict", "list"):
        return value
    if name in _CHOICES:
        value = _RENAMED.get((name, value), value)
        if value not in _CHOICES[name]:
            raise bad
        return value
    if not isinstance(value, str):
        raise bad
    if name == "state" and value and not value.strip().lower().startswith(("postgresql://", "postgres://")):
        from duckask.utils.redaction import redact

        raise SettingError(f"state takes {takes(name)}, not {redact(value)!r}")
    return value


#: Other names a setting answers to: ``semantic`` is the semantic file's name in the field's format.
ALIASES = {"semantic": "descriptions"}


def check_settings(values: dict[str, Any]) -> dict[str, Any]:
    """``check_setting`` on each of ``values``; unknown names are one error listing them all."""
    values = {ALIASES.get(k, k): v for k, v in values.items()}
    unknown = sorted(set(values) - set(_FIELDS))
    if unknown:
        raise SettingError(f"unknown setting(s): {', '.join(unknown)}; known: {', '.join(sorted(_FIELDS))}")
    return {k: check_setting(k, v) for k, v in values.items()}


def with_options(settings: Settings, **options: Any) -> Settings:
    """``settings`` with ``options`` applied (None leaves a setting as it is), each checked."""
    chosen = check_settings({k: v for k, v in options.items() if v is not None})
    return dataclasses.replace(settings, **chosen) if chosen else settings


def load_settings(config_file: str | os.PathLike | None = None, **overrides: Any) -> Settings:
    """Build Settings from the YAML file, then the environment, then ``overrides``.

    ``config_file`` defaults to $DUCKASK_CONFIG, else ~/.config/duckask/config.yaml if it exists.
    Unknown keys and bad values raise SettingError (a ValueError) so a typo does not go unnoticed.
    """
    values: dict[str, Any] = {}
    path = config_file or os.environ.get("DUCKASK_CONFIG")
    if path is None and default_config_file().exists():
        path = default_config_file()
    if path:
        p = Path(path).expanduser()
        if not p.exists():
            raise ValueError(f"config file not found: {p}")
        data = yaml.safe_load(p.read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError(f"config file {p} must hold a mapping of settings")
        values.update(data)
    # OPENAI_* are read first so that the DUCKASK_* variables win when both are set.
    for env in sorted(ENV_VARS, key=lambda e: e.startswith("DUCKASK_")):
        if os.environ.get(env):
            values[ENV_VARS[env]] = os.environ[env]
    values.update({k: v for k, v in overrides.items() if v is not None})
    return Settings(**check_settings(values))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print duckask's effective settings.")
    ap.add_argument("--config")
    s = dataclasses.asdict(load_settings(ap.parse_args(argv).config))
    for secret in ("api_key", "smtp_password"):
        if s.get(secret):
            s[secret] = "***"
    print(yaml.safe_dump(s, sort_keys=False), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
