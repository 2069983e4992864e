"""Running lifecycle passes (user guide "Lifecycle"): planned from the index, journaled, undoable.

Plans come from :mod:`vaultmem.core.lifecycle.lifecycle_plan` (pure, from columns), made here from
one table of the index (:func:`plan_table`, :func:`plan_pass`); :func:`run_passes` runs them in
:data:`PASS_ORDER` as one command through a
:class:`~vaultmem.services.lifecycle.pass_session.PassSession`, which applies each move as one
owned, atomic, journaled step, so every note exists exactly once at every instant and never sits in
a folder its fields contradict. Notes with problems or wrong-typed values are never planned.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np

from vaultmem.core.collector import collector_paused
from vaultmem.core.lifecycle.lifecycle_plan import (
    PASS_ORDER,
    PROCEDURAL_CATEGORIES,
    Move,
    base_name,
    plan_expire,
    plan_forget,
    plan_promote,
    plan_prune,
)
from vaultmem.core.scoring.reinforcement import keep_changes
from vaultmem.errors import (
    InputError,
    UnsafeNoteError,
)
from vaultmem.services.lifecycle.boxing import (
    SealInputs,
    plan_box_archival,
    read_seal_inputs,
    seal_boxes,
)
from vaultmem.services.lifecycle.pass_session import PassResult, PassSession
from vaultmem.services.lifecycle.placement import hands_off, plan_repair
from vaultmem.services.memories.memory_view import MemoryTable, with_moves
from vaultmem.services.sync.shared_ids import hold_shared, shared_id_paths
from vaultmem.store.confinement import left_in_place_warning, linked_notes

if TYPE_CHECKING:
    from vaultmem.services.index.sync_types import SyncReport
    from vaultmem.services.vault_context import VaultContext

PLANNED_STATUSES = ("active", "superseded")
"""The only statuses a pass acts on (promote, forget, prune: active; expire: superseded too)."""
PLANNED_WHERE = "n.type = 'memory' AND n.status IN ('active', 'superseded')"
"""SQL over ``notes n`` for the memories of :data:`PLANNED_STATUSES`."""


def plan_pass(
    vault: VaultContext,
    name: str,
    now: dt.datetime,
    *,
    threshold: float | None = None,
    hard: bool = False,
    table: MemoryTable | None = None,
    skip: frozenset[str] = frozenset(),
) -> PassResult:
    """Plan one of promote / expire / forget / prune from the index (or a loaded ``table``).

    ``skip`` holds paths an earlier pass of the same run already moves; notes with problems or
    wrong-typed values are never planned (they are left as they are).
    """
    if table is None:
        table = plan_table(vault, now)
    skip = skip | hands_off(vault)
    cols, scores, settings = table.columns, table.scores, vault.settings
    if name == "promote":
        moves = plan_promote(cols, scores, settings, now)
    elif name == "expire":
        moves = plan_expire(cols, scores, settings, now, _superseded_at(vault, cols.path))
    elif name == "forget":
        moves = plan_forget(cols, scores, settings, now, threshold=threshold, hard=hard, skip=skip)
    elif name == "prune":
        moves = plan_prune(cols, scores, settings, now, skip=skip)
    else:
        raise ValueError(f"unknown pass {name!r}")
    if skip:
        moves = [m for m in moves if m.path not in skip]
    moves.sort(key=attrgetter("path"))  # the index hands rows over unsorted
    if table.linked is None:  # no walk just before: ask the file system
        linked = linked_notes(vault.root, [m.path for m in moves])
    else:  # a prune plans thousands: no pass over them when no note is a link
        linked = {m.path for m in moves if m.path in table.linked} if table.linked else set()
    if linked:
        vault.warnings.extend(left_in_place_warning(rel) for rel in sorted(linked))
        moves = [m for m in moves if m.path not in linked]
    return PassResult(name, moves, dry_run=False)


def plan_table(
    vault: VaultContext,
    now: dt.datetime,
    synced: SyncReport | None = None,
    preloaded: MemoryTable | None = None,
) -> MemoryTable:
    """The memories a pass can act on (:data:`PLANNED_STATUSES`), loaded and scored at ``now``.

    After :meth:`~vaultmem.services.vault.Vault.catch_up`, unless ``synced`` is the report of a
    sync just made (``preloaded``: this table as :func:`load_plan_table` read it while that
    sync walked). Archived and promoted memories (40 % of a grown vault) are left out: no rule
    plans them, and prune counts only active ones.
    """
    return vault.table(now=now, where=PLANNED_WHERE, synced=synced, preloaded=preloaded)


def load_plan_table(vault: VaultContext, now: dt.datetime) -> MemoryTable:
    """The table of :func:`plan_table` read from the index as it is (no sync, nothing said)."""
    from vaultmem.services.memories.memory_view import memory_table

    return memory_table(vault.index, vault.settings, now, where=PLANNED_WHERE)


@dataclass
class _ReadMeanwhile:
    """What a run reads from the index while its sync walks the vault (in a forked process,
    from 10,000 notes): the seal pass's inputs and the passes' table. It holds when the sync
    changed no note and the run wrote none before it is used."""

    seal: SealInputs | None = None
    table: MemoryTable | None = None

    def read(self, vault: VaultContext, now: dt.datetime, names: tuple[str, ...]) -> None:
        if "seal" in names:
            self.seal = read_seal_inputs(vault, now)
        if any(name != "seal" for name in names):
            self.table = load_plan_table(vault, now)


def _superseded_at(vault: VaultContext, paths: np.ndarray) -> np.ndarray:
    """``superseded_at`` (epoch seconds, NaN = unknown) of each of ``paths``, from the index."""
    stamps = dict(
        vault.index.conn.execute(
            # "+type": read the few rows of the partial index notes_superseded, not every memory
            "SELECT path, superseded_at FROM notes WHERE +type = 'memory' AND status = 'superseded'"
        ).fetchall()
    )
    if not stamps:  # the common case: nothing superseded, no walk over every path
        return np.full(len(paths), math.nan, dtype=np.float64)
    return np.array(
        [math.nan if stamps.get(str(p)) is None else float(stamps[str(p)]) for p in paths],
        dtype=np.float64,
    )


def on_request_promotion(vault: VaultContext, path: str, now: dt.datetime) -> Move:
    """A promotion the person asked for by name (``promote ID``), outside rule 2."""
    row = vault.index.note_row(path) or {}
    category = str(row.get("category") or "fact")
    layer = "procedural" if category in PROCEDURAL_CATEGORIES else "semantic"
    return Move(
        path,
        str(row.get("id")) if row.get("id") else None,
        "promote",
        f"{vault.settings.folders.ltm}/{base_name(path)}",
        {"status": "promoted", "layer": layer, "promoted_at": now},
        rule="promote",
        reason="promoted on request",
    )


def on_request_archival(vault: VaultContext, path: str, now: dt.datetime) -> Move:
    """An archival the person asked for by name (``vaultmem forget``), outside the passes.

    Raises :class:`InputError` for a note that is not a memory, is archived already or pinned,
    and :class:`UnsafeNoteError` for one vaultmem must not write (conflict markers, bad YAML).
    """
    row = vault.index.note_row(path) or {}
    if row.get("type") != "memory":
        raise InputError(f"{path} is a {row.get('type')} note, not a memory; not archived")
    if row.get("status") == "archived":
        raise InputError(f"{path} is archived already")
    if row.get("pinned"):
        raise InputError(f"{path} is pinned; unpin it first (`vaultmem unpin`)")
    problems = row.get("problems")
    if isinstance(problems, str) and problems not in ("", "[]"):
        raise UnsafeNoteError(path, f"{json.loads(problems)[0]}; not archived")
    return Move(
        path,
        str(row["id"]) if row.get("id") else None,
        "archive",
        f"{vault.settings.folders.archive}/{base_name(path)}",
        {"status": "archived", "archived_at": now},
        rule="forget",
        reason="forgotten on request",
    )


@dataclass(slots=True)
class LifecycleRun:
    """What one command did: each pass's result, the journal written, passes it finished first."""

    command: str
    now: dt.datetime
    dry_run: bool
    results: list[PassResult] = field(default_factory=list)
    journal: str | None = None
    recovered: list[str] = field(default_factory=list)
    commit: str | None = None
    commit_error: str | None = None
    """Why ``--commit`` failed (the pass itself was applied); ``None`` when it did not fail."""
    touched: list[str] = field(default_factory=list)
    """Vault-relative paths the run wrote, moved from or to, created or deleted."""
    reindexed: int = 0
    """Paths re-indexed after the run wrote them, each once per time it was written."""
    reindex_seconds: float = 0.0
    """Wall seconds the run spent re-indexing, or waiting for its helper process to."""
    late_saves: list[str] = field(default_factory=list)
    """Saves that landed in a note's old file after the run wrote the note, each kept (merged
    into the new version or in a conflicted copy beside it): one line each."""

    def as_dict(self) -> dict[str, object]:
        return {
            "command": self.command,
            "now": self.now.isoformat(),
            "dry_run": self.dry_run,
            "passes": [r.as_dict() for r in self.results],
            "journal": self.journal,
            "recovered": self.recovered,
            "late_saves": self.late_saves,
            "commit": self.commit,
            "commit_error": self.commit_error,
        }

    @property
    def applied(self) -> list[Move]:
        return [m for r in self.results for m in r.applied]


