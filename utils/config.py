"""Settings for duckask: defaults, a YAML config file, environment variables and call options.

Precedence (last wins): defaults < YAML file < environment < keyword options.

Run on its own to print the effective settings::

    python -m duckask.utils.config [--config FILE]
"""
from __future__ import annotations

import argparse
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

#: Environment variables read, and the setting each one fills.
ENV_VARS = {
    "DUCKASK_BASE_URL": "base_url", "OPENAI_BASE_URL": "base_url", "DUCKASK_API_KEY": "api_key",
    "OPENAI_API_KEY": "api_key", "DUCKASK_MODEL": "model", "DUCKASK_MODEL_PATH": "model_path",
    "DUCKASK_CACHE_DIR": "cache_dir", "DUCKASK_THREADS": "n_threads", "DUCKASK_BACKEND": "backend",
    "DUCKASK_DESCRIPTIONS": "descriptions", "DUCKASK_SEMANTIC": "descriptions", "DUCKASK_EXAMPLES": "examples",
    "DUCKASK_ALLOW_WRITES": "allow_writes", "DUCKASK_AUDIT_FILE": "audit_file", "DUCKASK_SMTP_HOST": "smtp_host",
    "DUCKASK_SMTP_USER": "smtp_user", "DUCKASK_SMTP_PASSWORD": "smtp_password",
}

#: The longest question any surface takes, in characters: checked where every turn starts (``api.new_shared``).
MAX_QUESTION = 2000


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "duckask"


def default_config_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "duckask" / "config.yaml"


@dataclass
class Settings:
    # LLM backend: "auto" uses an OpenAI-compatible endpoint when base_url is set, otherwise the
    # embedded model. "openai" forces the endpoint (OpenAI's own when base_url is empty).
    backend: str = "auto"               # auto | local | openai
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None            # endpoint model name; defaults to gpt-4o-mini for OpenAI
    temperature: float = 0.0
    request_timeout_s: float = 60.0
    max_http_retries: int = 4
    # Per-node overrides: {"SQLGenerator": {"model": "...", "temperature": 0.2}}
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    tools: list[dict[str, Any]] = field(default_factory=list)   # read-only outside sources (utils/tools); none: off
    # Embedded model
    model_path: str | None = None       # your own GGUF; default: assembled from the PyPI parts
    cache_dir: str | None = None
    n_threads: int | None = None
    n_ctx: int = 4096
    kv_cache_mb: int = 1024             # RAM for reusable prompt states (0 = only the last prompt)
    prompt_cache_mb: int = 2048         # disk for prompt states that outlive the process (0 = off)
    draft_tokens: int = 0               # prompt-lookup guesses per greedy step (0 = plain: faster on a 2-core CPU)
    # Graph behaviour
    max_fix_retries: int = 2            # ErrorFixer attempts before giving up
    max_grader_rounds: int = 1          # ResponseGrader critiques sent back to SQLGenerator
    time_budget_s: float = 180          # per question: no retry, resample or new path starts past it (0 = off)
    clarify: str = "rules"              # rules | llm | off
    grader: str = "auto"                # auto | rules | llm | off  (auto: rules; llm has not earned it)
    analyzer: str = "auto"              # auto | llm | template  (auto: a sentence from the LLM; eval: template)
    table_llm_threshold: int = 12       # more tables than this: the LLM picks from a short list
    table_shortlist: int = 8            # pre-ranked candidates shown to the LLM
    table_sure_band: float = 0.3        # 1-5 tables over this share of the top score: taken without the LLM (0: off)
    resample_drafts: int = 4            # when the first query fails or finds nothing: sampled drafts to vote on
    resample_temperature: float = 0.7   # their temperature, and that of a retry that repeats a failed query
    schema_char_budget: int = 3600      # column_pruning "budget": above this, wide tables show only relevant columns
    column_pruning: str = "budget"      # budget | wide | off  (wide: every table over wide_table_columns, always)
    wide_table_columns: int = 12        # a wider table shows its relevant columns; the others are named in a line
    descriptions: str | None = None     # the semantic file (alias semantic): dbt's spec (file, dir) or older YAML/md
    plan_path: str = "auto"             # auto | on | off  (auto: on for a semantic file in dbt's format, not a draft)
    plan_grammar: str = "auto"          # auto | on | off: a plan names only catalog names (auto: embedded model)
    min_confidence: str = "off"         # trust (utils/trust/): below this, "unsure" and two candidates shown
    confidence_drafts: int = 0          # sampled drafts drawn for every answer, to measure agreement (a decode each)
    candidates: int = 0                 # sampled drafts beside the greedy one (one batch); the result most give wins
    # Knowledge: verified example question -> SQL pairs
    examples: str | None = None         # YAML/JSONL file of pairs for this database
    knowledge_file: str | None = None   # the store of taught pairs (default <cache_dir>/knowledge.duckdb)
    example_count: int = 3              # pairs shown to SQLGenerator at most
    example_threshold: float = 0.3      # least similarity (0..1) for a pair to be shown
    # Conversations
    router: str = "auto"                # auto | rules | off  (IntentRouter: rules, then one LLM call if undecided)
    follow_ups: str = "auto"            # auto | rules | llm | off  (ResolveFollowUp)
    confirm: bool = False               # show generated SQL and wait for yes / no / edit before it runs
    dialect_notes: str = "auto"         # auto: the DuckDB reference lines a question calls for (sql.reference)
    # Safe execution
    timeout_s: float = 20.0
    row_cap: int = 1000
    memory_limit: str = "2GB"
    # Writes (off by default; docs/design.md "The write path")
    allow_writes: bool = False          # T1 data and T2 schema changes, each only after an explicit approval
    write_tolerance: str = "0"          # rows (or "N%") the actual count may differ from the estimate; else rollback
    audit_file: str | None = None       # the audit log of write attempts (default <cache_dir>/audit.duckdb)
    export_row_cap: int = 1_000_000     # rows an export (--out, /export, the page's download) may hold
    # Delivery by email (SMTP)
    smtp_host: str | None = None
    smtp_port: int = 587
    smtp_user: str | None = None
    smtp_password: str | None = None    # better from $DUCKASK_SMTP_PASSWORD than in a config file
    smtp_starttls: bool = True          # upgrade the connection with STARTTLS before logging in
    smtp_from: str | None = None        # sender address (default: smtp_user, else duckask@<hostname>)
    smtp_timeout_s: float = 30.0

    def node_options(self, node: str) -> dict[str, Any]:
        """Model and temperature for one node (per-node override, else the global ones)."""
        opts = {"model": self.model, "temperature": self.temperature}
        opts.update({k: v for k, v in (self.nodes.get(node) or {}).items() if v is not None})
        return opts

    @property
    def uses_endpoint(self) -> bool:
        return self.backend == "openai" or (self.backend == "auto" and bool(self.base_url))

    @property
    def resolved_cache_dir(self) -> Path:
        return Path(self.cache_dir).expanduser() if self.cache_dir else default_cache_dir()

    @property
    def resolved_knowledge_file(self) -> Path:
        if self.knowledge_file:
            return Path(self.knowledge_file).expanduser()
        return self.resolved_cache_dir / "knowledge.duckdb"

    @property
    def resolved_audit_file(self) -> Path:
        if self.audit_file:
            return Path(self.audit_file).expanduser()
        return self.resolved_cache_dir / "audit.duckdb"


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}
_CHOICES = {"backend": ("auto", "local", "openai"), "column_pruning": ("budget", "wide", "off"),
            "dialect_notes": ("auto", "off"), "router": ("auto", "rules", "off"),
            "follow_ups": ("auto", "rules", "llm", "off"), "analyzer": ("auto", "llm", "template"),
            "clarify": ("rules", "llm", "off"), "grader": ("auto", "rules", "llm", "off"),
            "plan_path": ("auto", "on", "off"), "plan_grammar": ("auto", "on", "off"),
            "min_confidence": ("off", "low", "medium", "high")}
