"""Prompt states on disk (``utils/llm/prompt_cache.py``) and the embedded backend's decoding
(``utils/llm/decode.py``): the store on its own (no model), then with the real model: a state written
by one process is used by the next, a corrupt or truncated state is set aside, prompt-lookup decoding
gives exactly the text of plain greedy decoding, and ``duckask warm`` on the demo."""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import clean_env, demo_db, embedded_model_path

from duckask.utils.llm.prompt_cache import PromptStateStore, common_prefix

ROOT = Path(__file__).resolve().parents[1]


def store(tmp_path, capacity=10_000_000, model="m1"):
    return PromptStateStore(tmp_path, model, capacity)


# --------------------------------------------------------------------------- the store, no model
def test_round_trip_and_longest_prefix(tmp_path):
    s = store(tmp_path)
    s.write([1, 2, 3, 4], b"four")
    s.write([1, 2, 9], b"nine")
    n, e = s.longest([1, 2, 3, 4, 5, 6])
    assert n == 4 and s.read(e)[1] == b"four"
    n, e = s.longest([1, 2, 9, 9])
    assert n == 3 and s.read(e)[0].tolist() == [1, 2, 9]
    n, e = s.longest([1, 7])
    assert n == 1                                    # a partial prefix of a stored state still counts
    assert s.longest([8])[0] == 0 and s.longest([8])[1] is None
    assert s.has([1, 2, 9]) and not s.has([1, 2])


@pytest.mark.parametrize("damage", ["flip", "truncate", "extend", "garbage", "empty"])
def test_a_damaged_state_is_skipped_and_set_aside(tmp_path, damage, capsys):
    s = store(tmp_path)
    path = s.write([5, 6, 7], b"x" * 1000)
    data = path.read_bytes()
    if damage == "flip":
        data = data[:-10] + bytes([data[-10] ^ 0xFF]) + data[-9:]
    elif damage == "truncate":
        data = data[:-100]
    elif damage == "extend":
        data = data + b"more"
    elif damage == "garbage":
        data = os.urandom(len(data))
    else:
        data = b""
    path.write_bytes(data)
    n, e = s.longest([5, 6, 7, 8])
    if e is not None:                                # the header survived: the full read catches it
        assert s.read(e) is None
    assert not path.exists()                         # out of the way, to be rebuilt the next time
    [aside] = path.parent.glob(path.name + ".corrupt-*")
    assert aside.read_bytes() == data                # never deleted: the damaged bytes as they were
    err = capsys.readouterr().err
    assert f"the prompt state {path} is damaged" in err and f"moved to {aside}" in err
    assert s.longest([5, 6, 7, 8]) == (0, None)
    assert s.write([5, 6, 7], b"x" * 1000) == path and s.read(s.longest([5, 6, 7])[1])[1] == b"x" * 1000


def test_a_state_of_another_model_is_not_used(tmp_path):
    store(tmp_path, model="m1").write([1, 2, 3], b"abc")
    other = store(tmp_path, model="m2")
    assert other.longest([1, 2, 3, 4]) == (0, None)
    # the same folder name can never hold the other model's file: a header that names another model
    theirs = next(store(tmp_path, model="m1").folder.glob("*.state"))
    target = other.folder / theirs.name
    other.folder.mkdir(parents=True, exist_ok=True)
    target.write_bytes(theirs.read_bytes())
    assert other.longest([1, 2, 3, 4]) == (0, None) and not target.exists()
    assert len(list(other.folder.glob(theirs.name + ".corrupt-*"))) == 1


def test_size_bound_evicts_the_least_recently_used(tmp_path):
    one = 4096
    s = store(tmp_path, capacity=3 * one + 3 * 200)
    paths = [s.write([i, i, i], b"s" * one) for i in range(3)]
    for i, p in enumerate(paths):                    # distinct, increasing access times
        os.utime(p, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))
    s.read(next(e for e in s.entries() if e.tokens[0] == 0))   # state 0 is now the most recently used
    s.write([3, 3, 3], b"s" * one)
    left = sorted(int(e.tokens[0]) for e in s.entries())
    assert left == [0, 2, 3]                         # state 1 was the least recently used
    assert sum(e.size for e in s.entries()) <= s.capacity
    assert s.write([9], b"s" * (s.capacity + 1)) is None   # larger than the whole cache: not kept


