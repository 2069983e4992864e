"""The pass journal: every file operation of a pass, written ahead, so it can be undone or finished.

docs/user-guide.md, "Journal, undo and safety": applying a pass writes a journal entry per move or
edit to ``.vaultmem/journal`` so ``vaultmem undo`` can reverse the last pass. Each operation is
appended *before* it touches a file, and marked ``done`` (or ``skipped``: a person's edit or delete
won the race) after — a ``done`` mark goes out with the next line written, and one lost with a
killed process is found again by :func:`recover`; the texts before and after are kept, so

- :func:`recover` rolls an interrupted pass forward to its planned end (every note exists
  exactly once at every instant: a move renames the note and gives it its new fields in one
  step; an edit is one owned, atomic replace), and
- :func:`~vaultmem.store.journal_undo.undo` puts every file back byte for byte (in
  :mod:`vaultmem.store.journal_undo`, journaled in the same file).

One journal file per applied command: ``<started>-<command>.jsonl``; an undone journal is renamed
``….undone.jsonl``. Journals are read back through :mod:`vaultmem.store.journal_check`, which
refuses any line that is damaged or reaches outside what vaultmem manages.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from vaultmem.core.notes.content_hash import content_hash
from vaultmem.errors import (
    JournalWriteError,
    NoteChangedError,
    UnsafePathError,
    VaultmemError,
)
from vaultmem.store.durability import fsync_dir
from vaultmem.store.interrupted_writes import recover_interrupted_writes
from vaultmem.store.interrupts import stop_if_requested
from vaultmem.store.journal_check import JournalEntry, Operation, read_journal
from vaultmem.store.journal_entries import ends_complete
from vaultmem.store.note_batch import flush_files
from vaultmem.store.note_files import (
    StagedText,
    add_note,
    delete_note,
    discard_staged,
    move_note,
    replace_note,
    stage_text,
)
from vaultmem.store.raw_reads import read_to_end
from vaultmem.store.vault_paths import confined

JOURNAL_DIR = "journal"
_HEADER_KEYS = ("journal", "command", "now", "started")

__all__ = [
    "JournalEntry",
    "JournalWriter",
    "Operation",
    "append_record",
    "apply_operation",
    "file_sha",
    "journals",
    "read_journal",
    "recover",
    "reopen_journal",
    "text_sha",
]


def text_sha(text: str | None) -> str | None:
    """The content hash of a note's text (``None``: the note does not exist)."""
    return None if text is None else content_hash(text.encode("utf-8"))


Located = tuple[Path | None, Path]
"""An operation's source (``None`` but for a move) and target as absolute paths, each the result
of :func:`~vaultmem.store.vault_paths.confined` for the operation's vault-relative path, a
move's target found free (no file there) too: a pass that has just checked them hands them on
instead of having them checked again (a move's link never replaces a file all the same)."""


def journal_dir(sidecar: Path) -> Path:
    return sidecar / JOURNAL_DIR


def append_record(
    handle: IO[str],
    record: dict[str, Any] | str,
    *,
    durable: bool = False,
    held: bool = False,
    nothing: bool = False,
) -> None:
    """Append ``record`` as one JSON line, flushed to the kernel (``durable``: fsynced too).
    A ``str`` record is that line already (JSON, no newline).

    ``held``: left in the buffer, to be written with the next flushed record (a ``done``
    mark: if the process dies first, recovery finds the note as the operation left it and marks
    it done then). Raises an error naming the journal when it cannot be written (a
    full disk) as :class:`JournalWriteError`: a line written in part announces a step that
    never started.
    """
    try:
        if not nothing:  # ``nothing``: only flush (and with ``durable``, fsync) what is written
            # non-ASCII as \u escapes: json's default encoder takes half the time of
            # ensure_ascii=False over a note's text (the line reads back the same)
            handle.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
        if not held:
            handle.flush()
        if durable:
            os.fsync(handle.fileno())
    except OSError as err:
        raise JournalWriteError(
            getattr(handle, "name", "the journal"),
            f"cannot write the journal: {err.strerror}; stopped before the next step (once "
            "there is room, run the command again to finish it, or `vaultmem undo`)",
        ) from None


