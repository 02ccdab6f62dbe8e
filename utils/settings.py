"""Every setting's name, type, default and meaning, in one dataclass. The reference page
docs/reference/settings.md is generated from it; how they are loaded and checked: ``config``."""
from __future__ import annotations

import ast
import inspect
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "duckask"


@dataclass
class Settings:
    """Every setting: its type, its default and (the string under it) what it does; `field_docs` reads them."""
    backend: str = "auto"
    """`auto` (endpoint when `base_url` is set, else embedded), `local`, `openai`."""
    base_url: str | None = None
    """The OpenAI-compatible endpoint."""
    api_key: str | None = None
    """Its key."""
    model: str | None = None
    """The endpoint's model (`gpt-4o-mini` when unset)"""
    temperature: float = 0.0
    """Sampling temperature of every node unless `nodes` says otherwise."""
    request_timeout_s: float = 60.0
    """Endpoint timeout per call."""
    max_http_retries: int = 4
    """Attempts on transient endpoint errors."""
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per-node `model` / `temperature`, e.g. `{ResponseGrader: {model: gpt-4o}}`."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """Read-only outside sources, each `{name, type, ...}` (`http_json`, `searxng`, or a plug-in's type;
    `utils/tools/`); ChooseSource is in the graph only with some."""
    # Embedded model
    model_path: str | None = None
    """Your own GGUF for the embedded backend (default: assembled from the PyPI parts)"""
    cache_dir: str | None = None
    """Model, catalogs, imported databases, eval records, reply cache (default: `$XDG_CACHE_HOME/duckask` or
    `~/.cache/duckask`)"""
    n_threads: int | None = None
    """Embedded model threads (default: cores, at most 8)"""
    n_ctx: int = 4096
    """Embedded model context."""
    kv_cache_mb: int = 1024
    """RAM for reusable prompt states (0: only the last prompt)"""
    prompt_cache_mb: int = 2048
    """Disk for prompt states that outlive the process (`<cache_dir>/prompt-states`; 0: off)"""
    draft_tokens: int = 0
    """Prompt-lookup guesses checked per greedy decoding step (0: plain greedy decoding; the text is the same
    either way; 8 measured 1.9 s a question slower on the 2-core host)"""
    # Graph behaviour
    max_fix_retries: int = 2
    """ErrorFixer's LLM retries before giving up."""
    max_grader_rounds: int = 1
    """ResponseGrader critiques sent back to SQLGenerator."""
    time_budget_s: float = 180
    """Seconds a question may take (0: no budget; 180 s is about 5x CAL on the development machine). Checked
    between steps (`TracedNode.over_budget`, from `Context.started`): past it ResponseGrader ends with the
    answer so far and its objection (`exhausted`), ErrorFixer gives up after the free repairs, SQLExecutor sends
    a failed plan to the error report instead of the SQL path, AssessConfidence draws no drafts; one step
    already running finishes (a decode is not cut)"""
    clarify: str = "rules"
    """`rules`, `llm`, `off`."""
    answerable: str = "on"
    """On / off: say "the data cannot answer this" when the question asks for advice or an opinion, names nothing the
    database holds, or counts or measures something nothing holds (`trust/answerable.py`; no LLM call)"""
    grader: str = "auto"
    """`auto` (= `rules`: the LLM grader did not reach 50 % recall with ≤ 10 % false fails on the embedded
    model, and is unmeasured on endpoints), `rules`, `llm`, `off`."""
    analyzer: str = "auto"
    """`auto` (a checked sentence from the LLM; the rules' sentence in `eval`), `rules` (a sentence written by
    rules, no model call; `template`, its older name, is read as `rules`), `llm`."""
    table_llm_threshold: int = 12
    """Above this many tables the LLM picks from a shortlist."""
    table_shortlist: int = 8
    """Pre-ranked tables shown to the LLM."""
    table_sure_band: float = 0.3
    """1-5 tables scoring over this share of the top score are taken without the LLM (0: always ask it)"""
    resample_drafts: int = 4
    """Drafts sampled when the first query fails or finds nothing (0: off)"""
    resample_temperature: float = 0.7
    """Their temperature, and that of a retry that repeats a failed query."""
    schema_char_budget: int = 3600
    """`column_pruning: budget`: above this many characters, wide tables show only their relevant columns."""
    column_pruning: str = "budget"
    """`budget`, `wide` (every table wider than `wide_table_columns` shows its relevant columns and names the
    others in one line), `off`."""
    wide_table_columns: int = 12
    """`column_pruning: wide`: columns a wide table shows."""
    descriptions: str | None = None
    """The semantic file (alias `semantic`, `--semantic`): dbt's semantic model spec, a file or a directory
    (`utils/semantic/`), or the older YAML/markdown file (`utils/semantic/descriptions.py`)"""
    templates: str = "on"
    """On / words / off: a question that is a kept pair's with other literals (a year, a name that is a value of its
    column) is answered by the pair's SQL with them put in, without the model (`nodes/match_template.py`); on: also
    a question that asks the same worded otherwise (`knowledge.reach`); words: only the same words"""
    plan_path: str = "auto"
    """Auto / on / off: the plan path for questions that name a metric (auto: on for a semantic file in dbt's
    format that is not a draft)"""
    plan_grammar: str = "off"
    """auto / on / off: hold a plan to the semantic file's names while decoding (`semantic.grammar`; auto and on:
    the embedded model only, endpoints ignore grammars). Off by default: measured on the Lahman demo (25
    questions, same code), on gave 24 % and off 44 %: a plan the model could not write within the names fails
    its checks and the SQL path answers; within the grammar it becomes a valid plan of the wrong metric."""
    min_confidence: str = "off"
    """Off / low / medium / high (`--min-confidence`): an answer below it is `unsure`, the two best candidates
    shown with their SQL instead of one answer."""
    confidence_drafts: int = 0
    """Sampled drafts drawn for every answer to count how many agree with it (0-8; one decode each)"""
    candidates: int = 0
    """Sampled SQL drafts beside the greedy one, decoded in one batch; all run, the result most give is the
    answer, the other groups wait for the checks (0-8)"""
    rerank: str = "off"
    """Off / reviewer: with two or more drafts' results, order them by how well each reads back to the question (the
    model's probability of the question given the query and its result, plus the log of the drafts agreeing) instead of
    by the vote alone (`sql/voting.rerank`; bench/rerank.py measures both)"""
    examples: str | None = None
    """YAML/JSONL file of verified question/SQL pairs for the database (`knowledge/examples.py`)"""
    knowledge_file: str | None = None
    """The store of taught pairs (default: `<cache_dir>/knowledge.duckdb`)"""
    learned: str = "auto"
    """Auto / off: show pairs `duckask learn` synthesized and verified for the database as examples (after the taught
    ones; never as templates). Auto: when the database has been learned"""
    example_count: int = 3
    """Example pairs shown to SQLGenerator at most."""
    example_threshold: float = 0.3
    """Least similarity (0..1) for a pair to be shown."""
    # Conversations
    router: str = "auto"
    """IntentRouter: `auto` (rules, then one LLM word when they cannot decide; `off` in `eval`), `rules`
    (undecided turns are data), `off` (every turn is data)"""
    follow_ups: str = "auto"
    """ResolveFollowUp: `auto` (rules, then the LLM), `rules`, `llm` (every follow-up), `off`."""
    confirm: bool = False
    """Show generated SQL and wait for yes / no / edit before it runs (`--confirm`); without a terminal the
    Result is `pending`."""
    dialect_notes: str = "auto"
    """`auto`: SQLGenerator shows the DuckDB reference lines the question or tables call for
    (`sql/reference.py`: the friendly-SQL sheet and the functions the question names)"""
    # Safe execution
    timeout_s: float = 20.0
    """The safe executor's wall-clock limit per query."""
    row_cap: int = 1000
    """Rows fetched at most."""
    result_bytes: int = 16_000_000
    """Bytes a result may hold at most (its cells' text and bytes, summed): the fetch stops there, and the result
    says truncated and why."""
    cell_bytes: int = 1_000_000
    """Bytes one value may hold at most: a longer one is cut, ending in `… [cut: N bytes]`."""
    memory_limit: str = "2GB"
    """DuckDB memory limit of the connection."""
    allow_writes: bool = False
    """T1 (INSERT/UPDATE/DELETE) and T2 (CREATE TABLE/VIEW/INDEX, ALTER) statements, each only after an explicit
    approval (`--allow-writes`); T3 is blocked whatever this says."""
    write_tolerance: str = "0"
    """Rows (`"5"`) or a share (`"10%"`) by which a write's actual row count may differ from its estimate before
    it is rolled back."""
    audit_file: str | None = None
    """The audit log of every write attempt (never the user's database) (default: `<cache_dir>/audit.duckdb`)"""
    state: str | None = None
    """Where taught pairs, the audit log and pending writes live: unset, the local files above (pending writes in
    the server's memory); `postgresql://...`, one Postgres database several servers share (`--state`)"""
    # Remote sources (--db postgresql://...)
    source_max_age_s: float = 86400.0
    """A remote database's local copy is read again when older than this (0: only on `duckask import URL
    --refresh`)"""
    source_tables: list[str] = field(default_factory=list)
    """The tables of a remote database to copy, by name or glob (`sales_*`; default: every table and view)"""
    source_mode: str = "auto"
    """A remote database (`--source-mode`): `copy` (its tables into a local DuckDB copy, answered there), `live`
    (questions run in the database itself, through ADBC; a local catalog only), `auto` (live above
    `source_live_rows`, else copy)"""
    source_live_rows: int = 2_000_000
    """`auto`: a source holding more rows than this (its own estimate) is asked live, a smaller one copied."""
    live_sessions: int = 4
    """Live: sessions duckask opens on the source at once, whoever asks (more queue up to the query's timeout)."""
    live_sessions_per_user: int = 2
    """Live: of those, how many one user's queries may hold."""
    source_sample_rows: int = 1000
    """Live: rows of each table kept in the local catalog (sample values for the prompt)."""
    export_row_cap: int = 1_000_000
    """Rows a file export may hold: a result cut by `row_cap` is run again up to this many rows for `--out`,
    `/export`, `to_file` and the page's download."""
    export_bytes: int = 1_000_000_000
    """Bytes a file export may hold (as `result_bytes` for an answer)."""
    # Delivery by email (SMTP)
    smtp_host: str | None = None
    """The SMTP server that `--email` / `/email` / `Result.email()` deliver through."""
    smtp_port: int = 587
    """Its port."""
    smtp_user: str | None = None
    """Login name (no login when unset)"""
    smtp_password: str | None = None
    """Its password (better `DUCKASK_SMTP_PASSWORD` than a config file)"""
    smtp_starttls: bool = True
    """Upgrade the connection with STARTTLS before logging in."""
    smtp_from: str | None = None
    """The sender address (default: `smtp_user`, else `duckask@<hostname>`)"""
    smtp_timeout_s: float = 30.0
    """SMTP connection timeout."""

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
        """The cache folder, made private to this user (``private_dir``) the first time a process uses it."""
        return private_dir(Path(self.cache_dir).expanduser() if self.cache_dir else default_cache_dir())

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



