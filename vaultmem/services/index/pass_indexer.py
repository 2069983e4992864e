"""Re-indexing what a big lifecycle pass writes in a second process, while the pass goes on.

A pass over thousands of notes spends about a third of its time re-indexing what it wrote:
reading each note back, parsing it, storing its rows and links. Handed over batch by batch to a
helper process with its own connection to the index, that work runs on a second core beside the
pass's file operations. The pass waits for it only where it reads the index again (planning the
passes after seal) and at its end. Each batch is indexed by
:func:`~vaultmem.services.index.index_sync.sync_paths`, exactly as the pass's own process would
index it; a batch the helper did not index (an error, or the helper gone) is indexed by the pass's
process after all, so the index ends the same either way.

The helper is a new interpreter (``python -P -c …``, not a fork: an SQLite database must not be
carried across ``fork``), in a session of its own (a Ctrl-C in the terminal is the pass's to
handle), importing the very ``vaultmem`` the pass runs. It exits when its input ends or its
parent process is gone. Where it cannot start, the pass re-indexes in its own process.

Protocol, one JSON document per line: the pass writes a list of vault-relative paths per batch,
or ``{"paths": [...], "written": {path: [text, size, mtime_ns], ...}}`` when it hands over the
text of notes it has just written (indexed from that text, not read back: see ``written`` of
:func:`~vaultmem.services.index.index_sync.sync_paths`); the helper answers each batch, in
order, with ``{"batch": n, "ok": true}`` or ``{"batch": n, "error": "<one line>"}``, ``n``
counting batches from 1. Any other line ends the exchange: every batch not yet answered is then
left to the pass.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

import vaultmem
from vaultmem.core.collector import collector_paused

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vaultmem.core.settings import Settings
    from vaultmem.services.index.index_sync import WrittenNote
    from vaultmem.store.index_db import IndexDB

Batch = tuple[list[str], dict[str, list[object]]]
"""A batch as the helper takes it: paths, and the written notes among them (path → [text, size,
mtime_ns])."""

CLOSE_WAIT_SECONDS = 10.0
"""How long closing waits for the helper to end before killing it."""
COALESCE_PATHS = 2048
"""At most about this many paths of waiting batches are indexed in one sync (the first batch
taken always is, whatever its size)."""

_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from vaultmem.services.index.pass_indexer import serve; serve(sys.argv[2:])"
)


class PassIndexer:
    """The pass's side of the helper: hands batches over, waits for them, closes it."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self._process = process
        self._pending: deque[list[str]] = deque()
        self._answered = 0  # batches answered so far (the next answer is for batch + 1)
        self._broken = False
        self._failed: list[str] = []
        self.indexed = 0
        """Paths the helper has indexed (each once per batch that held it)."""

    @classmethod
    def start(cls, root: Path, sidecar: Path) -> PassIndexer | None:
        """The helper for the vault at ``root``, started; ``None`` if it cannot be."""
        package_parent = str(Path(vaultmem.__file__).resolve().parent.parent)
        try:
            process = subprocess.Popen(
                [sys.executable, "-P", "-c", _BOOT, package_parent,
                 str(root), str(sidecar), str(os.getpid())],  # fmt: skip
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                encoding="utf-8",
                start_new_session=True,
            )
        except (OSError, ValueError):
            return None
        return cls(process)

    def submit(self, paths: list[str], written: Mapping[str, WrittenNote] | None = None) -> None:
        """Hand ``paths`` (vault-relative) over to be re-indexed; returns at once. ``written``:
        notes among them just written, with their text, size and mtime (as for
        :func:`~vaultmem.services.index.index_sync.sync_paths`)."""
        if not self._broken:
            try:
                assert self._process.stdin is not None
                batch = {"paths": paths, "written": written} if written else paths
                self._process.stdin.write(json.dumps(batch) + "\n")  # ASCII: any name passes
                self._process.stdin.flush()
            except (OSError, ValueError):
                self._broken = True
            else:
                self._pending.append(paths)
                return
        self._failed += paths

    def wait(self) -> list[str]:
        """Block until every batch handed over is indexed. Returns the paths of the batches that
        were not (an error, or the helper gone), in the order handed over, for the caller to
        index itself."""
        failed, self._failed = self._failed, []
        while self._pending:
            batch = self._pending.popleft()
            answer: object = None
            if not self._broken:
                assert self._process.stdout is not None
                try:
                    line = self._process.stdout.readline()
                    answer = json.loads(line) if line else None
                except (OSError, ValueError):
                    answer = None
                self._answered += 1
                if not isinstance(answer, dict) or answer.get("batch") != self._answered:
                    self._broken = True  # its output ended, or is not an answer to this batch
            if not self._broken and isinstance(answer, dict) and answer.get("ok") is True:
                self.indexed += len(batch)
            else:
                failed += batch
        return failed

    def close(self) -> None:
        """End the helper (after :meth:`wait`, so nothing is left undone), killing it if it
        does not end within :data:`CLOSE_WAIT_SECONDS`."""
        with contextlib.suppress(OSError, ValueError):
            assert self._process.stdin is not None
            self._process.stdin.close()
        try:
            self._process.wait(timeout=CLOSE_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()


def serve(argv: list[str]) -> None:
    """The helper: ``argv`` is (vault root, sidecar folder, the pass's process id)."""
    from vaultmem.services.index.forked_workers import die_with_parent
    from vaultmem.store.index_db import IndexDB
    from vaultmem.store.settings_file import load_settings

    root, sidecar, parent = Path(argv[0]), Path(argv[1]), int(argv[2])
    die_with_parent(parent)
    batches: queue.SimpleQueue[Batch | None] = queue.SimpleQueue()

    def read_input() -> None:  # drained at once: the pass never waits to hand a batch over
        try:
            for line in sys.stdin:
                batch = json.loads(line)
                if isinstance(batch, dict):
                    batches.put((batch["paths"], batch["written"]))
                else:
                    batches.put((batch, {}))
        finally:  # its input ended (or was not a batch): the helper ends after what it has
            batches.put(None)

    threading.Thread(target=read_input, name="vaultmem-indexer-input", daemon=True).start()
    settings = load_settings(root)
    db = IndexDB.open(sidecar)
    with collector_paused():  # as in the pass itself: many small objects, no cycles
        _answer_batches(root, db, settings, batches)
    # every batch is answered (flushed) and the index closed: the interpreter's teardown of
    # what indexing built up would only keep the pass waiting (32 ms with it, 7-16 without)
    os._exit(0)


def _index(root: Path, db: IndexDB, settings: Settings, batches: list[Batch]) -> dict[str, object]:
    """Index the paths of ``batches`` (:func:`~vaultmem.services.index.index_sync.sync_paths`,
    from the text of those written); the answer's ``ok``, or its ``error`` in one line."""
    from vaultmem.services.index.index_sync import WrittenNote, sync_paths

    try:
        paths = [path for batch, _ in batches for path in batch]
        written = {
            path: WrittenNote(*note)  # type: ignore[arg-type]  # (the error is answered)
            for _, notes in batches
            for path, note in notes.items()
        }
        sync_paths(root, db, settings, paths, written)
    except Exception as err:  # the pass indexes these paths itself, and meets it there
        return {"error": (f"{type(err).__name__}: {err}".splitlines() or ["?"])[0]}
    return {"ok": True}


def _answer_batches(
    root: Path, db: IndexDB, settings: Settings, batches: queue.SimpleQueue[Batch | None]
) -> None:
    """Index the batches with :func:`sync_paths` and answer each, until the input ends.

    Batches that are already waiting when one is taken go with it, up to
    :data:`COALESCE_PATHS` paths, into one sync: when the helper has fallen behind the pass,
    each sync's fixed work (resolving links to the notes that moved, counting edges, the
    commit) is done once for several batches instead of once each; when such a sync fails, its
    batches are indexed again one by one, so only the batch that fails is answered so."""
    try:
        number = 0
        ended = False
        while not ended and (batch := batches.get()) is not None:
            group = [batch]
            while sum(len(paths) for paths, _ in group) < COALESCE_PATHS:
                try:
                    more = batches.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    ended = True
                    break
                group.append(more)
            whole = _index(root, db, settings, group)
            if len(group) > 1 and "error" in whole:  # which batch failed: each on its own
                answers = [_index(root, db, settings, [batch]) for batch in group]
            else:
                answers = [whole] * len(group)
            for answer in answers:
                number += 1
                sys.stdout.write(json.dumps({"batch": number, **answer}) + "\n")
            sys.stdout.flush()
    finally:
        db.close()
