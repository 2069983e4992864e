"""Listing memories: the scored table behind ``list``, ``status`` and planning, and its filters.

The table is read from the index after a cheap sync (none when a live watcher keeps the index
fresh; docs/user-guide.md, "Index and graph") and scored at a given time (docs/user-guide.md,
"Scores"); each field warning the index holds is said once. ``status`` also counts what a pass
would move now (docs/user-guide.md, "Lifecycle").
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from typing import TYPE_CHECKING

from vaultmem.core.notes.fields import LAYERS, STATUSES
from vaultmem.core.notes.timestamps import utc_now
from vaultmem.errors import InputError
from vaultmem.services.index.index_lookups import conflicted_paths
from vaultmem.services.index.note_filters import (
    checked_choice,
    checked_tag,
    folder_condition,
    tag_condition,
    vault_folder,
)

if TYPE_CHECKING:
    from vaultmem.services.index.sync_types import SyncReport
    from vaultmem.services.memories.memory_view import MemoryRow, MemoryTable, VaultStatus
    from vaultmem.services.vault_context import VaultContext


def synced_table(
    vault: VaultContext,
    *,
    now: dt.datetime | None = None,
    where: str = "n.type = 'memory'",
    params: tuple[object, ...] = (),
    synced: SyncReport | None = None,
    preloaded: MemoryTable | None = None,
) -> MemoryTable:
    """Columns and scores of the memories (after a cheap sync), for listing and planning.

    ``synced``: the report of a sync the caller has just made; the index is then not synced
    again. When the sync walked the vault, the table also knows which notes are symbolic
    links (:attr:`MemoryTable.linked`). The memories are loaded while a big vault is walked
    (in a forked process, :func:`~vaultmem.services.index.index_sync.sync_index`), and loaded again
    only if the sync changed a note. ``preloaded``: the same table (same ``now``, ``where`` and
    ``params``) read while the sync ``synced`` walked, used unless that sync changed a note.
    """
    from vaultmem.services.memories.memory_view import memory_table

    when = now or utc_now()
    loaded: list[MemoryTable] = [] if preloaded is None else [preloaded]
    if synced is None and preloaded is None:
        synced = vault.catch_up(
            meanwhile=lambda: loaded.append(
                memory_table(vault.index, vault.settings, when, where=where, params=params)
            )
        )
    rows = vault.index.conn.execute(
        f"SELECT n.path, n.warnings FROM notes n WHERE ({where}) AND n.warnings != '[]' "
        "ORDER BY n.path",
        params,
    )
    for path, text in rows:  # once per note and key, however often the table is read
        vault.warnings.extend(
            line for w in json.loads(text) if (line := f"{path}: {w}") not in vault.warnings
        )
    if loaded and synced is not None and not synced.any_change:
        table = loaded[0]  # read inside the sync's transaction, and nothing changed since
    else:
        table = memory_table(vault.index, vault.settings, when, where=where, params=params)
    if synced is None or synced.linked is None:
        return table
    return replace(table, linked=synced.linked)


def filtered_memories(
    vault: VaultContext,
    *,
    status: str | None = None,
    layer: str | None = None,
    tag: str | None = None,
    folder: str | None = None,
    sort: str = "score",
    limit: int | None = None,
    now: dt.datetime | None = None,
) -> list[MemoryRow]:
    """Memories matching every given filter, ordered by ``sort`` (see
    :data:`~vaultmem.services.memories.memory_view.SORT_KEYS`), at most ``limit`` of them.

    ``tag`` matches the tag or one nested in it (``project`` finds ``project/alpha``) and
    ``folder`` a folder of the vault, as recall's filters do
    (:mod:`~vaultmem.services.index.note_filters`); ``None`` means not asked for. Raises
    :class:`~vaultmem.errors.InputError` before reading anything for a status, layer or sort
    not among the choices, an empty tag or folder, a folder the vault does not have, or a
    ``limit`` that is not a whole number ≥ 1."""
    from vaultmem.services.memories.memory_view import SORT_KEYS, order_rows, rows_of

    clauses: list[str] = ["n.type = 'memory'"]
    params: list[object] = []
    for column, value, choices in (("status", status, STATUSES), ("layer", layer, LAYERS)):
        if checked_choice(column, value, choices) is not None:
            clauses.append(f"n.{column} = ?")
            params.append(value)
    checked_choice("sort", sort, SORT_KEYS)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InputError(f"limit must be a whole number ≥ 1, not {limit!r}")
    conditions = []
    if tag is not None:
        conditions.append(tag_condition(checked_tag(tag)))
    if folder is not None:
        conditions.append(folder_condition(vault_folder(vault.root, folder)))
    for clause, more in conditions:
        clauses.append(clause)
        params += more
    table = vault.table(now=now, where=" AND ".join(clauses), params=tuple(params))
    order = order_rows(table, sort)
    if limit is not None:
        order = order[:limit]
    return rows_of(table, order, vault.index)


def current_status(vault: VaultContext, *, now: dt.datetime | None = None) -> VaultStatus:
    """Counts per folder and status, danger zone, and what the next ``lifecycle`` would do:
    the dry run of every pass (repair, seal, promote, expire, forget, prune), counted per pass
    and action — the same plan ``vaultmem lifecycle --dry-run`` prints. Writes nothing."""
    from vaultmem.core.lifecycle.lifecycle_plan import PASS_ORDER
    from vaultmem.services.lifecycle.lifecycle import run_passes
    from vaultmem.services.memories.memory_view import vault_status

    when = now or utc_now()
    preview = run_passes(vault, PASS_ORDER, when, dry_run=True, command="lifecycle")
    next_pass: dict[str, dict[str, int]] = {}
    for result in preview.results:
        actions = next_pass.setdefault(result.name, {})
        for move in result.planned:
            actions[move.action] = actions.get(move.action, 0) + 1
    table = vault.table(now=when)
    conflicted = conflicted_paths(vault.index)
    return vault_status(
        table,
        vault.settings,
        vault.index.note_count(),
        forget=sum(next_pass.get("forget", {}).values()),
        promote=sum(next_pass.get("promote", {}).values()),
        conflicted=sum(1 for path in table.columns.path if path in conflicted),
        next_pass=next_pass,
    )


__all__ = ["current_status", "filtered_memories", "synced_table"]
