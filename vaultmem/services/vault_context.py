"""What a service needs of an open vault: :class:`VaultContext`, a structural type.

:class:`vaultmem.services.vault.Vault` satisfies it without naming it. Services annotate their
``vault`` arguments with this Protocol instead of importing ``Vault``, so the services layer has no
import circle: only the interfaces (CLI, MCP server) and ``vault.py`` itself see ``Vault``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from vaultmem.core.notes.fields import MemoryFields
from vaultmem.core.settings import Settings
from vaultmem.store.index_db import IndexDB

if TYPE_CHECKING:
    from vaultmem.services.index.index_reads import WrittenNote
    from vaultmem.services.index.sync_types import SyncReport
    from vaultmem.services.memories.memory_view import Memory, MemoryTable


class VaultContext(Protocol):
    """An open vault as services see it: its root, settings, sidecar, index and write paths.

    ``root`` and ``sidecar`` are absolute folders; ``warnings`` collects one-line field warnings
    met while reading notes. The methods are :class:`~vaultmem.services.vault.Vault`'s of the
    same names (see there for their errors).
    """

    root: Path
    settings: Settings
    sidecar: Path
    warnings: list[str]
    lock_wait_seconds: float
    """How long a write waits for the vault lock before :class:`~vaultmem.errors.LockedError`."""

    @property
    def index(self) -> IndexDB:
        """The sidecar index, opened on first use."""
        ...

    def folders(self) -> list[str]:
        """The memory folders (vault-relative): STM, boxes, LTM, archive."""
        ...

    def sync(self) -> SyncReport:
        """Bring the index up to date with the vault (incremental)."""
        ...

    def catch_up(self, *, meanwhile: Callable[[], object] | None = None) -> SyncReport | None:
        """Sync the index unless a live watcher keeps it fresh; ``meanwhile``: index reads to
        overlap with the walk (:meth:`vaultmem.services.vault.Vault.sync`)."""
        ...

    def refresh(
        self, paths: Iterable[str], written: Mapping[str, WrittenNote] | None = None
    ) -> SyncReport:
        """Re-index just ``paths`` (vault-relative); ``written``: texts just written."""
        ...

    def edit(
        self,
        path: str,
        compute: Callable[[MemoryFields], dict[str, object]],
        *,
        now: dt.datetime | None = None,
    ) -> Memory:
        """Apply ``compute(fields)``'s changes to one note, surgically and atomically."""
        ...

    def table(
        self,
        *,
        now: dt.datetime | None = None,
        where: str = "n.type = 'memory'",
        params: tuple[object, ...] = (),
        synced: SyncReport | None = None,
        preloaded: MemoryTable | None = None,
    ) -> MemoryTable:
        """Columns and scores of the memories matching ``where`` (``synced``: a sync just made;
        ``preloaded``: this table read while that sync walked)."""
        ...


__all__ = ["VaultContext"]
