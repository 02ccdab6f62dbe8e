"""Prompt states that outlive the process: llama.cpp's state after a prompt prefix, kept on disk.

A state is what llama.cpp holds after processing some tokens (the KV cache, about 28 KB a token for
the embedded model, and the last token's logits). A prompt that starts with a stored state's tokens
loads it and processes only the rest: reading a 1,000-token state takes tens of milliseconds, where
processing those tokens takes about 15 s on 2 cores. So a fresh `duckask ask` process, or the first
question after `duckask warm`, starts where earlier processes left off.

- **Keyed** by the model (``model_id``: the GGUF file's name, size and mtime, llama.cpp's version and
  the context size: a state is only valid for the exact model and context it came from) and the exact
  token prefix; looked up by the longest prefix any stored state shares with a prompt.
- **Bounded** (``capacity_bytes``, setting ``prompt_cache_mb``): after a write the least recently used
  files go until the folder fits (a read touches its file).
- **Atomic**: a state is written to a temporary file in the same folder and renamed into place, so a
  reader never sees half a file; two processes writing the same key both write whole files, and the
  last rename wins.
- **Never an error**: a file that is truncated, fails its CRC, or belongs to another model or format
  is skipped and set aside as ``<file>.corrupt-<time>`` (never deleted; a warning names both paths;
  ``utils/damaged.py``), and the state is rebuilt the next time that prefix is processed. A set-aside
  file no longer counts toward the capacity. I/O errors are swallowed: the cache only ever saves time.

File layout: ``MAGIC``, a 4-byte header length, a JSON header (format, model, tokens, state bytes,
CRC-32 of tokens and state), the tokens (int32, little-endian), the state bytes.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from duckask.utils.damaged import set_aside

MAGIC = b"duckask prompt state\n"
FORMAT = 1
SUFFIX = ".state"


@dataclass
class Entry:
    path: Path
    tokens: np.ndarray      # int32
    size: int               # bytes on disk


def common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the longest common prefix of two token arrays."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if diff.size else n


class PromptStateStore:
    """States of one model in one folder (``<cache_dir>/prompt-states/<model hash>/``)."""

    def __init__(self, folder: str | Path, model_id: str, capacity_bytes: int):
        self.model_id = model_id
        self.folder = Path(folder) / hashlib.sha256(model_id.encode()).hexdigest()[:16]
        self.capacity = capacity_bytes
        self._headers: dict[str, tuple[int, int, np.ndarray]] = {}   # name -> (mtime_ns, size, tokens)

    # ------------------------------------------------------------------ keys and listing
    def key(self, tokens: Sequence[int] | np.ndarray) -> Path:
        digest = hashlib.sha256(np.asarray(tokens, dtype="<i4").tobytes()).hexdigest()[:32]
        return self.folder / (digest + SUFFIX)

    def entries(self) -> list[Entry]:
        """Every readable state in the folder (headers are read once per file version)."""
        out: list[Entry] = []
        try:
            listing = list(os.scandir(self.folder))
        except OSError:
            return out
        seen = set()
        for de in listing:
            if not de.name.endswith(SUFFIX):
                continue
            try:
                st = de.stat()
            except OSError:
                continue
            seen.add(de.name)
            memo = self._headers.get(de.name)
            if memo is None or memo[:2] != (st.st_mtime_ns, st.st_size):
                try:
                    tokens = self._read_tokens(Path(de.path), st.st_size)
                except ValueError as e:
                    self._set_aside(Path(de.path), e)
                    continue
                if tokens is None:         # unreadable just now (I/O): skipped, left as it is
                    continue
                memo = (st.st_mtime_ns, st.st_size, tokens)
                self._headers[de.name] = memo
            out.append(Entry(Path(de.path), memo[2], st.st_size))
        for gone in set(self._headers) - seen:
            del self._headers[gone]
        return out

    def longest(self, tokens: Sequence[int] | np.ndarray) -> tuple[int, Entry | None]:
        """The stored state sharing the longest prefix with ``tokens``, and that length."""
        toks = np.asarray(tokens, dtype=np.int32)
        best, found = 0, None
        for e in self.entries():
            n = common_prefix(e.tokens, toks)
            if n > best:
                best, found = n, e
        return best, found

    def has(self, tokens: Sequence[int] | np.ndarray) -> bool:
        return self.key(tokens).exists()

    # ------------------------------------------------------------------ reading
    def _header(self, f) -> dict | None:
        if f.read(len(MAGIC)) != MAGIC:
            return None
        raw = f.read(4)
        if len(raw) != 4:
            return None
        (n,) = struct.unpack("<I", raw)
        if n > 1 << 16:
            return None
        try:
            head = json.loads(f.read(n))
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(head, dict) or head.get("format") != FORMAT or head.get("model") != self.model_id:
            return None
        if not isinstance(head.get("n_tokens"), int) or not isinstance(head.get("state_bytes"), int):
            return None
        head["offset"] = len(MAGIC) + 4 + n
        return head

    def _read_tokens(self, path: Path, size: int) -> np.ndarray | None:
        """The tokens of the state in ``path``; ValueError when the file is damaged, None on an I/O error."""
        try:
            with path.open("rb") as f:
                head = self._header(f)
                if head is None:
                    raise ValueError("not a prompt state of this model and format")
                if size != head["offset"] + 4 * head["n_tokens"] + head["state_bytes"]:
                    raise ValueError("truncated or too long")
                tokens = np.frombuffer(f.read(4 * head["n_tokens"]), dtype="<i4").astype(np.int32)
        except OSError:
            return None
        if len(tokens) != head["n_tokens"]:
            raise ValueError("truncated")
        return tokens

    def read(self, entry: Entry) -> tuple[np.ndarray, bytes] | None:
        """The tokens and state bytes of ``entry``, checked whole; None (and a damaged file set aside) if not."""
        try:
            with entry.path.open("rb") as f:
                head = self._header(f)
                if head is None:
                    raise ValueError("not a state of this model")
                tok_bytes = f.read(4 * head["n_tokens"])
                state = f.read(head["state_bytes"])
                if len(tok_bytes) != 4 * head["n_tokens"] or len(state) != head["state_bytes"] or f.read(1):
                    raise ValueError("truncated or too long")
                if zlib.crc32(state, zlib.crc32(tok_bytes)) != head.get("crc32"):
                    raise ValueError("checksum")
            os.utime(entry.path)          # most recently used
        except OSError:
            return None
        except ValueError as e:
            self._set_aside(entry.path, e)
            return None
        return np.frombuffer(tok_bytes, dtype="<i4").astype(np.int32), state

    # ------------------------------------------------------------------ writing
    def write(self, tokens: Sequence[int] | np.ndarray, state: bytes) -> Path | None:
        """Store ``state`` under ``tokens`` (atomically), then evict down to the capacity."""
        if len(state) + 4 * len(tokens) > self.capacity:
            return None
        tok_bytes = np.asarray(tokens, dtype="<i4").tobytes()
        head = json.dumps({"format": FORMAT, "model": self.model_id, "n_tokens": len(tokens),
                           "state_bytes": len(state), "crc32": zlib.crc32(state, zlib.crc32(tok_bytes))}).encode()
        path = self.key(tokens)
        tmp = None
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-", suffix=".part")
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + struct.pack("<I", len(head)) + head)
                f.write(tok_bytes)
                f.write(state)
            os.replace(tmp, path)
            tmp = None
        except OSError:
            return None
        finally:
            if tmp:
                self._discard(Path(tmp))
        self.evict()
        return path

    def evict(self) -> None:
        """Remove least recently used states until the folder fits the capacity."""
        entries = []
        for p in self.folder.glob("*" + SUFFIX):
            try:
                st = p.stat()
            except OSError:
                continue
            entries.append((st.st_mtime_ns, st.st_size, p))
        total = sum(size for _, size, _ in entries)
        for _, size, p in sorted(entries):
            if total <= self.capacity:
                break
            self._discard(p)
            total -= size

    def _set_aside(self, path: Path, why: Exception) -> None:
        """A damaged state: renamed out of the way (never deleted), with a warning naming both paths."""
        self._headers.pop(path.name, None)
        try:
            set_aside(path, "the prompt state", why, "the state is rebuilt the next time its prompt is processed")
        except OSError:
            pass      # the cache only ever saves time: a file that cannot be moved is skipped

    @staticmethod
    def _discard(path: Path) -> None:
        try:
            path.unlink()
        except OSError:
            pass


def model_identity(model_path: str, n_ctx: int) -> str:
    """What a state is only valid for: this model file, this llama.cpp, this context size."""
    try:
        import llama_cpp

        version = getattr(llama_cpp, "__version__", "?")
    except ImportError:  # pragma: no cover - only the embedded backend calls this
        version = "?"
    st = os.stat(model_path)
    return f"{Path(model_path).name}:{st.st_size}:{st.st_mtime_ns}:llama-cpp-python {version}:n_ctx {n_ctx}"