#: Inclusive bounds of the numeric settings: the costly ones (drafts, retries, row caps, timeouts) are held
#: to what a laptop or a shared server can carry; every other number is at least 0.
_BOUNDS = {"temperature": (0, 2), "resample_temperature": (0, 2), "request_timeout_s": (0.01, 3600),
           "max_http_retries": (0, 10), "n_threads": (1, 256), "n_ctx": (512, 131072), "draft_tokens": (0, 32),
           "max_fix_retries": (0, 5), "max_grader_rounds": (0, 3), "table_llm_threshold": (0, 1000),
           "table_shortlist": (1, 50), "table_sure_band": (0, 1), "resample_drafts": (0, 8),
           "confidence_drafts": (0, 8), "candidates": (0, 8), "schema_char_budget": (0, 200_000),
           "wide_table_columns": (1, 1000), "example_count": (0, 20), "example_threshold": (0, 1),
           "timeout_s": (0.01, 3600), "row_cap": (1, 1_000_000), "time_budget_s": (0, 86_400),
           "export_row_cap": (1, 100_000_000), "smtp_port": (1, 65535), "smtp_timeout_s": (0.01, 600)}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


class SettingError(ValueError):
    """A setting's value is not one it takes; the message names the setting and what it takes."""


def _kind(name: str) -> str:
    f = _FIELDS[name]
    t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
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
    if kind == "list" and not (isinstance(value, list) and all(isinstance(t, dict) and t.get("name") and t.get(
            "type") for t in value)):
        raise bad
    if kind in ("dict", "list"):
        return value
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            raise bad
        return value
    if not isinstance(value, str):
        raise bad
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
