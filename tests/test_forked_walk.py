"""A big vault is walked in a forked process while this one loads the memories it will plan
with (vaultmem.services.index.index_sync, ``meanwhile``): the index ends exactly as a walk here
leaves it, what was loaded is used only when the sync changed nothing, and a walk that cannot
fork, or whose process dies, is done here instead."""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import index_content

from vaultmem import Vault
from vaultmem.services.index import forked_workers, index_sync, sync_walk, vault_walk
from vaultmem.services.index.forked_workers import can_fork
from vaultmem.services.memories import memory_view

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # benchmarks/ is not installed; plain `pytest` lacks the repo
    sys.path.insert(0, str(REPO))

from benchmarks.generate_vault import REFERENCE_TIME, generate_vault  # noqa: E402

pytestmark = pytest.mark.skipif(not can_fork(), reason="a forked walk needs fork (Linux)")


def _walks_recorded(monkeypatch: pytest.MonkeyPatch, record: Path) -> None:
    """Every walk of the whole vault, here or forked, writes the id of the process that made it
    to ``record`` (a forked process's list would not come back: a file does)."""
    real = vault_walk.scan_vault

    def recording(*args: Any, **kwargs: Any) -> Any:
        with open(record, "a") as out:
            out.write(f"{os.getpid()}\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(index_sync, "scan_vault", recording)  # a walk here
    monkeypatch.setattr(sync_walk, "scan_vault", recording)  # a forked walk


def _walkers(record: Path) -> list[int]:
    return [int(pid) for pid in record.read_text().split()] if record.exists() else []


def _edit_in_every_way(root: Path) -> None:
    """One note edited (with a new link), one added, one deleted, one moved, an attachment
    added and linked, one note made a symbolic link to another."""
    notes = sorted(p for p in root.rglob("*.md") if ".vaultmem" not in p.parts)
    edited, deleted, moved, linked = notes[3], notes[10], notes[20], notes[30]
    with open(edited, "a", encoding="utf-8") as out:
        out.write(f"\nedited, see [[{notes[40].stem}]] and ![[Map.png]]\n")
    (root / "Added by hand.md").write_text("# Added\n\nsee [[Added twice]]\n", encoding="utf-8")
    (root / "Map.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    deleted.unlink()
    moved.rename(moved.with_name("Moved " + moved.name))
    linked.unlink()
    linked.symlink_to(notes[41])


EVERY_WAY = (1, 2, 1, 1)
"""(added, changed, moved, removed) of a sync after :func:`_edit_in_every_way`."""


def _counts(report: index_sync.SyncReport) -> tuple[int, int, int, int]:
    return report.added, report.changed, report.moved, report.removed


@pytest.fixture
def srd(copy_vault: Callable[[str], Path]) -> Iterator[Vault]:
    """A copy of 13th-age-srd (1,003 notes), open and synced."""
    with Vault.open(copy_vault("13th-age-srd")) as vault:
        vault.sync()
        yield vault


def _edited(vault: Vault, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Edit ``vault`` in every way, let its 1,003 notes be enough for a forked walk, and record
    the walkers; the record's path."""
    _edit_in_every_way(vault.root)
    monkeypatch.setattr(sync_walk, "FORKED_WALK_FROM", 100)
    record = tmp_path / "walkers"
    _walks_recorded(monkeypatch, record)
    return record


def test_a_forked_walk_indexes_exactly_what_a_rebuild_does(
    srd: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _edited(srd, monkeypatch, tmp_path)
    during: list[int] = []
    report = srd.sync(meanwhile=lambda: during.append(os.getpid()))
    (walker,) = _walkers(record)
    assert walker != os.getpid()  # the walk was made by another process…
    assert during == [os.getpid()]  # …while this one did its own work, once
    assert _counts(report) == EVERY_WAY
    assert report.linked is not None and len(report.linked) == 1
    assert report.unchanged == 1003 - 4  # all but the edited, linked, added and moved
    synced = index_content(srd)
    assert ("Map.png", "map.png") in synced["attachments"]
    srd.sync(rebuild=True)
    assert index_content(srd) == synced


def test_a_small_vault_or_a_sync_without_work_meanwhile_walks_here(
    srd: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "walkers"
    _walks_recorded(monkeypatch, record)
    during: list[int] = []
    srd.sync(meanwhile=lambda: during.append(1))  # 1,003 notes: under FORKED_WALK_FROM
    monkeypatch.setattr(sync_walk, "FORKED_WALK_FROM", 100)
    srd.sync()  # nothing to do meanwhile: no reason to fork
    assert during == [] and _walkers(record) == [os.getpid()] * 2


def test_without_a_fork_the_walk_is_done_here(
    srd: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _edited(srd, monkeypatch, tmp_path)
    monkeypatch.setattr(forked_workers, "can_fork", lambda: False)  # another thread runs
    during: list[int] = []
    report = srd.sync(meanwhile=lambda: during.append(1))
    assert during == [] and _walkers(record) == [os.getpid()]
    assert _counts(report) == EVERY_WAY


def test_a_walker_that_dies_is_replaced_by_a_walk_here(
    srd: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _edited(srd, monkeypatch, tmp_path)
    parent = os.getpid()
    recording = sync_walk.scan_vault

    def dying(*args: Any, **kwargs: Any) -> Any:
        result = recording(*args, **kwargs)
        os.kill(os.getpid(), 9)  # killed before it could answer (out of memory, say)
        return result

    monkeypatch.setattr(sync_walk, "scan_vault", dying)  # only the forked walk uses it
    during: list[int] = []
    report = srd.sync(meanwhile=lambda: during.append(1))
    walkers = _walkers(record)
    assert len(walkers) == 2 and walkers[0] != parent and walkers[1] == parent
    assert during == [1]
    assert _counts(report) == EVERY_WAY
    synced = index_content(srd)
    srd.sync(rebuild=True)
    assert index_content(srd) == synced


def test_a_walker_dead_before_the_index_stats_reach_it_is_replaced_by_a_walk_here(
    srd: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _edited(srd, monkeypatch, tmp_path)
    parent = os.getpid()

    def dying(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), 9)  # dies at once: nobody reads the stats sent to it

    def slow_stats(real: Callable[[], Any]) -> Callable[[], Any]:
        def stats() -> Any:
            if os.getpid() == parent:
                time.sleep(0.3)  # the walker is dead by the time they are sent (a broken pipe)
            return real()

        return stats

    monkeypatch.setattr(sync_walk, "scan_vault", dying)
    monkeypatch.setattr(srd.index, "stat_columns", slow_stats(srd.index.stat_columns))
    during: list[int] = []
    report = srd.sync(meanwhile=lambda: during.append(1))
    assert during == [1] and _walkers(record) == [parent]  # the walk here, after the work
    assert _counts(report) == EVERY_WAY
    synced = index_content(srd)
    srd.sync(rebuild=True)
    assert index_content(srd) == synced


def test_a_fork_that_fails_leaves_the_walk_to_this_process(
    srd: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _edited(srd, monkeypatch, tmp_path)

    def no_fork() -> int:
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)  # out of processes
    during: list[int] = []
    report = srd.sync(meanwhile=lambda: during.append(1))
    assert during == [] and _walkers(record) == [os.getpid()]
    assert _counts(report) == EVERY_WAY


def test_an_error_of_the_work_done_meanwhile_is_raised_and_nothing_is_stored(
    srd: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = index_content(srd)
    _edited(srd, monkeypatch, tmp_path)

    def failing() -> None:
        raise OSError(errno.EIO, "Input/output error")

    with pytest.raises(OSError, match="Input/output error"):
        srd.sync(meanwhile=failing)
    assert index_content(srd) == before  # the sync's transaction was rolled back
    assert srd.sync().added == 1  # and the next sync finds every change


@pytest.fixture
def memories(tmp_path: Path) -> Path:
    root = tmp_path / "memories"
    generate_vault(root, 300, 30, seed=4)
    return root


def _loads_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    loads: list[int] = []
    real = memory_view.memory_table

    def counting(*args: Any, **kwargs: Any) -> Any:
        loads.append(os.getpid())
        return real(*args, **kwargs)

    monkeypatch.setattr(memory_view, "memory_table", counting)
    return loads


def test_the_memories_loaded_during_the_walk_are_kept_when_nothing_changed(
    memories: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Vault.open(memories) as vault:
        vault.sync()
        serial = vault.table(now=REFERENCE_TIME)
        monkeypatch.setattr(sync_walk, "FORKED_WALK_FROM", 100)
        loads = _loads_counted(monkeypatch)
        table = vault.table(now=REFERENCE_TIME)
        assert loads == [os.getpid()]  # loaded once, during the walk
        assert list(table.columns.path) == list(serial.columns.path)
        assert np.array_equal(table.scores.score, serial.scores.score)
        assert table.linked == serial.linked == set()


def test_the_memories_are_loaded_again_when_the_sync_changed_a_note(
    memories: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Vault.open(memories) as vault:
        vault.sync()
        path = next(iter(vault.table(now=REFERENCE_TIME).columns.path))
        note = memories / path
        text = note.read_text(encoding="utf-8")
        assert "\nuse_count: " in text
        start = text.index("\nuse_count: ") + len("\nuse_count: ")
        end = text.index("\n", start)
        note.write_text(text[:start] + "97" + text[end:], encoding="utf-8")
        monkeypatch.setattr(sync_walk, "FORKED_WALK_FROM", 100)
        loads = _loads_counted(monkeypatch)
        table = vault.table(now=REFERENCE_TIME)
        assert len(loads) == 2  # during the walk, then again after the sync stored the edit
        row = list(table.columns.path).index(path)
        assert table.columns.use_count[row] == 97
