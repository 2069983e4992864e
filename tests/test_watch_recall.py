"""A memory saved while `vaultmem watch` runs is found by recall as soon as the watcher synced it.

Behaviour only; the latency itself is measured by the benchmark (watcher save→indexed p50/p95).
"""

from __future__ import annotations

import threading
from pathlib import Path

from vaultmem import Vault
from vaultmem.services.index.sync_types import SyncReport
from vaultmem.services.index.watcher import VaultWatcher

NOTE = """---
id: {id}
type: memory
status: active
created: 2026-11-20T09:00:00
use_count: 1
tags: [watch]
---
The {word} configuration lives in the attic cupboard.
"""


def test_saved_memories_are_recalled_once_the_watcher_synced_them(tmp_path: Path) -> None:
    vault, _ = Vault.init(tmp_path / "v")
    for i in range(30):
        vault.remember(f"filler memory number {i} about gardening", link=False)
    synced: list[set[str]] = []
    seen = threading.Condition()

    def on_sync(report: SyncReport) -> None:
        with seen:
            synced.append(set(report.touched_paths))
            seen.notify_all()

    with VaultWatcher(Vault.open(vault.root), debounce_seconds=0.05, on_sync=on_sync) as watcher:
        assert watcher.wait_idle(30)
        for i in range(20):
            word = f"zebrawidget{i}"
            rel = f"STM/Saved in Obsidian {i}.md"
            (vault.root / rel).write_text(NOTE.format(id=f"w{i}", word=word), encoding="utf-8")
            with seen:
                assert seen.wait_for(lambda rel=rel: any(rel in s for s in synced), timeout=10)
            hits = vault.recall(word, k=3, sync=False)  # no sync of our own: the watcher's index
            assert [h.path for h in hits][:1] == [rel]
            assert hits[0].id == f"w{i}"
