"""Import throughput: memories per second of ``vaultmem import``, beside same-run baselines.

    python -m benchmarks.import_speed [--memories N] [--out DIR]

Writes N JSONL memories (varied words, tags, a third with an ``id``), imports them into a new
vault (``Vault.import_jsonl``: parse, validate, check against what is there, write each note
atomically, index in batches), then imports the same file again (everything is already there).
Baselines, on the same disk in the same run: writing N files of the same size with
``write`` + ``fsync`` each (what an atomic note write costs at least), and without ``fsync``.
Prints one table; the figures are measured, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

WORDS = [
    "coffee",
    "tea",
    "postgres",
    "port",
    "staging",
    "deploy",
    "kyoto",
    "garden",
    "recipe",
    "tart",
    "pears",
    "bob",
    "ana",
    "standup",
    "review",
    "python",
    "rust",
    "editor",
    "theme",
    "dark",
    "light",
    "budget",
    "plan",
    "trip",
    "april",
    "temple",
    "meeting",
    "notes",
    "puppy",
    "biscuit",
    "walk",
    "river",
    "mountain",
    "book",
    "chapter",
    "draft",
    "release",
    "branch",
    "merge",
    "test",
]


def make_jsonl(path: Path, n: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as handle:
        for i in range(n):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 30)))
            record: dict[str, object] = {
                "content": f"{words.capitalize()} (note {i}).",
                "tags": rng.sample(WORDS, 2),
                "created": f"2026-0{1 + i % 9}-1{i % 10}T09:00:00",
                "importance": round(rng.random(), 2),
            }
            if i % 3 == 0:
                record["id"] = f"01JBENCH{i:018d}"
            handle.write(json.dumps(record) + "\n")
    return path.stat().st_size


def baseline_writes(folder: Path, n: int, size: int, *, fsync: bool) -> float:
    folder.mkdir(parents=True)
    data = b"x" * size
    started = time.perf_counter()
    for i in range(n):
        with open(folder / f"note {i}.md", "wb") as handle:
            handle.write(data)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=None, help="work folder (default: a tmp dir)")
    args = parser.parse_args()
    from vaultmem import Vault

    work = Path(tempfile.mkdtemp(prefix="vaultmem-import-", dir=args.out))
    try:
        n = args.memories
        jsonl = work / "memories.jsonl"
        size = make_jsonl(jsonl, n) // n + 300  # a note: the content plus ~300 B frontmatter
        lines = jsonl.read_bytes().splitlines(keepends=True)
        Vault.init(work / "vault")
        with Vault.open(work / "vault") as vault:
            started = time.perf_counter()
            first = vault.import_jsonl(lines)
            first_s = time.perf_counter() - started
            started = time.perf_counter()
            again = vault.import_jsonl(lines)
            again_s = time.perf_counter() - started
        fsynced = baseline_writes(work / "fsync", n, size, fsync=True)
        plain = baseline_writes(work / "plain", n, size, fsync=False)
        rows = [
            ("import (new vault)", len(first.imported), first_s),
            ("import again (all already there)", len(again.duplicates), again_s),
            ("baseline: write + fsync each file", n, fsynced),
            ("baseline: write each file, no fsync", n, plain),
        ]
        print(f"import of {n} memories ({size} B a note), {os.cpu_count()} CPUs")
        print(f"{'figure':38} | {'count':>6} | {'seconds':>8} | {'per second':>10}")
        for label, count, seconds in rows:
            print(f"{label:38} | {count:6d} | {seconds:8.2f} | {count / seconds:10.0f}")
        if first.errors or len(first.imported) != n or again.imported:
            raise SystemExit(f"unexpected: {first.errors[:3]} {len(again.imported)} re-imported")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