@contextmanager
def reopen_journal(path: Path) -> Iterator[IO[str]]:
    """A journal opened to append to it, first cutting off a torn last line (written in part: a
    kill or a full disk mid-append; the step it announced never started), so the next line
    starts a line of its own instead of joining the torn one. Closed on leaving; a line that
    could not be written (:class:`JournalWriteError` raised meanwhile) is not tried again."""
    with open(path, "rb+") as raw:
        data = raw.read()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            raw.truncate(end)
            raw.flush()
            os.fsync(raw.fileno())
    handle = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        yield handle
    finally:
        with contextlib.suppress(OSError):  # a full disk: the error raised already says so
            handle.close()


class StagedSlot:
    """A note's next text to be written ahead (:func:`stage_text`) by a :class:`StagingThread`;
    ``staged`` is the result once written (``None`` before, or when writing it failed: the
    operation then writes its own, and meets the error itself if it persists). ``mode``: the
    note's permission bits where known (else looked up as it is written)."""

    __slots__ = ("mode", "path", "staged", "text")

    def __init__(self, path: Path, text: str, mode: int | None = None) -> None:
        self.path = path
        self.text = text
        self.mode = mode
        self.staged: StagedText | None = None


class StagingThread:
    """Writing ``slots`` ahead (:func:`stage_text`), then one flush to disk
    (:func:`~vaultmem.store.note_batch.flush_files`) of them and of ``files`` (written already),
    on a helper thread while the caller goes on.

    Creating each temp file is most of the cost of writing a text ahead, and it is the kernel's
    (on ext4 without a journal it passes over every inode freed in the last minutes): the
    thread does it beside the caller's reading, editing and renaming, on a second core.
    """

    def __init__(self, root: Path, slots: list[StagedSlot], files: list[Path]) -> None:
        self.slots = frozenset(map(id, slots))
        self.files = list(files)
        """What it flushes: ``files`` and each slot's temp file, once written."""
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(root, slots), name="vaultmem-flush", daemon=True
        )
        self._thread.start()

    def _run(self, root: Path, slots: list[StagedSlot]) -> None:
        try:
            present: set[str] = set()  # folders found or made: each looked at once
            for slot in slots:
                with contextlib.suppress(VaultmemError, OSError):  # written later, by its step
                    slot.staged = stage_text(slot.path, slot.text, mode=slot.mode, present=present)
                    self.files.append(slot.staged.temp)
            flush_files(root, self.files)
        except BaseException as err:  # handed to whoever waits: never lost on the thread
            self._error = err

    def wait(self) -> None:
        self._thread.join()
        if self._error is not None:
            raise self._error


