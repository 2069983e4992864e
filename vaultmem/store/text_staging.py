"""Texts written ahead for a batch of journaled operations, on a helper thread.

A lifecycle pass stages the new text of each note it is about to move or edit
(:func:`~vaultmem.store.note_files.stage_text`: a hidden temp file beside the note), makes the
whole batch durable with one flush, and only then links each text in place
(:class:`~vaultmem.store.journal.JournalWriter`). Creating a file mostly waits on the file
system (kernel time, not Python), so :class:`StagedTexts` creates them on one helper thread
while the caller checks the next notes or applies the previous batch. Nothing changes for
crash safety: a staged text is used only after :meth:`StagedTexts.flush` (which waits for the
helper thread, then flushes) and the operation still owns and checks its note; a kill leaves
only temp files the next command's sweep removes (their names are those of
:func:`~vaultmem.store.note_files.stage_text`).
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from vaultmem.store.note_batch import flush_files
from vaultmem.store.note_files import StagedText, discard_staged, stage_text

StageKey = tuple[str, str]
"""(vault-relative path of the note, SHA-256 hex of the staged text)."""


class StagedTexts:
    """Staged texts by :data:`StageKey`: :meth:`add`, :meth:`flush`, then :meth:`take` each.

    Not thread-safe itself (one caller); the helper thread only writes the temp files, and
    ends whenever :meth:`flush`, :meth:`settle` or :meth:`discard` waits for it, so no thread
    outlives a batch (the index forks worker processes only when none runs).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._writes: dict[StageKey, Future[StagedText]] = {}
        self._unflushed: set[Future[StagedText]] = set()
        self._helper: ThreadPoolExecutor | None = None

    def __contains__(self, key: StageKey) -> bool:
        return key in self._writes

    def add(self, key: StageKey, path: Path, text: str) -> None:
        """Have ``text`` written beside ``path`` (absolute, already confined) on the helper
        thread. An error writing it is kept, not raised: the operation then writes its own."""
        if self._helper is None:
            self._helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vaultmem-stage")
        write = self._helper.submit(stage_text, path, text)
        self._writes[key] = write
        self._unflushed.add(write)

    def settle(self) -> None:
        """Wait until the helper thread has written everything added (and ended)."""
        helper, self._helper = self._helper, None
        if helper is not None:
            helper.shutdown(wait=True)

    def flush(self) -> None:
        """Make every text added so far durable: wait for the helper thread, then one flush of
        the file system (:func:`~vaultmem.store.note_batch.flush_files`)."""
        self.settle()
        pending, self._unflushed = self._unflushed, set()
        files = [write.result().temp for write in pending if write.exception() is None]
        flush_files(self.root, files)

    def take(self, key: StageKey) -> StagedText | None:
        """The durable staged text for ``key`` (flushing first if it is not yet), removed from
        the batch; ``None`` if none was staged or writing it failed."""
        write = self._writes.pop(key, None)
        if write is None:
            return None
        if write in self._unflushed:
            self.flush()
        return write.result() if write.exception() is None else None

    def discard(self) -> None:
        """Remove every staged text not taken (its operation was skipped or never run)."""
        self.settle()
        writes, self._writes = self._writes, {}
        self._unflushed = set()
        for write in writes.values():
            if write.exception() is None:
                discard_staged(write.result())