_PRIVATE: set[Path] = set()


def private_dir(path: Path) -> Path:
    """``path`` as a folder only its owner may enter (0700), made if missing; once per process, the files already in
    it are made 0600 and its folders 0700 (what a catalog's sample rows, value lists, copies, the audit and the kept
    pairs hold is no other local user's). A folder of another owner is left as it is (nothing can be changed there)."""
    if path in _PRIVATE:
        return path
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        if path.stat().st_uid == os.getuid():
            path.chmod(0o700)
            for root, dirs, files in os.walk(path):
                for name in dirs:
                    _tighten(Path(root, name), 0o700)
                for name in files:
                    _tighten(Path(root, name), 0o600)
    except OSError:             # a read-only or foreign folder: used as it is, as before
        return path
    _PRIVATE.add(path)
    return path


def _tighten(p: Path, mode: int) -> None:
    try:
        st = p.lstat()
        if st.st_uid == os.getuid() and not p.is_symlink() and st.st_mode & 0o777 & ~mode:
            p.chmod(st.st_mode & 0o777 & mode)
    except OSError:
        pass


def field_docs(cls: type = Settings) -> dict[str, str]:
    """The string under each field of ``cls``, by field name (what the field does, in words)."""
    tree = ast.parse(inspect.getsource(cls)).body[0]
    assert isinstance(tree, ast.ClassDef)           # the source of a class
    body = tree.body
    return {a.target.id: " ".join(b.value.value.split()) for a, b in zip(body, body[1:])
            if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name)      # a field: ``name: type``
            and isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str)}
