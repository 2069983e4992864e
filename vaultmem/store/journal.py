"""The pass journal: every file operation of a pass, written ahead, so it can be undone or finished.

Spec section 4: applying a pass writes a journal entry per move or edit to ``.vaultmem/journal``
so ``vaultmem undo`` can reverse the last pass. Each operation is appended (and fsynced) *before*
it touches a file, and marked done after; the texts before and after are kept, so

- :func:`recover` rolls an interrupted pass forward to its planned end (every note exists
  exactly once at every instant: a move is one ``rename``; an edit one atomic replace), and
- :func:`undo` puts every file back byte for byte — after checking that no note changed since
  the pass (it refuses, naming the note, if one did).

One journal file per applied command: ``<started>-<command>.jsonl``; an undone journal is renamed
``….undone.jsonl``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from vaultmem.errors import NoteChangedError, VaultmemError
from vaultmem.store.note_files import Fingerprint, content_hash, fsync_dir, move_note, write_note

JOURNAL_DIR = "journal"


def _sha(text: str | None) -> str | None:
    return None if text is None else content_hash(text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Operation:
    """One file operation. ``kind``: move (rename, then edit), create, edit or delete.

    ``source``/``target`` are vault-relative; ``before``/``after`` the note's whole text before
    and after (``None`` where the file does not exist).
    """

    seq: int
    kind: str
    source: str | None
    target: str
    before: str | None
    after: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "op": self.kind,
            "seq": self.seq,
            "source": self.source,
            "target": self.target,
            "before": self.before,
            "after": self.after,
        }


@dataclass(slots=True)
class JournalEntry:
    """A journal file read back: its header, operations and which of them completed."""

    path: Path
    header: dict[str, Any]
    operations: list[Operation] = field(default_factory=list)
    done: set[int] = field(default_factory=set)
    complete: bool = False

    @property
    def undone(self) -> bool:
        return self.path.name.endswith(".undone.jsonl")


def journal_dir(sidecar: Path) -> Path:
    return sidecar / JOURNAL_DIR


class JournalWriter:
    """Appends operations of one command and carries them out (write-ahead)."""

    def __init__(self, root: Path, sidecar: Path, command: str, now: dt.datetime) -> None:
        self.root = root
        folder = journal_dir(sidecar)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
        self.path = folder / f"{stamp}-{command}.jsonl"
        # kept open across operations and closed by close()/abandon()
        self._handle: IO[str] = open(self.path, "x", encoding="utf-8")  # noqa: SIM115
        self._seq = 0
        self._append(
            {
                "journal": 1,
                "command": command,
                "now": now.isoformat(),
                "started": dt.datetime.now(dt.UTC).isoformat(),
            }
        )
        fsync_dir(folder)

    def _append(self, record: dict[str, Any], *, durable: bool = True) -> None:
        self._handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._handle.flush()
        if durable:
            os.fsync(self._handle.fileno())

    def _run(self, operation: Operation, expected: Fingerprint | None) -> None:
        # Written ahead and flushed to the kernel before the file is touched, so a killed pass
        # is always recoverable; fsynced together with the folders when the journal closes.
        self._append(operation.as_json(), durable=False)
        apply_operation(self.root, operation, expected=expected)
        self._append({"done": operation.seq}, durable=False)

    def _next(
        self, kind: str, source: str | None, target: str, before: str | None, after: str | None
    ) -> Operation:
        self._seq += 1
        return Operation(self._seq, kind, source, target, before, after)

    def move(
        self, source: str, target: str, before: str, after: str, expected: Fingerprint
    ) -> None:
        """Rename ``source`` to ``target`` (kept base name), then write ``after`` there."""
        self._run(self._next("move", source, target, before, after), expected)

    def create(self, target: str, text: str) -> None:
        """Create a new note (refuses to replace an existing file)."""
        self._run(self._next("create", None, target, None, text), None)

    def edit(self, target: str, before: str, after: str, expected: Fingerprint) -> None:
        """Replace a note's text in place."""
        self._run(self._next("edit", None, target, before, after), expected)

    def delete(self, target: str, before: str, expected: Fingerprint) -> None:
        """Delete a note (``gc --hard``); undo writes it back."""
        self._run(self._next("delete", None, target, before, None), expected)

    def close(self) -> None:
        """Mark the journal complete (fsynced)."""
        self._append({"complete": True})
        self._handle.close()

    def abandon(self) -> None:
        """Close without marking complete (an error stopped the pass; recover finishes it)."""
        self._handle.close()


def apply_operation(root: Path, op: Operation, *, expected: Fingerprint | None = None) -> None:
    """Carry ``op`` forward from whatever state it is in; safe to repeat after a crash.

    Each step happens only from the state the journal says it starts from (the ``before``
    text), so an operation that was already done — or superseded by a later one, or overtaken
    by a person's edit — is left alone.
    """
    target = root / op.target
    if op.kind == "move":
        assert op.source is not None
        source = root / op.source
        if not target.exists() and _file_sha(source) == _sha(op.before):
            move_note(source, target)
        if _file_sha(target) == _sha(op.before) and op.after != op.before:
            write_note(target, op.after or "", expected=expected or _fingerprint(target))
    elif op.kind == "create":
        if not target.exists():
            write_note(target, op.after or "", expected=None)
    elif op.kind == "edit":
        if _file_sha(target) == _sha(op.before):
            write_note(target, op.after or "", expected=expected or _fingerprint(target))
    elif op.kind == "delete":
        if _file_sha(target) == _sha(op.before):
            os.unlink(target)
            fsync_dir(target.parent)
    else:  # pragma: no cover - journals are written by this module
        raise VaultmemError(f"unknown journal operation {op.kind!r}")


