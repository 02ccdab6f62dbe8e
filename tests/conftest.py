"""Shared fixtures for duckask's tests.

Nothing here loads the embedded model: graph and CLI tests inject a ``ScriptedLLM``.

Cache isolation: tests that request ``isolated_env`` (directly, or through ``settings``) run with
``DUCKASK_CACHE_DIR`` pointing at a per-session temp dir, no user config file and no endpoint
variables, so they never write to ``~/.cache/duckask`` or pick up a developer's settings. The
environment is *not* changed globally: the embedded model file lives in the real cache
(``REAL_CACHE_DIR``), and tests marked ``model`` find it through the ``model_path`` fixture.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb
import pytest

from duckask.utils.config import Settings, default_cache_dir, load_settings
from duckask.utils.llm.model_store import GGUF_NAME

#: The sibling ``shared`` folder (benchmarks, data) next to this repository in the development workspace, or
#: ``$DUCKASK_SHARED``. A user's fresh clone does not have it: every test that reads it skips then (with
#: ``requires_shared``, or ``pytest.skip`` naming the missing path), and CI checks that by running those test
#: files with DUCKASK_SHARED pointing at a folder that does not exist (.ci/run).
SHARED = Path(os.environ.get("DUCKASK_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")

requires_shared = pytest.mark.skipif(
    not SHARED.is_dir(),
    reason=f"../shared is absent ({SHARED} not found): it exists only in the development workspace, "
           "not in a user's fresh clone",
)

#: The real cache dir (read before any test changes the environment): where the embedded model is.
REAL_CACHE_DIR = Path(os.environ.get("DUCKASK_CACHE_DIR") or default_cache_dir()).expanduser()
#: The assembled embedded model, if it has been built (``duckask model``).
MODEL_FILE = Path(os.environ["DUCKASK_MODEL_PATH"]).expanduser() if os.environ.get("DUCKASK_MODEL_PATH") \
    else REAL_CACHE_DIR / "models" / GGUF_NAME

# Variables that would change which backend, config or cache a test sees.
_ENV_TO_CLEAR = ("DUCKASK_BASE_URL", "OPENAI_BASE_URL", "DUCKASK_API_KEY", "OPENAI_API_KEY", "DUCKASK_MODEL",
                 "DUCKASK_MODEL_PATH", "DUCKASK_THREADS", "DUCKASK_BACKEND", "DUCKASK_CONFIG")


def pytest_configure(config: pytest.Config) -> None:
    # duckask.flow silences PocketFlow's "Flow ends:" warning for its terminal actions with a
    # module-level filter, which pytest's per-test warning capture resets.
    config.addinivalue_line("filterwarnings", "ignore:Flow ends:UserWarning")


def clean_env(cache: Path, **extra: str) -> dict[str, str]:
    """The environment for a duckask subprocess: no DUCKASK_*/OPENAI_* variables of the developer's,
    the cache in ``cache``, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DUCKASK_", "OPENAI_"))}
    env.update(DUCKASK_CACHE_DIR=str(cache), **extra)
    return env


@pytest.fixture
def model_path() -> Path:
    """The embedded model file in the real cache; skips the test when it has not been assembled."""
    if not MODEL_FILE.is_file():
        pytest.skip(f"embedded model not found at {MODEL_FILE} (run `duckask model` first)")
    return MODEL_FILE


def embedded_model_path() -> str:
    """The embedded model's path for tests that run it; skips when llama-cpp-python or the model is missing."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'duckask[local]')")
    from duckask.utils.llm.model_store import ModelError
    from duckask.utils.llm.model_store import model_path as _path

    try:
        return str(_path(load_settings()))
    except ModelError as e:
        pytest.skip(f"embedded model not available: {e}")


@pytest.fixture(scope="module")
def model_opts(tmp_path_factory) -> dict:
    """``ask`` options for a test with the embedded model: its file, a cache of the module's own, and no time budget
    (``time_budget_s: 0``): an answer under test must not depend on how loaded the machine is (a slowed turn once
    met the default budget before its retry and failed in CI, passing alone)."""
    return {"model_path": embedded_model_path(), "cache_dir": str(tmp_path_factory.mktemp("cache")),
            "time_budget_s": 0}


@pytest.fixture(scope="session")
def test_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache dir for the whole session (catalog and import caches land here)."""
    return tmp_path_factory.mktemp("duckask-cache")


@pytest.fixture
def isolated_env(monkeypatch: pytest.MonkeyPatch, test_cache_dir: Path, tmp_path_factory) -> Path:
    """DUCKASK_CACHE_DIR -> a temp dir, no config file, no endpoint settings. Returns the cache dir."""
    for var in _ENV_TO_CLEAR:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("DUCKASK_CACHE_DIR", str(test_cache_dir))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("xdg-config")))
    return test_cache_dir


@pytest.fixture
def settings(isolated_env: Path) -> Settings:
    """Default settings with the cache in a temp dir."""
    s = load_settings(None, cache_dir=str(isolated_env))
    assert s.resolved_cache_dir == isolated_env
    return s


