"""Applying lifecycle plans to the vault: moves and surgical edits under the vault lock.

Plans come from :mod:`vaultmem.core.lifecycle_plan` (pure, from the index); this module turns a
list of :class:`~vaultmem.core.lifecycle_plan.Move` into file operations. A move renames the
note first (atomic, keeps the base name and ``id``) and then edits its fields in place (atomic),
so at every instant the note exists exactly once. Notes with problems are skipped and reported;
nothing is ever written into them.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultmem.core.lifecycle_plan import (
    PROCEDURAL_CATEGORIES,
    Move,
    base_name,
    plan_expire,
    plan_forget,
    plan_promote,
    plan_prune,
)
from vaultmem.core.note_parse import parse_note
from vaultmem.core.note_text import FrontmatterError, set_fields
from vaultmem.errors import NoteError, VaultmemError
from vaultmem.services.memory_view import MemoryTable
from vaultmem.store.note_files import move_note, read_note, write_note
from vaultmem.store.vault_lock import vault_lock

if TYPE_CHECKING:
    from vaultmem.services.vault import Vault

PASS_ORDER = ("promote", "expire", "forget", "prune")


@dataclass(slots=True)
class PassResult:
    """Planned and applied moves of one pass; ``skipped`` pairs a move with why it was not done."""

    name: str
    planned: list[Move]
    dry_run: bool
    applied: list[Move] = field(default_factory=list)
    skipped: list[tuple[Move, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        def move_dict(move: Move) -> dict[str, object]:
            return {
                "path": move.path, "id": move.id, "action": move.action,
                "destination": move.destination, "rule": move.rule, "reason": move.reason,
            }

        return {
            "pass": self.name,
            "dry_run": self.dry_run,
            "planned": [move_dict(m) for m in self.planned],
            "applied": [move_dict(m) for m in self.applied],
            "skipped": [{**move_dict(m), "error": why} for m, why in self.skipped],
        }


def _apply_one(vault: Vault, move: Move) -> None:
    source = vault.root / move.path
    snapshot = read_note(source)
    note = parse_note(move.path, snapshot.text)
    if note.problems:
        raise NoteError(move.path, f"{note.problems[0]}; not moved")
    if note.fields.id != move.id:
        raise NoteError(move.path, "changed since the plan was made (id differs); not moved")
    if move.action == "delete":
        os.unlink(source)
        return
    try:
        new_text = set_fields(snapshot.text, move.changes) if move.changes else snapshot.text
    except FrontmatterError as err:
        raise NoteError(move.path, f"{err}; not moved") from None
    target = source
    if move.destination and move.destination != move.path:
        target = vault.root / move.destination
        move_note(source, target)
    if new_text != snapshot.text:  # a rename keeps size and mtime: the fingerprint still holds
        write_note(target, new_text, expected=snapshot.fingerprint)


def apply_moves(vault: Vault, result: PassResult) -> PassResult:
    """Carry out ``result.planned`` (unless it is a dry run); re-index what moved."""
    if result.dry_run or not result.planned:
        return result
    touched: list[str] = []
    with vault_lock(vault.sidecar):
        for move in result.planned:
            try:
                _apply_one(vault, move)
            except (VaultmemError, OSError) as err:
                result.skipped.append((move, str(err)))
                continue
            result.applied.append(move)
            touched.append(move.path)
            if move.destination:
                touched.append(move.destination)
    vault.refresh(touched)
    return result


def plan_pass(
    vault: Vault, name: str, now: dt.datetime, *, threshold: float | None = None,
    hard: bool = False, table: MemoryTable | None = None,
) -> PassResult:
    """Plan one pass from the index (after a cheap sync), or from an already loaded ``table``."""
    if table is None:
        table = vault.table(now=now)
    cols, scores, settings = table.columns, table.scores, vault.settings
    if name == "promote":
        moves = plan_promote(cols, scores, settings, now)
    elif name == "expire":
        moves = plan_expire(cols, scores, settings, now)
    elif name == "forget":
        moves = plan_forget(cols, scores, settings, now, threshold=threshold, hard=hard)
    elif name == "prune":
        moves = plan_prune(cols, scores, settings, now)
    else:
        raise ValueError(f"unknown pass {name!r}")
    return PassResult(name, moves, dry_run=False)


def on_request_promotion(vault: Vault, path: str, now: dt.datetime) -> Move:
    """A promotion the person asked for by name (``promote ID``), outside rule 2."""
    row = vault.index.note_row(path) or {}
    category = str(row.get("category") or "fact")
    layer = "procedural" if category in PROCEDURAL_CATEGORIES else "semantic"
    return Move(
        path, str(row.get("id")) if row.get("id") else None, "promote",
        f"{vault.settings.folders.ltm}/{base_name(path)}",
        {"status": "promoted", "layer": layer, "promoted_at": now},
        rule="promote", reason="promoted on request",
    )
