"""Trace notes written by the seal pass: a new trace is created, an existing one is extended
in place (surgically: a person's lines in it are kept), and undo puts it back byte for byte."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from vaultmem import Vault
from vaultmem.store import note_files

T0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    Vault.init(tmp_path / "v")[0].close()
    return Vault.open(tmp_path / "v")


def episode(vault: Vault, start: dt.datetime, name: str) -> None:
    """Two memories ten minutes apart on the same topics: one box once the episode has ended."""
    for i in range(2):
        vault.remember(
            f"{name} fact {i}", tags=["editor", "ui"], now=start + i * dt.timedelta(minutes=10)
        )


def trace_paths(vault: Vault) -> list[Path]:
    return sorted((vault.root / "Boxes" / "Traces").glob("*.md"))


def test_a_run_that_extends_an_existing_trace_succeeds_and_keeps_every_line(
    vault: Vault,
) -> None:
    episode(vault, T0, "first")
    episode(vault, T0 + DAY, "second")
    created = vault.lifecycle(["seal"], now=T0 + 2 * DAY)
    (seal,) = created.results
    assert [m.path for m, _ in seal.skipped] == []
    (trace,) = trace_paths(vault)
    # a person's own lines in the trace: a property and a paragraph
    before = (
        trace.read_text(encoding="utf-8").replace("type: trace\n", "type: trace\nreviewed: yes\n")
        + "\nMy own note about this thread.\n"
    )
    trace.write_text(before, encoding="utf-8")
    vault.sync()

    episode(vault, T0 + 3 * DAY, "third")
    extended = vault.lifecycle(["seal"], now=T0 + 4 * DAY)
    (seal,) = extended.results
    assert [(m.path, why) for m, why in seal.skipped] == []
    edits = [m for m in seal.applied if m.rule == "trace"]
    assert [(m.path, m.action) for m in edits] == [
        (trace.relative_to(vault.root).as_posix(), "edit")
    ]
    assert trace_paths(vault) == [trace]
    after = trace.read_text(encoding="utf-8")
    boxes = sorted(p.stem for p in (vault.root / "Boxes").glob("2026-*/box-*.md"))
    assert len(boxes) == 3 and all(f"[[{b}]]" in after for b in boxes)
    changed = ("updated:", "boxes:")  # the fields the pass sets; every other line is kept
    kept = [line for line in before.splitlines() if not line.startswith(changed)]
    assert [line for line in kept if line not in after.splitlines()] == []

    vault.undo()
    assert trace.read_text(encoding="utf-8") == before


def test_the_traces_of_a_run_are_written_ahead_together_not_flushed_one_by_one(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    topics = [f"topic{k}" for k in range(8)]
    for day, start in enumerate((T0, T0 + DAY)):
        for k, topic in enumerate(topics):  # one episode (one box) per topic and day
            at = start + k * dt.timedelta(hours=2)
            for i in range(2):
                vault.remember(
                    f"{topic} day {day} fact {i}",
                    tags=[topic],
                    now=at + i * dt.timedelta(minutes=5),
                )
    fsyncs: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        fsyncs.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(note_files.os, "fsync", counting_fsync)
    run = vault.lifecycle(["seal"], now=T0 + 3 * DAY)
    (seal,) = run.results
    assert seal.skipped == []
    assert len(trace_paths(vault)) == len(topics)  # the two boxes of each topic: a trace
    assert len(fsyncs) < len(topics), fsyncs  # not one flush to disk per trace