class JournalWriter:
    """Appends operations of one command and carries them out (write-ahead)."""

    def __init__(
        self,
        root: Path,
        sidecar: Path,
        command: str,
        now: dt.datetime,
        origin: Mapping[str, str] | None = None,
    ) -> None:
        """``origin``: who runs the command, written into the header (``who``: cli, mcp,
        cron…; ``session``: the MCP server's) so ``undo --list`` can say and MCP can choose."""
        self.root = root
        folder = journal_dir(sidecar)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
        self.path = folder / f"{stamp}-{command}.jsonl"
        # kept open across operations and closed by close()/abandon()
        self._handle: IO[str] = open(self.path, "x", encoding="utf-8")  # noqa: SIM115
        self._seq = 0
        self.applied = 0
        """Operations carried out (not skipped) so far."""
        self._staged: dict[tuple[str, str], StagedSlot] = {}  # (note, its next text) → staged
        self._unwritten: list[StagedSlot] = []  # staged, not yet handed to a StagingThread
        self._unflushed: list[Path] = []  # written ahead, but a flush of them failed
        self._flushing: StagingThread | None = None  # writing and flushing on a helper thread
        append_record(
            self._handle,
            {
                "journal": 1,
                "command": command,
                "now": now.isoformat(),
                "started": dt.datetime.now(dt.UTC).isoformat(),
                **{k: v for k, v in (origin or {}).items() if k not in _HEADER_KEYS},
            },
            durable=True,
        )
        fsync_dir(folder)

    def _run(
        self, operation: Operation, at: Located | None = None, before_sha: str | None = None
    ) -> None:
        # Written ahead and flushed to the kernel before the file is touched, so a killed pass
        # is always recoverable; fsynced together with the folders when the journal closes.
        stop_if_requested(
            "run the same command again to finish the pass, or `vaultmem undo` to revert it"
        )
        note = operation.source or operation.target
        slot = self._staged.pop((note, operation.after or ""), None)
        staged = None
        if slot is not None:  # never linked in place before its bytes are on disk
            try:
                if self._unwritten or self._unflushed:
                    self.flush_staged()
                if self._flushing is not None and id(slot) in self._flushing.slots:
                    self.settle_flush()
            except BaseException:  # not journaled yet: the note is simply not written
                if slot.staged is not None:
                    discard_staged(slot.staged)
                raise
            staged = slot.staged
        append_record(self._handle, operation.as_line())
        try:
            apply_operation(
                self.root, operation, strict=True, staged=staged, at=at, before_sha=before_sha
            )
        except (VaultmemError, OSError):
            if staged is not None:
                discard_staged(staged)
            append_record(self._handle, {"skipped": operation.seq})
            raise
        append_record(self._handle, f'{{"done": {operation.seq}}}', held=True)  # with the next
        self.applied += 1

    def stage(
        self, rel: str, text: str, *, path: Path | None = None, mode: int | None = None
    ) -> None:
        """Have ``text`` written ahead beside the note ``rel`` (vault-relative) for a later
        operation, by the next :meth:`flush_staged`.

        An operation whose note (a move's source, an edit's or create's target) and new text
        match a staged text links that file instead of writing and fsyncing its own, so a batch
        of notes costs one flush to disk (:meth:`flush_staged`) instead of one per note. The
        staged file is hidden (a temp name); the operation still owns and checks the note then.
        ``path``: ``rel`` as :func:`~vaultmem.store.vault_paths.confined` returned it just before
        (not checked again); ``mode``: the note's permission bits as it was read (the operation
        sets the note's mode as it is then). A text that cannot be written ahead is written by
        its operation.
        """
        key = (rel, text)  # the text itself: the operation hands over the same string
        if key in self._staged:
            return
        slot = StagedSlot(path or confined(self.root, rel), text, mode)
        self._staged[key] = slot
        self._unwritten.append(slot)

    def flush_staged(self, *, wait: bool = True) -> None:
        """Write every staged text ahead and make it durable (one ``syncfs``; done before any
        is linked in place).

        ``wait=False``: the writing and the flush run on a helper thread
        (:class:`StagingThread`) while the caller goes on (checking and editing the next batch,
        say); an operation that links one of these texts waits for it first, and so do
        :meth:`settle_flush`, the next flush, :meth:`close` and :meth:`abandon`. An error of
        that flush is raised by whichever waits for it.
        """
        self.settle_flush()  # one flush at a time, in the order the texts were staged
        slots, self._unwritten = self._unwritten, []
        files, self._unflushed = self._unflushed, []
        if not slots and not files:
            return
        self._flushing = StagingThread(self.root, slots, files)
        if wait:
            self.settle_flush()

    def settle_flush(self) -> None:
        """Wait for the :class:`StagingThread` running (raising its error, if it failed: its
        files then count as not flushed, so the next operation linking one flushes again).

        Call before starting worker processes: the index sync forks them only when this
        process runs a single thread.
        """
        flushing, self._flushing = self._flushing, None
        if flushing is None:
            return
        try:
            flushing.wait()
        except BaseException:
            self._unflushed[:0] = flushing.files
            raise

    def discard_staged(self) -> None:
        """Remove staged texts no operation used (their notes were skipped)."""
        with contextlib.suppress(OSError):
            self.settle_flush()  # nothing of it is linked any more: its outcome is moot
        staged, self._staged = self._staged, {}
        self._unwritten, self._unflushed = [], []
        for slot in staged.values():
            if slot.staged is not None:
                discard_staged(slot.staged)

    def _next(
        self, kind: str, source: str | None, target: str, before: str | None, after: str | None
    ) -> Operation:
        self._seq += 1
        return Operation(self._seq, kind, source, target, before, after)

    def move(
        self,
        source: str,
        target: str,
        before: str,
        after: str,
        *,
        at: Located | None = None,
        before_sha: str | None = None,
    ) -> None:
        """Move ``source`` to ``target`` (kept base name) with text ``after``, in one step.

        Raises :class:`NoteChangedError` (nothing moved) if ``source`` no longer holds ``before``.
        ``at`` (every operation): the paths as the caller had them confined (:data:`Located`).
        ``before_sha`` (move, edit, delete): the content hash of the bytes ``before`` was decoded
        from, where the caller has it (not worked out again).
        """
        self._run(self._next("move", source, target, before, after), at, before_sha)

    def create(self, target: str, text: str, *, at: Located | None = None) -> None:
        """Create a new note (refuses to replace an existing file)."""
        self._run(self._next("create", None, target, None, text), at)

    def edit(
        self,
        target: str,
        before: str,
        after: str,
        *,
        at: Located | None = None,
        before_sha: str | None = None,
    ) -> None:
        """Replace a note's text in place (if it still holds ``before``)."""
        self._run(self._next("edit", None, target, before, after), at, before_sha)

    def delete(
        self, target: str, before: str, *, at: Located | None = None, before_sha: str | None = None
    ) -> None:
        """Delete a note (``gc --hard``) if it still holds ``before``; undo writes it back."""
        self._run(self._next("delete", None, target, before, None), at, before_sha)

    def close(self) -> None:
        """Mark the journal complete (fsynced)."""
        self.discard_staged()
        append_record(self._handle, {"complete": True}, durable=True)
        self._handle.close()

    def abandon(self) -> None:
        """Close without marking complete (an error stopped the pass; recover finishes it).

        A journal that cannot be flushed (a full disk) is closed all the same: its torn last
        line announces a step that never started."""
        self.discard_staged()
        with contextlib.suppress(OSError):
            self._handle.flush()
            os.fsync(self._handle.fileno())
        with contextlib.suppress(OSError):
            self._handle.close()