TEAMS = [(1, "Lakers", "Los Angeles"), (2, "Celtics", "Boston"), (3, "Bulls", "Chicago")]
PLAYERS = [
    (1, "LeBron James", 1, 30),
    (2, "Anthony Davis", 1, 25),
    (3, "Austin Reaves", 1, 15),
    (4, "Jayson Tatum", 2, 28),
    (5, "Jaylen Brown", 2, 22),
    (6, "Zach LaVine", 3, 24),
]
ARENAS = [(1, "Crypto.com Arena", 1, 19068), (2, "TD Garden", 2, 19156), (3, "United Center", 3, 20917)]


def demo_db() -> str:
    """The Lahman demo database's path (built on first use), named as the library needs: it has no default."""
    from duckask.data.lahman import demo_db_path

    return str(demo_db_path())


def build_small_db(path: Path) -> Path:
    """teams <- players, teams <- arenas: three small related tables."""
    con = duckdb.connect(str(path))
    try:
        con.execute("CREATE TABLE teams (id INTEGER PRIMARY KEY, name VARCHAR, city VARCHAR)")
        con.execute("CREATE TABLE players (id INTEGER PRIMARY KEY, name VARCHAR, "
                    "team_id INTEGER REFERENCES teams(id), points INTEGER)")
        con.execute("CREATE TABLE arenas (id INTEGER PRIMARY KEY, name VARCHAR, "
                    "team_id INTEGER REFERENCES teams(id), capacity INTEGER)")
        con.executemany("INSERT INTO teams VALUES (?, ?, ?)", TEAMS)
        con.executemany("INSERT INTO players VALUES (?, ?, ?, ?)", PLAYERS)
        con.executemany("INSERT INTO arenas VALUES (?, ?, ?, ?)", ARENAS)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path


@pytest.fixture(scope="session")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny DuckDB file: teams(id, name, city), players(id, name, team_id -> teams, points),
    arenas(id, name, team_id -> teams, capacity). Read-only for the tests (duckask opens it read-only)."""
    return build_small_db(tmp_path_factory.mktemp("smalldb") / "nba.duckdb")


def duckdb_file(path: Path, *statements: str) -> Path:
    """A DuckDB file at ``path`` made by ``statements`` (a test's own small database)."""
    with duckdb.connect(str(path)) as con:
        for sql in statements:
            con.execute(sql)
    return path


def ask_with_drafts(db, question: str, drafts: list[str], replies: dict | None = None, **options):
    """A question through the whole graph with SQLGenerator's drafts scripted (and other nodes' ``replies``; rules
    for the router, the template analyzer, no clarifying): (the Result, the scripted LLM, whose ``calls`` hold each
    prompt)."""
    from duckask.utils.api import ask
    from duckask.utils.llm import ScriptedLLM

    llm = ScriptedLLM({"SQLGenerator": drafts, **(replies or {})})
    return ask(question, db=str(db), llm=llm, router="rules", analyzer="rules", clarify="off", **options), llm


def bench_module(name: str):
    """A script of bench/ (not a package) loaded as a module, for tests of its parts."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{name}", Path(__file__).resolve().parents[1] / "bench" /
                                                  f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module", params=["file", "export_dir"])
def db_source(request, tmp_path_factory, test_cache_dir) -> tuple[str, list[Path]]:
    """A database to attack (``attack_cases.make_db``: table ``t``, view ``v``), as a DuckDB file or as
    an EXPORT DATABASE folder (imported into the test cache). Returns (db argument, folders to watch)."""
    from attack_cases import make_db

    from duckask.utils.db.database import resolve_db_file

    root = tmp_path_factory.mktemp("attacked")
    db_file = make_db(root / "data.duckdb")
    if request.param == "file":
        return str(db_file), [root]
    export = root / "export"
    with duckdb.connect(str(db_file)) as con:
        con.execute(f"EXPORT DATABASE '{export}'")
    db_file.unlink()
    imported = resolve_db_file(export, Settings(cache_dir=str(test_cache_dir)))  # the cache isolated_env uses
    assert imported.parent == Path(test_cache_dir) / "imports"
    return str(export), [root, imported.parent]


@pytest.fixture
def empty_cwd(tmp_path, monkeypatch) -> Path:
    """An empty working directory (tests assert that nothing appears in it)."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.hookimpl(tryfirst=True)      # before -m picks the fast set
def pytest_collection_modifyitems(config, items):
    """A test that starts PostgreSQL (the ``postgres`` fixture, or a fixture built on it) is slow, marked or not."""
    for item in items:
        if "postgres" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def postgres():
    """A throwaway PostgreSQL server on 127.0.0.1 for this test process (``pg_support``); skips, saying why,
    where PostgreSQL or the ADBC driver is not installed."""
    from pg_support import WHY_NOT, PostgresServer, pg_binaries

    if pg_binaries() is None:
        pytest.skip(WHY_NOT)
    pytest.importorskip("adbc_driver_postgresql", reason="the postgres extra is not installed: "
                                                          "pip install 'duckask[postgres]'")
    server = PostgresServer().start()
    yield server
    server.stop()
