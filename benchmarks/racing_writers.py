"""Racing writers: a lifecycle pass while another writer edits and deletes the notes it moves.

Each run copies a prepared vault of ``--memories`` STM memories that the pass will seal into
boxes and then archive (two moves per note), starts ``vaultmem lifecycle`` (the Python API)
and, at the same time, a thread that every ``--interval-ms`` milliseconds picks one of the
memory notes where it is now and either appends a marker line to it in place (an existing file
opened for appending, as an editor or a script would) or deletes it. After the pass:

- an edit is *lost* if its marker line is in no note of the vault (unless the racing writer
  deleted that note itself later);
- a delete is *resurrected* if a note of that name exists again anywhere in the vault;
- a note neither deleted nor lost must exist exactly once (``missing``/``duplicated``).

Prints per run and in total, ending with ``edits N, lost L (late saves kept K); deletes M,
resurrected R`` (K: saves that landed in an old file after the pass wrote the note, and were
kept; see ``vaultmem.store.late_writes``).

    python -m benchmarks.racing_writers [--runs 40] [--memories 400] [--interval-ms 1]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from vaultmem import Vault
from vaultmem.core.notes.note_text import render_note

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
T0 = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC)
FOLDERS = ("STM", "Boxes", "Archive")


@dataclass(slots=True)
class Tally:
    """What the racing writer did and what the pass left."""

    edits: int = 0
    deletes: int = 0
    lost: int = 0
    resurrected: int = 0
    missing: int = 0
    duplicated: int = 0
    applied: int = 0
    skipped: int = 0
    late: int = 0
    """Saves the pass found in a note's old file after writing the note, and kept."""
    seconds: float = 0.0
    markers: list[tuple[str, str]] = field(default_factory=list)
    """(marker, name of the note it was appended to)."""
    deleted: set[str] = field(default_factory=set)
    error: BaseException | None = None
    """What stopped the racing writer early, if anything did (the run then proves nothing)."""

    def add(self, other: Tally) -> None:
        for name in (
            "edits",
            "deletes",
            "lost",
            "resurrected",
            "missing",
            "duplicated",
            "applied",
            "skipped",
            "late",
            "seconds",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def prepare(root: Path, memories: int) -> list[str]:
    """A vault with ``memories`` old STM memories (sealed, then forgotten, by one pass)."""
    Vault.init(root)
    names = []
    rng = random.Random(8)
    for i in range(memories):
        created = T0 + dt.timedelta(minutes=4 * i)
        topic = f"topic{i // 25}"
        fields: dict[str, object] = {
            "id": f"RACE{i:06d}",
            "type": "memory",
            "status": "active",
            "layer": "working",
            "category": "fact",
            "created": created,
            "last_used": created,
            "use_count": 1,
            "strength": 1.0,
            "importance": 0.1,
            "confidence": 1.0,
            "source": "agent",
            "pinned": False,
            "tags": [topic],
        }
        name = f"race note {i:04d}"
        body = f"Memory {i} about {topic}: " + " ".join(rng.choice("abcdefgh") for _ in range(40))
        (root / "STM" / f"{name}.md").write_text(render_note(fields, body + "\n"), "utf-8")
        names.append(name)
    with Vault.open(root) as vault:
        vault.sync()
    return names


def _memory_files(root: Path) -> list[Path]:
    """The race notes where they are now. The pass removes the folders it empties while this
    walks, so a folder that vanishes is passed over (``os.walk`` ignores it) rather than fatal."""
    found = []
    for folder in FOLDERS:
        for parent, _, names in os.walk(root / folder):
            found += [
                Path(parent, name)
                for name in names
                if name.startswith("race note ")
                and name.endswith(".md")
                and "Conflicted copy" not in name
            ]
    return found


def _racer(root: Path, run: int, tally: Tally, stop: threading.Event, interval: float) -> None:
    try:
        _race(root, run, tally, stop, interval)
    except BaseException as err:  # kept for race_once to raise: a dead racer races nothing
        tally.error = err


def _race(root: Path, run: int, tally: Tally, stop: threading.Event, interval: float) -> None:
    rng = random.Random(run)
    files: list[Path] = []
    step = 0
    while not stop.is_set():
        if step % 8 == 0:
            files = _memory_files(root)
        step += 1
        if not files:
            time.sleep(interval)
            continue
        path = rng.choice(files)
        if rng.random() < 0.14:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            else:
                tally.deletes += 1
                tally.deleted.add(path.name)
        else:
            marker = f"marker {run}-{step}"
            try:
                fd = os.open(path, os.O_WRONLY | os.O_APPEND)  # an existing note only
            except FileNotFoundError:
                pass
            else:
                try:
                    os.write(fd, f"\n{marker}\n".encode())
                finally:
                    os.close(fd)
                tally.edits += 1
                tally.markers.append((marker, path.name))
        time.sleep(interval * rng.uniform(0.5, 1.5))


def race_once(base: Path, work: Path, run: int, interval: float) -> Tally:
    """One pass with the racing writer on a fresh copy of ``base``; returns the tally."""
    root = work / f"run{run}"
    shutil.copytree(base, root)
    tally = Tally()
    stop = threading.Event()
    with Vault.open(root) as vault:
        vault.sync()
        racer = threading.Thread(target=_racer, args=(root, run, tally, stop, interval))
        started = time.perf_counter()
        racer.start()
        try:
            result = vault.lifecycle(now=NOW, command="lifecycle")
        finally:
            stop.set()
            racer.join()
        if tally.error is not None:
            raise RuntimeError(f"run {run}: the racing writer stopped early") from tally.error
        tally.seconds = time.perf_counter() - started
        tally.applied = len(result.applied)
        tally.skipped = sum(len(r.skipped) for r in result.results)
        tally.late = len(result.late_saves)
    texts = []
    names: dict[str, int] = {}
    for path in root.rglob("*.md"):
        if ".vaultmem" in path.parts:
            continue
        texts.append(path.read_text("utf-8", errors="replace"))
        if path.name.startswith("race note ") and "Conflicted copy" not in path.name:
            names[path.name] = names.get(path.name, 0) + 1
    everything = "\n".join(texts)
    tally.lost = sum(
        1
        for marker, name in tally.markers
        if name not in tally.deleted and f"\n{marker}\n" not in everything
    )
    tally.resurrected = sum(1 for name in tally.deleted if names.get(name))
    expected = {p.name for p in (base / "STM").glob("race note *.md")} - tally.deleted
    tally.missing = sum(1 for name in expected if not names.get(name))
    tally.duplicated = sum(1 for name in expected if names.get(name, 0) > 1)
    leftovers = list(root.rglob(".*.vaultmem-old")) + list(root.rglob(".*.vaultmem-tmp"))
    tally.missing += len(leftovers)  # a note left aside is not where a person can see it
    shutil.rmtree(root)
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--memories", type=int, default=400)
    parser.add_argument("--interval-ms", type=float, default=1.0)
    args = parser.parse_args(argv)
    total = Tally()
    with tempfile.TemporaryDirectory(prefix="vaultmem-race-") as tmp:
        work = Path(tmp)
        base = work / "base"
        prepare(base, args.memories)
        for run in range(args.runs):
            tally = race_once(base, work, run, args.interval_ms / 1000)
            total.add(tally)
            print(
                f"run {run + 1:2d}: {tally.seconds:5.2f} s, applied {tally.applied}, "
                f"skipped {tally.skipped}; edits {tally.edits}, lost {tally.lost} "
                f"(late saves kept {tally.late}); "
                f"deletes {tally.deletes}, resurrected {tally.resurrected}; "
                f"missing {tally.missing}, duplicated {tally.duplicated}",
                flush=True,
            )
    print(
        f"{args.runs} runs over {args.memories} memories, {total.seconds:.1f} s of passes; "
        f"moves applied {total.applied}, skipped {total.skipped}; "
        f"missing {total.missing}, duplicated {total.duplicated}"
    )
    print(
        f"edits {total.edits}, lost {total.lost} (late saves kept {total.late}); "
        f"deletes {total.deletes}, "
        f"resurrected {total.resurrected}"
    )
    bad = total.lost or total.resurrected or total.missing or total.duplicated
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
