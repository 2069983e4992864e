"""Embedding changed notes in the background while ``vaultmem watch`` runs.

The watcher's worker thread only hands each synced batch's paths to :meth:`BackgroundEmbedder.
notify` (a set union under a lock): it never waits for the model, so index sync stays as fast as
without embeddings. One thread of its own, with its own vault (from the ``open_vault`` it is
given: its own SQLite connections), embeds the queued notes through
:func:`~vaultmem.services.semantic.embeddings.embed_notes` — notes whose text did not change are
skipped there by their content key. At start it catches up with every note that has no current
vector. A provider that is unavailable is asked again
later (one warning in the log); a failing batch is logged and its notes wait for the next one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from vaultmem.core.notes.timestamps import utc_now
from vaultmem.services.index.sync_types import SyncReport
from vaultmem.services.semantic.embeddings import embed_notes, provider
from vaultmem.services.vault_context import VaultContext

logger = logging.getLogger(__name__)


class ClosableVault(VaultContext, Protocol):
    """A vault the embedder opens for its own thread and closes when it stops."""

    def close(self) -> None:
        """Close the vault's index and vector store."""
        ...


RETRY_SECONDS = 30.0
"""Pause (seconds) before queued notes are tried again when the provider was unavailable."""


class BackgroundEmbedder:
    """A thread that embeds the notes it is told about; see the module docstring."""

    def __init__(self, root: Path, open_vault: Callable[[Path], ClosableVault]) -> None:
        self.root = root
        self._open_vault = open_vault
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        self._everything = True  # catch up with the whole vault first
        self._stopping = False
        self._busy = False
        self.embedded = 0
        """Notes embedded so far (for tests and ``--verbose``)."""
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="vaultmem-embed", daemon=True)
        self._thread.start()

    def notify(self, report: SyncReport) -> None:
        """Queue the notes a sync touched (called on the watcher's thread; returns at once)."""
        if not report.touched_paths:
            return
        with self._cond:
            self._pending.update(report.touched_paths)
            self._cond.notify_all()

    def stop(self) -> None:
        """Stop after the batch in progress; join the thread. Safe to call twice."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until nothing is queued or being embedded."""
        with self._cond:
            return self._cond.wait_for(
                lambda: not (self._pending or self._everything or self._busy), timeout
            )

    def _run(self) -> None:
        vault = self._open_vault(self.root)
        try:
            while True:
                with self._cond:
                    self._cond.wait_for(lambda: self._stopping or self._pending or self._everything)
                    if self._stopping:
                        return
                    everything, self._everything = self._everything, False
                    paths, self._pending = sorted(self._pending), set()
                    self._busy = True
                try:
                    self._embed(vault, None if everything else paths, everything, paths)
                finally:
                    with self._cond:
                        self._busy = False
                        self._cond.notify_all()
        finally:
            vault.close()

    def _embed(
        self, vault: VaultContext, wanted: list[str] | None, everything: bool, paths: list[str]
    ) -> None:
        if provider(vault) is None:
            for warning in vault.warnings:
                logger.warning("watch: %s", warning)
            vault.warnings.clear()
            with self._cond:  # try again later, keeping what was asked
                self._everything = self._everything or everything
                self._pending.update(paths)
                self._cond.wait_for(lambda: self._stopping, RETRY_SECONDS)
            return
        try:
            known = set(vault.index.all_paths())
            chosen = None if wanted is None else [p for p in wanted if p in known]
            if chosen == []:
                return
            report = embed_notes(vault, chosen, now=utc_now(), sync=False)
            self.embedded += report.embedded
            if report.embedded:
                logger.info("watch: embedded %d notes", report.embedded)
        except Exception:
            logger.exception(
                "watch: embedding %s failed",
                "the vault" if wanted is None else f"{len(wanted)} notes",
            )