def _file_sha(path: Path) -> str | None:
    try:
        return content_hash(path.read_bytes())
    except FileNotFoundError:
        return None


def _fingerprint(path: Path) -> Fingerprint:
    data = path.read_bytes()
    return Fingerprint(len(data), os.stat(path).st_mtime_ns, content_hash(data))


def read_journal(path: Path) -> JournalEntry:
    """Parse a journal file; a torn last line (killed mid-write) is ignored."""
    entry: JournalEntry | None = None
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break
            if entry is None:
                entry = JournalEntry(path, record)
            elif "op" in record:
                entry.operations.append(
                    Operation(
                        record["seq"],
                        record["op"],
                        record["source"],
                        record["target"],
                        record["before"],
                        record["after"],
                    )
                )
            elif "done" in record:
                entry.done.add(int(record["done"]))
            elif record.get("complete"):
                entry.complete = True
    return entry or JournalEntry(path, {})


def journals(sidecar: Path) -> list[Path]:
    """Journal files, oldest first."""
    folder = journal_dir(sidecar)
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def incomplete_journals(sidecar: Path) -> Iterator[JournalEntry]:
    for path in journals(sidecar):
        if path.name.endswith(".undone.jsonl"):
            continue
        entry = read_journal(path)
        if not entry.complete:
            yield entry


def recover(root: Path, sidecar: Path) -> list[JournalEntry]:
    """Finish every interrupted pass (roll forward), then mark its journal complete."""
    finished: list[JournalEntry] = []
    for entry in incomplete_journals(sidecar):
        for op in entry.operations:
            if op.seq not in entry.done:
                apply_operation(root, op)
        _remove_temp_files(root, entry)
        with open(entry.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"complete": True, "recovered": True}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        entry.complete = True
        finished.append(entry)
    return finished


def _remove_temp_files(root: Path, entry: JournalEntry) -> None:
    folders = {(root / op.target).parent for op in entry.operations}
    for folder in folders:
        for temp in folder.glob(".*.vaultmem-tmp") if folder.is_dir() else ():
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()


def last_undoable(sidecar: Path) -> JournalEntry | None:
    """The newest journal that has not been undone (``None`` if there is none)."""
    for path in reversed(journals(sidecar)):
        if not path.name.endswith(".undone.jsonl"):
            return read_journal(path)
    return None


def _undo_steps(root: Path, operations: list[Operation]) -> list[Operation]:
    """The operations to reverse, newest first, checked against the files before any is touched.

    Walks the journal backwards over a virtual view of the files, so a note moved twice in one
    pass (sealed into a box, then promoted) is followed through both moves. Operations already
    reverted (an interrupted undo) are skipped. Raises :class:`NoteChangedError` naming the first
    note that is neither as the pass left it nor as it was before.
    """
    state: dict[str, str | None] = {}

    def sha(rel: str) -> str | None:
        if rel not in state:
            state[rel] = _file_sha(root / rel)
        return state[rel]

    def refuse(rel: str) -> NoteChangedError:
        return NoteChangedError(rel, "changed after the pass; undo refused (nothing was changed)")

    steps: list[Operation] = []
    for op in reversed(operations):
        after, before = _sha(op.after), _sha(op.before)
        now = sha(op.target)
        if op.kind == "move":
            assert op.source is not None
            if now in (after, before) and sha(op.source) is None:
                state[op.target], state[op.source] = None, before
                steps.append(op)
            elif not (now is None and sha(op.source) == before):
                raise refuse(op.target)
        elif now == after:  # create (after = new text), edit, delete (after = None: gone)
            state[op.target] = before
            steps.append(op)
        elif now != before:
            raise refuse(op.target)
    return steps


def undo(root: Path, entry: JournalEntry) -> list[Operation]:
    """Reverse ``entry``'s operations, newest first; returns the operations reverted.

    Checks every operation first (:func:`_undo_steps`); if a note changed after the pass it
    raises :class:`NoteChangedError` naming it and changes nothing. Resumable.
    """
    steps = _undo_steps(root, entry.operations)
    for op in steps:
        target = root / op.target
        if op.kind == "move":
            assert op.source is not None
            if _file_sha(target) != _sha(op.before):
                write_note(target, op.before or "", expected=_fingerprint(target))
            move_note(target, root / op.source)
            _remove_empty_parents(target.parent, root)
        elif op.kind == "create":
            os.unlink(target)
            fsync_dir(target.parent)
            _remove_empty_parents(target.parent, root)
        elif op.kind == "edit":
            write_note(target, op.before or "", expected=_fingerprint(target))
        elif op.kind == "delete":
            write_note(target, op.before or "", expected=None)
    entry.path.rename(entry.path.with_name(entry.path.name.replace(".jsonl", ".undone.jsonl")))
    return steps


def _remove_empty_parents(folder: Path, root: Path) -> None:
    """Remove empty folders a pass created (``Boxes/<date>/<box>/``), up to a top folder."""
    while folder != root and folder.parent != root:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