def apply_operation(
    root: Path,
    op: Operation,
    *,
    strict: bool = False,
    staged: StagedText | None = None,
    at: Located | None = None,
    before_sha: str | None = None,
) -> bool:
    """Carry ``op`` forward; returns whether the note is now as ``op`` leaves it.

    ``strict`` (the pass itself): the note must hold ``op.before`` — else
    :class:`NoteChangedError` and nothing is done. Otherwise (recovering after a crash) each
    step happens only from the state the journal says it starts from, so an operation that was
    already done, or overtaken by a person's edit, is left alone. Paths are confined to the vault.
    ``staged`` (strict only): ``op.after`` already written and flushed beside the note.
    ``at`` (strict only): ``op``'s source and target as the pass itself had them confined just
    before (:data:`Located`); never taken from a journal being recovered. ``before_sha`` (strict
    only): the content hash of the bytes ``op.before`` was read from.
    """
    if strict and at is not None:  # as the pass checked them just before (Located)
        _carry(op, at[0], at[1], staged, before_sha, free=True)
        return True
    target = confined(root, op.target)
    source = confined(root, op.source) if op.source is not None else None
    if strict:
        _carry(op, source, target, staged, before_sha)
        return True
    before, after = text_sha(op.before), text_sha(op.after)
    if staged is not None:
        discard_staged(staged)
    try:
        if op.kind == "move":
            assert source is not None
            now = file_sha(target)
            if now is None and file_sha(source) == before:
                _carry(op, source, target)
            elif now == before and after != before and not os.path.lexists(source):
                # an older journal moved first and edited after: finish the edit
                replace_note(target, op.after or "", expected_sha256=before or "")
        elif op.kind == "create":
            if not os.path.lexists(target):
                _carry(op, source, target)
        elif file_sha(target) == before:  # edit, delete
            _carry(op, source, target)
    except NoteChangedError:
        pass
    if op.kind == "move":
        return file_sha(target) == after and not os.path.lexists(source or target)
    return file_sha(target) == after


