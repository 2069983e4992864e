"""On a real Obsidian vault, vaultmem adds memories without changing a byte of the owner's."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

from conftest import snapshot_files

from vaultmem import Vault

T0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)


def test_init_remember_gc_promote_leave_kepano_files_byte_identical(
    copy_vault: Callable[[str], Path],
) -> None:
    root = copy_vault("kepano-obsidian")
    before = snapshot_files(root)
    vault, created = Vault.init(root)
    assert "vaultmem.toml" in created
    assert not set(created) & set(before)
    with vault:
        paths = []
        for i in range(50):
            memory = vault.remember(
                f"Memory number {i} about [[Evergreen notes]] and topic {i % 7}",
                tags=[f"topic{i % 7}"],
                now=T0 + dt.timedelta(hours=i),
            )
            paths.append(memory.path)
        for path in paths[:10]:
            for day in range(1, 5):
                vault.touch(path, now=T0 + dt.timedelta(days=day))
        promoted = vault.promote(now=T0 + dt.timedelta(days=5))
        forgotten = vault.gc(now=T0 + dt.timedelta(days=90))
    assert len(promoted.applied) == 10
    assert len(forgotten.applied) == 40
    after = snapshot_files(root)
    for rel, data in before.items():
        if rel == ".obsidian/types.json":  # init adds vaultmem's types, keeps every entry
            old, new = json.loads(data)["types"], json.loads(after[rel])["types"]
            assert {k: new[k] for k in old} == old and set(new) > set(old)
            continue
        assert after.get(rel) == data, f"{rel} changed"
    # every user note is still indexed and readable
    with Vault.open(root) as again:
        again.sync()
        indexed = set(again.index.all_paths())
    assert {p for p in before if p.endswith(".md")} <= indexed


def test_sidecar_ignores_itself_for_git(copy_vault: Callable[[str], Path]) -> None:
    import subprocess

    root = copy_vault("kepano-obsidian")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    with Vault.init(root)[0] as vault:
        vault.remember("a memory to index")
    listed = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".vaultmem" not in listed
    assert "STM/a memory to index.md" in listed
