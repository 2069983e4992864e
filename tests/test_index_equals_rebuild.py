"""The index after vaultmem's own writes, mixed with a person's edits, is what a rebuild stores.

Random seeded runs: memories remembered, touched, pinned and forgotten, lifecycle passes and
their undo, recall, and bursts of outside edits (creates, saves, renames, moves, deletes,
touches), the clock moving on by hours to weeks. After every step the index is compared, every
column of every table, with a cold index of a copy of the vault (mtimes kept).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import random
import shutil
from pathlib import Path

import pytest
from conftest import index_content
from test_watcher import random_burst

from vaultmem import Vault
from vaultmem.errors import VaultmemError

WORDS = ("apple", "river", "stone", "cloud", "piano", "garden", "rocket", "violet", "window")
STEPS = 30
KINDS = ("remember", "remember", "touch", "lifecycle", "undo", "edits", "forget", "pin", "recall")


def _step(vault: Vault, kind: str, rng: random.Random, now: dt.datetime) -> None:
    if kind == "remember":
        text = " ".join(rng.sample(WORDS, 4)) + f" [[{rng.choice(WORDS)}]]"
        vault.remember(text, tags=[rng.choice(WORDS)], now=now)
    elif kind in ("touch", "forget", "pin"):
        rows = vault.memories(now=now)
        if not rows:
            return
        ref = rng.choice(rows).path
        if kind == "touch":
            vault.touch(ref, now=now)
        elif kind == "forget":
            vault.forget(ref, now=now)
        else:
            vault.pin(ref, rng.random() < 0.5, now=now)
    elif kind == "lifecycle":
        vault.lifecycle(now=now)
    elif kind == "undo":
        vault.undo()
    elif kind == "edits":
        random_burst(vault.root, rng, 5)
    else:
        vault.recall(rng.choice(WORDS), now=now)


def _rebuilt(root: Path, copy: Path) -> dict[str, list[tuple[object, ...]]]:
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".vaultmem"))
    try:
        with Vault.open(copy) as fresh:
            fresh.sync()
            return index_content(fresh)
    finally:
        shutil.rmtree(copy)


@pytest.mark.parametrize("seed", [7, 8])
def test_own_writes_and_outside_edits_leave_the_index_a_rebuild_stores(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    root = tmp_path / "vault"
    Vault.init(root)[0].close()
    now = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    done: list[str] = []
    with Vault.open(root) as vault:
        for _ in range(STEPS):
            now += dt.timedelta(hours=rng.choice([1, 5, 24, 24 * 7]))
            kind = rng.choice(KINDS)
            with contextlib.suppress(VaultmemError):  # refused: nothing to undo, a note gone …
                _step(vault, kind, rng, now)
            done.append(kind)
            vault.sync()
            assert index_content(vault) == _rebuilt(root, tmp_path / "copy"), done
    assert {"remember", "lifecycle", "edits"} <= set(done)
