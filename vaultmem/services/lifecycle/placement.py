"""Notes in a folder their fields contradict, and notes no pass may write.

A memory's folder and its ``status`` say the same thing (user guide "The vault", "Lifecycle"): STM/
and Boxes/ hold ``active`` memories, LTM/ ``promoted`` ones, Archive/ ``archived`` (or
``superseded``) ones. vaultmem moves a note and sets its fields in one step, so it never leaves one
contradicting the other; an older version killed between the two steps, a person's drag in Obsidian
or a sync could. :func:`misplaced` finds them (``doctor`` lists them) and :func:`plan_repair` plans
the journaled fix the next pass applies: the folder wins for Archive/ and LTM/ (the note was
archived or promoted), the fields win for a memory marked archived or promoted that still sits in
STM/ or Boxes/ (it is moved where its status says).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultmem.core.lifecycle.lifecycle_plan import Move, base_name
from vaultmem.store.index_queries import prefix_bounds

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext

HANDS_OFF_SQL = "(problems != '[]' OR warnings != '[]')"
"""Notes no pass plans to move or edit: unreadable, conflicted, or with wrong-typed values."""


def hands_off(vault: VaultContext) -> frozenset[str]:
    """Paths of managed notes that passes leave as they are (listed by ``doctor``)."""
    rows = vault.index.conn.execute(
        # "+type": read the few rows of the partial index notes_hands_off, not every memory
        "SELECT path FROM notes WHERE +type IN ('memory', 'box', 'trace') AND " + HANDS_OFF_SQL
    )
    return frozenset(path for (path,) in rows)


@dataclass(frozen=True, slots=True)
class Misplaced:
    """A memory at ``path`` whose ``status`` contradicts its top folder; ``fix`` says the repair."""

    path: str
    id: str | None
    status: str
    fix: Move

    @property
    def detail(self) -> str:
        folder = self.path.split("/", 1)[0]
        return f"in {folder}/ but status: {self.status}; the next pass will {self.fix.reason}"


_IN = "(path >= :{0} AND path < :{0}_end)"
"""SQL: the note lies in the folder whose bounds are the parameters ``{0}`` and ``{0}_end``."""


def misplaced(vault: VaultContext, now: dt.datetime) -> list[Misplaced]:
    """Every memory whose status contradicts its folder, with the repair the next pass makes."""
    f = vault.settings.folders
    stm, boxes, ltm, archive = (x.strip("/") for x in (f.stm, f.boxes, f.ltm, f.archive))
    found: list[Misplaced] = []
    bounds: dict[str, str] = {}
    for key, folder in (("stm", stm), ("boxes", boxes), ("ltm", ltm), ("archive", archive)):
        # a top folder: its notes are one range of paths (compared, not cut out of each path);
        # a folder setting with a "/" is never a top folder, and its range is empty
        low, high = prefix_bounds(folder + "/") if folder and "/" not in folder else ("", "")
        bounds[key], bounds[key + "_end"] = low, high
    rows = vault.index.conn.execute(  # the few candidates; each is decided below
        "SELECT path, id, status, promoted_at, archived_at FROM notes "
        "WHERE type = 'memory' AND NOT " + HANDS_OFF_SQL + " AND ("
        " (" + _IN.format("archive") + " AND coalesce(status, 'active') IN ('active', 'promoted'))"
        " OR (" + _IN.format("ltm") + " AND coalesce(status, 'active') = 'active')"
        " OR ((" + _IN.format("stm") + " OR " + _IN.format("boxes") + " OR " + _IN.format("ltm")
        + ") AND status = 'archived')"
        " OR ((" + _IN.format("stm") + " OR " + _IN.format("boxes") + ") AND status = 'promoted')"
        ") ORDER BY path",
        bounds,
    )
    for path, note_id, status, promoted_at, archived_at in rows:
        top = path.split("/", 1)[0] if "/" in path else ""
        status = status or "active"
        fix: Move | None = None
        if top == archive and status in ("active", "promoted"):
            changes: dict[str, object] = {"status": "archived"}
            if archived_at is None:
                changes["archived_at"] = now
            fix = Move(path, note_id, "edit", None, changes, "repair", "set status: archived")
        elif top == ltm and status == "active":
            changes = {"status": "promoted"}
            if promoted_at is None:
                changes["promoted_at"] = now
            fix = Move(path, note_id, "edit", None, changes, "repair", "set status: promoted")
        elif top in (stm, boxes, ltm) and status == "archived":
            changes = {} if archived_at is not None else {"archived_at": now}
            fix = Move(
                path,
                note_id,
                "archive",
                f"{archive}/{base_name(path)}",
                changes,
                "repair",
                f"move it to {archive}/",
            )
        elif top in (stm, boxes) and status == "promoted":
            changes = {} if promoted_at is not None else {"promoted_at": now}
            fix = Move(
                path,
                note_id,
                "promote",
                f"{ltm}/{base_name(path)}",
                changes,
                "repair",
                f"move it to {ltm}/",
            )
        if fix is not None:
            found.append(Misplaced(path, note_id, status, fix))
    return found


def plan_repair(vault: VaultContext, now: dt.datetime) -> list[Move]:
    """The journaled repairs of :func:`misplaced` notes (reason: what contradicted what)."""
    moves = []
    for item in misplaced(vault, now):
        folder = item.path.split("/", 1)[0]
        reason = f"in {folder}/ with status: {item.status}; {item.fix.reason}"
        m = item.fix
        moves.append(Move(m.path, m.id, m.action, m.destination, m.changes, m.rule, reason))
    return moves
