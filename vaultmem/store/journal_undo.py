"""Undoing a pass from its journal: every file put back byte for byte.

docs/user-guide.md, "Journal, undo and safety": :func:`undo` reverses the operations a pass
journaled (:mod:`vaultmem.store.journal`), newest first — after checking that no note changed since
the pass (it refuses, naming the note, if one did). The undo is journaled in the same file
(``undoing``/``undone`` per operation), so an undo that was killed or stopped resumes where it was
and never mistakes its own earlier steps for a person's change; once done the journal is renamed
``….undone.jsonl``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from vaultmem.errors import NoteChangedError, NoteError
from vaultmem.store.confinement import is_symlinked
from vaultmem.store.interrupts import stop_if_requested
from vaultmem.store.journal import (
    StagedSlot,
    StagingThread,
    append_record,
    file_sha,
    reopen_journal,
    text_sha,
)
from vaultmem.store.journal_check import JournalEntry, Operation
from vaultmem.store.note_files import (
    StagedText,
    create_note,
    delete_note,
    discard_staged,
    move_note,
    replace_note,
)
from vaultmem.store.vault_paths import confined

__all__ = ["UNDO_BATCH", "undo", "undo_steps_left"]


def _undo_steps(
    root: Path, operations: list[Operation]
) -> tuple[list[Operation], dict[int, str | None]]:
    """The operations to reverse, newest first, checked against the files before any is touched,
    and the content hash each one's note is to hold when it is reversed (by operation number).

    Walks the journal backwards over a virtual view of the files, so a note moved twice in one
    pass (sealed into a box, then promoted) is followed through both moves. Operations whose
    note is already as before are passed over. Raises :class:`NoteChangedError` naming the first
    note that is neither as the pass left it nor as it was before.
    """
    state: dict[str, str | None] = {}

    def sha(rel: str) -> str | None:
        if rel not in state:
            state[rel] = file_sha(confined(root, rel))
        return state[rel]

    def refuse(rel: str) -> NoteChangedError:
        return NoteChangedError(rel, "changed after the pass; undo refused (nothing was changed)")

    steps: list[Operation] = []
    found: dict[int, str | None] = {}
    for op in reversed(operations):
        after, before = text_sha(op.after), text_sha(op.before)
        now = found[op.seq] = sha(op.target)
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
    return steps, found


def undo(
    root: Path,
    entry: JournalEntry,
    progress: Callable[[int], None] | None = None,
    batch_done: Callable[[list[str]], None] | None = None,
) -> list[Operation]:
    """Reverse ``entry``'s operations, newest first; returns every operation reverted.

    ``progress(n)`` is called as steps are done (``n`` more each time; the total is
    :func:`undo_steps_left`'s); ``batch_done(paths)`` after each batch of :data:`UNDO_BATCH`
    reverts with the paths (vault-relative) they wrote or removed, to be re-indexed meanwhile.

    Checks every operation still to revert first (:func:`_undo_steps`); if a note changed after
    the pass it raises :class:`NoteChangedError` naming it and changes nothing. Each step is
    journaled before and after, so an interrupted undo resumes where it stopped; Ctrl-C stops
    it between two steps (:class:`~vaultmem.errors.InterruptedRunError`).
    """
    by_seq = {op.seq: op for op in entry.operations}
    remaining = [
        op for op in entry.operations if op.seq not in entry.skipped and op.seq not in entry.undone
    ]
    steps, found = _undo_steps(root, remaining)
    batches = [steps[start : start + UNDO_BATCH] for start in range(0, len(steps), UNDO_BATCH)]
    with reopen_journal(entry.path) as handle:
        if not entry.undo_started:
            append_record(handle, {"undo": "start"}, durable=True)
        ahead = _stage_reverts(root, batches[0]) if batches else None
        try:
            for number, batch in enumerate(batches):
                assert ahead is not None
                staged, ahead = _settled(ahead), None
                try:  # the next batch is written ahead while this one is reverted
                    if number + 1 < len(batches):
                        ahead = _stage_reverts(root, batches[number + 1])
                    for op in batch:
                        stop_if_requested("run `vaultmem undo` again to finish undoing")
                        append_record(handle, {"undoing": op.seq})
                        _revert(root, op, found[op.seq], staged.pop(op.seq, None))
                        append_record(handle, {"undone": op.seq}, held=True)  # with the next
                        entry.undone.add(op.seq)
                        if progress is not None:
                            progress(1)
                finally:
                    for item in staged.values():
                        discard_staged(item)
                if batch_done is not None:
                    batch_done([p for op in batch for p in (op.target, op.source) if p is not None])
        finally:
            if ahead is not None:  # stopped early: what was written ahead is removed
                with contextlib.suppress(OSError):
                    _settled(ahead)
                for slot in ahead[0].values():
                    if slot.staged is not None:
                        discard_staged(slot.staged)
        append_record(handle, {}, durable=True, nothing=True)
    one_per_folder: dict[str, str] = {}  # each folder a note was written in → one such note
    for op in entry.operations:
        for rel in (op.target, op.source):
            if rel is not None:
                one_per_folder.setdefault(rel.rpartition("/")[0], rel)
    _remove_empty_folders({confined(root, rel).parent for rel in one_per_folder.values()}, root)
    entry.path.rename(entry.path.with_name(entry.path.name.replace(".jsonl", ".undone.jsonl")))
    now_undone = {op.seq for op in steps}
    earlier = [by_seq[s] for s in sorted(entry.undone, reverse=True) if s not in now_undone]
    return earlier + steps


UNDO_BATCH = 500
"""Reverted texts written ahead and flushed to disk together (one ``syncfs``) before an undo
puts them in place, as a pass does with its new texts."""


Ahead = tuple[dict[int, StagedSlot], StagingThread]
"""The reverted texts of one batch (operation number → its slot), being written ahead."""


def _stage_reverts(root: Path, batch: list[Operation]) -> Ahead:
    """The texts ``batch``'s reverts will write, written ahead beside their notes and flushed at
    once, on a helper thread (:class:`~vaultmem.store.journal.StagingThread`) while the batch
    before is reverted. A revert whose text turns out not to match (the note changed
    meanwhile), or could not be written ahead, writes its own."""
    slots: dict[int, StagedSlot] = {}
    for op in batch:
        rewrites = op.kind in ("edit", "delete") or op.before != op.after  # not a bare rename
        if op.kind != "create" and op.before is not None and rewrites:
            slots[op.seq] = StagedSlot(confined(root, op.target), op.before)
    return slots, StagingThread(root, list(slots.values()), [])


def _settled(ahead: Ahead) -> dict[int, StagedText]:
    """The texts of ``ahead`` once written and flushed; if the flush failed, they are removed
    and its error raised."""
    slots, thread = ahead
    try:
        thread.wait()
    except BaseException:
        for slot in slots.values():
            if slot.staged is not None:
                discard_staged(slot.staged)
        raise
    return {seq: slot.staged for seq, slot in slots.items() if slot.staged is not None}


def undo_steps_left(entry: JournalEntry) -> int:
    """How many operations an undo of ``entry`` may still revert (a bound for progress)."""
    return sum(
        1 for op in entry.operations if op.seq not in entry.skipped and op.seq not in entry.undone
    )


def _revert(
    root: Path, op: Operation, found: str | None, staged: StagedText | None = None
) -> None:
    """Put ``op``'s note back as it was; ``found``: the content hash :func:`_undo_steps` found
    it to hold (a note that no longer does is left alone: :class:`NoteChangedError`);
    ``staged``: its old text, already flushed beside it."""
    target = confined(root, op.target)
    if op.kind == "move":
        assert op.source is not None
        now = found or ""
        text = op.before if now != text_sha(op.before) else None
        if text is None and staged is not None:
            discard_staged(staged)
            staged = None
        move_note(
            target, confined(root, op.source), text=text, expected_sha256=now, staged=staged
        )
    elif op.kind == "create":
        delete_note(target, expected_sha256=text_sha(op.after) or "")
    elif op.kind == "edit":
        replace_note(
            target, op.before or "", expected_sha256=text_sha(op.after) or "", staged=staged
        )
    elif op.kind == "delete":
        try:
            create_note(target, op.before or "", staged=staged)
        except NoteError:
            if file_sha(target) != text_sha(op.before):
                raise


def _remove_empty_folders(folders: set[Path], root: Path) -> None:
    """Remove those of ``folders`` that are empty (``Boxes/<date>/<box>/`` a pass created) and
    then their parents, up to a top folder: each folder tried once, deepest first (so after
    every folder below it was), and only where no symbolic link lies on the way (a folder
    swapped for a link since the pass never leads ``rmdir`` to an empty folder elsewhere)."""
    base = Path(os.path.realpath(root))  # where confined() put ``folders``
    tried: set[Path] = set()
    for folder in folders:
        while folder != base and folder.parent != base and folder not in tried:
            tried.add(folder)
            folder = folder.parent
    for folder in sorted(tried, key=lambda f: len(f.parts), reverse=True):
        if is_symlinked(base, os.path.relpath(folder, base)):
            continue
        with contextlib.suppress(OSError):  # not empty (or gone): left as it is
            folder.rmdir()