class _Context:
    """What ``PromptStates.remember`` reads of a llama.cpp context: its tokens."""

    def __init__(self):
        self.input_ids, self.n_tokens = np.zeros(64, dtype=np.int32), 0

    def holds(self, tokens: list[int]) -> None:
        self.input_ids[: len(tokens)], self.n_tokens = tokens, len(tokens)


def test_the_ram_tier_keeps_to_its_bound_least_recently_used_first(monkeypatch):
    from duckask.utils.llm import decode

    monkeypatch.setattr(decode, "_state_bytes", lambda llama: b"s" * 1000)
    ctx = _Context()
    states = decode.PromptStates(ctx, ram_bytes=2500, disk=None)
    one_state = 1000 + 4 * 10                                # the state and its ten int32 tokens
    for first in (1, 2, 3):
        ctx.holds([first] * 10)
        states.remember()
    assert [int(t[0]) for t, _ in states.ram.values()] == [2, 3]     # 1 was the least recently used
    ctx.holds([2] * 10)
    states.remember()                                        # remembered again: now the most recent
    ctx.holds([4] * 10)
    states.remember()
    assert [int(t[0]) for t, _ in states.ram.values()] == [2, 4]
    assert sum(len(s) + t.nbytes for t, s in states.ram.values()) == 2 * one_state <= states.ram_bytes
    states.ram_bytes = one_state - 1                         # one state alone is over the bound: none is kept
    states.remember()
    assert not states.ram
    states.ram_bytes = 0                                     # the tier off
    states.remember()
    assert not states.ram


def _writer(folder: str, worker: int) -> None:
    s = PromptStateStore(folder, "m1", 50_000_000)
    for i in range(40):
        s.write([1, 2, i % 8], bytes([worker]) * (20_000 + i))   # same keys from both processes


def test_two_processes_writing_at_once_leave_a_readable_cache(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w)) for w in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    s = store(tmp_path, capacity=50_000_000)
    entries = s.entries()
    assert len(entries) == 8
    for e in entries:
        tokens, state = s.read(e)
        assert tokens[:2].tolist() == [1, 2] and len(set(state)) == 1   # whole, one writer's bytes
    assert not list(s.folder.glob(".tmp-*"))


def test_common_prefix():
    a = np.array([1, 2, 3], dtype=np.int32)
    assert common_prefix(a, np.array([1, 2, 4], dtype=np.int32)) == 2
    assert common_prefix(a, a) == 3 and common_prefix(a, np.array([], dtype=np.int32)) == 0


def test_lookup_draft_continues_the_latest_earlier_occurrence():
    from duckask.utils.llm.decode import lookup_draft

    h = np.array([5, 6, 7, 8, 1, 5, 6, 9, 2, 5, 6], dtype=np.int32)
    assert lookup_draft(h, 3) == [9, 2, 5]           # the latest earlier "5 6" was followed by 9 2 5
    assert lookup_draft(np.array([1, 2, 3], dtype=np.int32), 4) == []


# --------------------------------------------------------------------------- with the embedded model
_model = embedded_model_path


def _prompts(schema_chars: int = 2500) -> list[list[dict]]:
    """SQLGenerator prompts on the demo database, as the graph builds them (recorded by rendering), the schema cut
    at ``schema_chars``."""
    from duckask.nodes.sql_generator import build_messages
    from duckask.utils.api import prepare
    from duckask.utils.schema.ddl import render_schema

    prep = prepare(demo_db(), llm=object())
    out = []
    for tables, q in [(["people", "batting"], "Who hit the most home runs in 2019?"),
                      (["teams"], "How many teams played in the 2019 season?"),
                      (["people", "hall_of_fame"], "Which players were inducted into the Hall of Fame in 1936?")]:
        out.append(build_messages(render_schema(prep.catalog, tables)[:schema_chars], q, [], None))
    return out


