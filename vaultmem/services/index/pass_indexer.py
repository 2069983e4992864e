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
:func:`~vaultmem.services.index.index_sync.sync_paths`), and ``"commit"`` when it is about to
wait for the answers; the helper answers each batch, in order, with ``{"batch": n, "ok": true}``
or ``{"batch": n, "error": "<one line>"}``, ``n`` counting batches from 1. Any other line ends
the exchange: every batch not yet answered is then left to the pass.

The helper indexes each batch as it comes, but commits (and only then answers) when the pass
says ``"commit"``, when its input ends, or when its transaction has been open
:data:`COMMIT_SECONDS`: every commit writes each page it changed to the write-ahead log again,
and a pass's batches change the same pages (the note table's, the links', the full-text
index's). A sync that fails rolls the transaction back; each batch it held is then indexed
again in a transaction of its own, so only the batch that fails is answered so.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

import vaultmem
from vaultmem.core.collector import collector_paused
from vaultmem.errors import VaultmemError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vaultmem.core.settings import Settings
    from vaultmem.services.index.index_reads import WrittenNote
    from vaultmem.store.index_db import IndexDB

Batch = tuple[list[str], dict[str, list[object]]]
"""A batch as the helper takes it: paths, and the written notes among them (path → [text, size,
mtime_ns])."""

COMMIT = "commit"
"""The line (a JSON string) by which the pass asks for the answers to everything handed over."""
COMMIT_SECONDS = 1.0
"""Longest the helper keeps what it indexed uncommitted (another writer of the index, say a
watcher's sync, waits for it that long at most). A 6,095-move pass of a 10,000-note vault wrote
186 MB to the write-ahead log committing each of its 43 batches, 27 MB committing once."""
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
        if self._pending and not self._broken:  # what it indexed is committed and answered
            # (an input already closed: it answers as it ends; one gone: its answers are missing)
            with contextlib.suppress(OSError, ValueError):
                assert self._process.stdin is not None
                self._process.stdin.write(json.dumps(COMMIT) + "\n")
                self._process.stdin.flush()
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
    batches: queue.SimpleQueue[Batch | str | None] = queue.SimpleQueue()

    def read_input() -> None:  # drained at once: the pass never waits to hand a batch over
        try:
            for line in sys.stdin:
                batch = json.loads(line)
                if isinstance(batch, dict):
                    batches.put((batch["paths"], batch["written"]))
                elif isinstance(batch, list):
                    batches.put((batch, {}))
                elif batch == COMMIT:
                    batches.put(COMMIT)
                else:
                    break
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
    from vaultmem.services.index.index_reads import WrittenNote
    from vaultmem.services.index.index_sync import sync_paths

    try:
        paths = [path for batch, _ in batches for path in batch]
        written = {
            path: WrittenNote(*note)  # type: ignore[arg-type]  # (the error is answered)
            for _, notes in batches
            for path, note in notes.items()
        }
        sync_paths(root, db, settings, paths, written)
    except Exception as err:  # the pass indexes these paths itself, and meets it there
        return _error(err)
    return {"ok": True}


def _error(err: Exception) -> dict[str, object]:
    """The answer for a batch that failed with ``err``: its first line."""
    return {"error": (f"{type(err).__name__}: {err}".splitlines() or ["?"])[0]}


class _Answers:
    """The helper's open transaction, the batches indexed in it and their answers, held back
    until it is committed."""

    def __init__(self, root: Path, db: IndexDB, settings: Settings) -> None:
        self.root, self.db, self.settings = root, db, settings
        self.held: list[tuple[Batch, dict[str, object]]] = []
        self.opened = 0.0  # time.monotonic() when the transaction began
        self.open_here = False  # whether the connection's open transaction is this one's
        self.sent = 0

    def index(self, group: list[Batch]) -> None:
        """Index ``group`` (one sync) in the open transaction, beginning one if none is.

        Where the sync fails, the transaction is rolled back, and every batch it held and each
        of ``group`` is indexed again on its own, each in a transaction of its own: only the
        batch that fails is answered so. Where no transaction can begin (the index busy), the
        sync tries on its own and answers why not."""
        if not self.open_here:
            self.opened = time.monotonic()
            with contextlib.suppress(VaultmemError):
                self.db.conn.execute("BEGIN IMMEDIATE")
                self.open_here = True
        answer = _index(self.root, self.db, self.settings, group)
        if "error" not in answer:
            self.held += [(batch, answer) for batch in group]
            return
        again = group
        if self.open_here:  # the whole transaction goes: what it held is indexed again too
            again = [batch for batch, _ in self.held] + group
            self.held = []
            self._roll_back()
        elif len(group) == 1:  # indexed alone, in a transaction of its own: its answer
            again = []
            self.held.append((group[0], answer))
        for batch in again:  # (each in a transaction of its own now)
            self.held.append((batch, _index(self.root, self.db, self.settings, [batch])))

    def due(self) -> float | None:
        """Seconds left before the open transaction must be committed (``None``: nothing is
        held back)."""
        if not self.open_here:
            return None if not self.held else 0.0
        return max(0.0, self.opened + COMMIT_SECONDS - time.monotonic())

    def commit(self) -> None:
        """Commit what was indexed, then send every answer held, in order."""
        answers = [answer for _, answer in self.held]
        self.held = []
        if self.open_here:
            failed: dict[str, object] | None = None
            if not self.db.conn.in_transaction:  # (rolled back by SQLite itself)
                failed = {"error": "rolled back"}
            else:
                try:
                    self.db.conn.execute("COMMIT")
                except Exception as err:  # none of it is in the index: the pass indexes it all
                    failed = _error(err)
            self._roll_back()
            if failed is not None:
                answers = [answer if "error" in answer else failed for answer in answers]
        for answer in answers:
            self.sent += 1
            sys.stdout.write(json.dumps({"batch": self.sent, **answer}) + "\n")
        sys.stdout.flush()

    def _roll_back(self) -> None:
        if self.db.conn.in_transaction:
            with contextlib.suppress(Exception):  # (a damaged index may refuse even that)
                self.db.conn.execute("ROLLBACK")
        self.open_here = False


def _answer_batches(
    root: Path, db: IndexDB, settings: Settings, batches: queue.SimpleQueue[Batch | str | None]
) -> None:
    """Index the batches with :func:`sync_paths` and answer each, until the input ends.

    Batches that are already waiting when one is taken go with it, up to
    :data:`COALESCE_PATHS` paths, into one sync: when the helper has fallen behind the pass,
    each sync's fixed work (resolving links to the notes that moved, counting edges) is done
    once for several batches instead of once each. Syncs run in one transaction, committed as
    the module docstring says; a failure is met as :meth:`_Answers.index` says."""
    answers = _Answers(root, db, settings)
    try:
        ended = False
        while not ended:
            try:
                batch = batches.get(timeout=answers.due())
            except queue.Empty:  # held open long enough: committed, answered
                answers.commit()
                continue
            if batch is None:
                break
            if batch == COMMIT:
                answers.commit()
                continue
            assert not isinstance(batch, str)
            group = [batch]
            commit = False
            while sum(len(paths) for paths, _ in group) < COALESCE_PATHS:
                try:
                    more = batches.get_nowait()
                except queue.Empty:
                    break
                if more is None or more == COMMIT:
                    ended, commit = more is None, True
                    break
                assert not isinstance(more, str)
                group.append(more)
            answers.index(group)
            if commit or answers.due() == 0.0:
                answers.commit()
        answers.commit()
    finally:
        db.close()