def _carry(
    op: Operation,
    source: Path | None,
    target: Path,
    staged: StagedText | None = None,
    before_sha: str | None = None,
    *,
    free: bool = False,
) -> None:
    """Carry ``op`` out from the state it starts from (``before_sha``: the hash of ``op.before``
    where the caller knows it, from the very bytes it read; ``free``: a move's target was found
    free just before, :data:`Located`)."""
    before = before_sha or text_sha(op.before) or ""
    if op.kind == "move":
        assert source is not None
        text = op.after if op.after != op.before else None
        move_note(source, target, text=text, expected_sha256=before, staged=staged, free=free)
    elif op.kind == "create":
        add_note(target, op.after or "", staged=staged)
    elif op.kind == "edit":
        move_note(target, target, text=op.after or "", expected_sha256=before, staged=staged)
    elif op.kind == "delete":
        delete_note(target, expected_sha256=before)
    else:  # pragma: no cover - journal_check admits only these
        raise VaultmemError(f"unknown journal operation {op.kind!r}")


def file_sha(path: Path) -> str | None:
    """The content hash of the file at ``path`` (``None``: there is no file). Read without a
    Python file object (:func:`~vaultmem.store.raw_reads.read_to_end`): an undo hashes every
    note its pass wrote."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        return content_hash(read_to_end(fd))
    except IsADirectoryError:
        return None
    finally:
        os.close(fd)


def journals(sidecar: Path) -> list[Path]:
    """Journal files, oldest first."""
    folder = journal_dir(sidecar)
    return sorted(p for p in folder.glob("*.jsonl") if p.is_file()) if folder.is_dir() else []


def incomplete_journals(
    root: Path, sidecar: Path, folders: tuple[str, ...]
) -> Iterator[JournalEntry]:
    for path in journals(sidecar):
        if path.name.endswith(".undone.jsonl") or ends_complete(path):
            continue
        entry = read_journal(path, root, folders)
        if not entry.complete:
            yield entry


def recover(root: Path, sidecar: Path, folders: tuple[str, ...]) -> list[JournalEntry]:
    """Finish every interrupted pass (roll forward), then mark its journal complete.

    First every journal is read and checked (a bad line refuses everything, naming it), then
    what killed writes left in the memory ``folders`` is finished
    (``recover_interrupted_writes``), then each operation that
    is neither done nor skipped is carried forward and recorded as done or skipped.
    """
    entries = list(incomplete_journals(root, sidecar, folders))
    sweep_interrupted_writes(root, folders)
    for entry in entries:
        if not entry.header:  # torn before its header was whole: the pass never started
            entry.path.unlink(missing_ok=True)
            continue
        with reopen_journal(entry.path) as handle:
            for op in entry.operations:
                if op.seq in entry.done or op.seq in entry.skipped:
                    continue
                reached = apply_operation(root, op)
                (entry.done if reached else entry.skipped).add(op.seq)
                append_record(handle, {"done" if reached else "skipped": op.seq})
            append_record(handle, {"complete": True, "recovered": True}, durable=True)
        entry.complete = True
    return entries


def sweep_interrupted_writes(root: Path, folders: Iterable[str]) -> list[Path]:
    """:func:`recover_interrupted_writes` over each memory folder (recursively)."""
    restored: list[Path] = []
    for folder in folders:
        try:
            path = confined(root, folder.strip("/") + "/x.md").parent
        except UnsafePathError:
            continue
        if path.is_dir():
            restored += recover_interrupted_writes(path, recursive=True, search=root)
    return restored