_CHILD = """
import json, sys
from duckask.utils.config import load_settings
from duckask.utils.llm.local import LocalBackend
msgs, stable = json.loads(sys.argv[1]), sys.argv[2]
r = LocalBackend(load_settings()).complete(msgs, node="SQLGenerator", prefix="```sql\\n", stop=["```"],
                                           max_tokens=48, stable=stable)
print(json.dumps({"text": r.text, "reused": r.reused_tokens, "prompt": r.prompt_tokens}))
"""


def _child(cache: Path, model: str, msgs, stable) -> dict:
    p = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(msgs), stable], capture_output=True, text=True,
                       env=clean_env(cache, DUCKASK_MODEL_PATH=model), cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.model
def test_a_state_outlives_the_process_and_a_corrupt_one_is_rebuilt(tmp_path):
    model = _model()
    msgs = _prompts(schema_chars=600)[0]     # a short prompt: each of the three processes reads it again
    stable = msgs[-1]["content"].split("Question:")[0]
    first = _child(tmp_path, model, msgs, stable)
    files = list((tmp_path / "prompt-states").glob("*/*.state"))
    assert len(files) == 1 and first["reused"] == 0
    second = _child(tmp_path, model, msgs, stable)            # a fresh process starts from the stored state
    assert second["text"] == first["text"]
    assert second["reused"] > 0.8 * first["prompt"]
    data = files[0].read_bytes()
    files[0].write_bytes(data[: len(data) // 2])              # truncated, as by a full disk
    third = _child(tmp_path, model, msgs, stable)
    assert third["text"] == first["text"] and third["reused"] == 0
    rebuilt = list((tmp_path / "prompt-states").glob("*/*.state"))
    assert len(rebuilt) == 1 and rebuilt[0].stat().st_size == len(data)


@pytest.mark.model
def test_prompt_lookup_decoding_gives_the_plain_greedy_text(tmp_path):
    """On recorded prompts: the speculative text == our plain greedy text == llama-cpp-python's own."""
    from duckask.utils.config import load_settings
    from duckask.utils.llm.decode import greedy_generate
    from duckask.utils.llm.local import LocalBackend, render_chatml

    backend = LocalBackend(load_settings(model_path=_model(), cache_dir=str(tmp_path)))
    llama = backend.llama
    stops = ["```", "<|im_end|>", "<|endoftext|>"]
    msgs = _prompts()[0]            # a join's 96 tokens (each prompt more cost minutes in CI and showed nothing new)
    tokens = llama.tokenize(render_chatml(msgs, "```sql\n").encode(), add_bos=False, special=True)
    texts = []
    for draft in (0, 8):            # each from a fresh context: the same prompt processed the same way
        llama.reset()
        texts.append(greedy_generate(llama, tokens, 0, max_tokens=96, stops=stops, draft=draft)[0])
    llama.reset()
    ref = llama.create_completion(tokens, max_tokens=96, temperature=0.0, top_k=1, stop=stops)
    assert texts[0] == texts[1] == ref["choices"][0]["text"]
    assert "SELECT" in texts[0].upper()
    # the RAM tier's bound: test_the_ram_tier_keeps_to_its_bound_least_recently_used_first (no model needed)


@pytest.mark.model
def test_duckask_warm_on_the_demo(tmp_path):
    model = _model()
    env = clean_env(tmp_path, DUCKASK_MODEL_PATH=model)
    cli = str(Path(sys.executable).with_name("duckask"))
    p = subprocess.run([cli, "warm", "--limit", "2"], capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "warmed 2 prompt prefixes (2 new" in p.stdout           # the plan's catalog and the commonest schema
    assert len(list((tmp_path / "prompt-states").glob("*/*.state"))) == 2
    again = subprocess.run([cli, "warm", "--limit", "2"], capture_output=True, text=True, env=env, timeout=900)
    assert "(0 new" in again.stdout
    # a question then starts from a stored state
    r = subprocess.run([cli, "ask", "--json", "Who hit the most home runs in 2019?"], capture_output=True,
                       text=True, env=env, timeout=900)
    d = json.loads(r.stdout)
    assert d["status"] == "answered"
    # The demo's semantic file names home_runs: the plan prompt's catalog was warmed first.
    gen = [c for c in d["llm_calls"] if c["node"] in ("PlanQuery", "SQLGenerator")][0]
    assert gen["node"] == "PlanQuery" and gen["reused_tokens"] >= 100