def run_passes(
    vault: VaultContext,
    names: tuple[str, ...],
    now: dt.datetime,
    *,
    dry_run: bool = False,
    threshold: float | None = None,
    hard: bool = False,
    keep: tuple[str, ...] = (),
    command: str | None = None,
) -> LifecycleRun:
    """Run passes in :data:`PASS_ORDER` order as one journaled, undoable command.

    ``keep`` (gc): paths reinforced first (``use_count += 3``) and never forgotten. Every pass
    after seal is planned from one table, each skipping what an earlier one moves, so a dry run
    shows what the real run does (in a dry run the table is adjusted for the planned seal). A
    box whose members have all been archived is archived with them ("Lifecycle").
    The vault is walked once, when the run holds the vault lock (a real run) or starts (a dry
    run): what the run writes is re-indexed as it goes, so the passes after seal are planned
    from the index that walk made fresh.
    """
    run = LifecycleRun(command or "-".join(names), now, dry_run)
    with collector_paused(), PassSession(vault, run.command, now, dry_run=dry_run) as session:
        run.recovered = [p.name for p in session.recovered]
        meanwhile = _ReadMeanwhile()
        # under the lock: no other pass moves notes until the end
        synced = vault.catch_up(meanwhile=partial(meanwhile.read, vault, now, names))
        if synced is None or synced.any_change:
            meanwhile = _ReadMeanwhile()  # read before the sync changed the index
        linked = synced.linked if synced is not None else None
        shared = shared_id_paths(vault.index)  # one memory at two paths: doctor --fix decides
        repairs = plan_repair(vault, now)
        if repairs:
            run.results.append(session.run(PassResult("repair", repairs, dry_run=dry_run)))
            if not dry_run:
                session.refresh()
                meanwhile = _ReadMeanwhile()
                shared = shared_id_paths(vault.index)  # a repair may have moved one of them
        sealed: list[Move] = []
        if "seal" in names:
            result = seal_boxes(vault, session, now, meanwhile.seal, linked, shared)
            run.results.append(result)
            sealed = result.planned
            if not dry_run:
                session.refresh()
                if result.applied:
                    meanwhile = _ReadMeanwhile()
        if not dry_run and keep:
            for path in keep:
                session.edit_fields(path, keep_changes)
            session.refresh()
            meanwhile = _ReadMeanwhile()
        table = plan_table(vault, now, synced, meanwhile.table)
        if dry_run and sealed:  # show what the real run does: members as the seal leaves them
            table = with_moves(table, sealed, vault.settings, now)
        moving: set[str] = set()
        leaving: dict[str, Move] = {}
        for name in (n for n in PASS_ORDER if n in names and n != "seal"):
            kept = frozenset(keep) if name != "promote" else frozenset()
            result = plan_pass(
                vault,
                name,
                now,
                threshold=threshold,
                hard=hard,
                table=table,
                skip=frozenset(moving) | kept,
            )
            hold_shared(result.planned, result.skipped, shared)
            moving.update(m.path for m in result.planned)
            leaving.update((m.path, m) for m in result.planned if m.action in ("archive", "delete"))
            if name in ("forget", "prune") and leaving:
                result.planned += plan_box_archival(vault, leaving, now, sealed if dry_run else ())
                leaving.update((m.path, m) for m in result.planned)
            run.results.append(session.run(result))
        run.journal = session.journal_path.name if session.journal_path else None
        run.touched = list(dict.fromkeys(session.touched))
    run.reindexed, run.reindex_seconds = session.reindexed, session.reindex_seconds
    run.late_saves = session.late_save_lines()
    return run
