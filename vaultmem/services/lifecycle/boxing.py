"""Pass 1, *Seal boxes*, applied (Engram; user guide "Lifecycle"): box notes, member moves, traces.

The plan is :func:`vaultmem.core.lifecycle.boxes.plan_seal`, fed from the index (columns and stored
frontmatter; no note is read to plan). Applying it creates ``Boxes/YYYY-MM-DD/<box>.md``
(``type: box``: topics, time span, member links, trace link), moves each member to
``Boxes/YYYY-MM-DD/<box>/`` with ``layer: episodic`` and ``box:`` set, and creates or extends
the ``type: trace`` notes — every step through the pass journal, so ``undo`` reverses it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from vaultmem.core.lifecycle.boxes import (
    GIVEN_NAME_PREFIXES,
    BoxPlan,
    SealedBox,
    StmMemory,
    TracePlan,
    TraceRecord,
    plan_seal,
)
from vaultmem.core.lifecycle.lifecycle_plan import Move
from vaultmem.core.notes.fields import MemoryFields
from vaultmem.core.notes.naming import new_id
from vaultmem.core.notes.note_text import render_note
from vaultmem.core.notes.timestamps import from_epoch, parse_datetime
from vaultmem.errors import InterruptedRunError, VaultmemError
from vaultmem.services.lifecycle.placement import HANDS_OFF_SQL
from vaultmem.services.lifecycle.progress import report_progress
from vaultmem.services.sync.shared_ids import hold_shared, shared_id_paths
from vaultmem.store.confinement import left_in_place_warning, linked_notes
from vaultmem.store.index_queries import prefix_bounds

if TYPE_CHECKING:
    from vaultmem.services.lifecycle.pass_session import PassResult, PassSession
    from vaultmem.services.vault_context import VaultContext


def _set_trace(trace_title: str, _fields: MemoryFields) -> dict[str, object]:
    return {"trace": _link(trace_title)}


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _link(title: str) -> str:
    return f"[[{title}]]"


def _unlink(value: object) -> str:
    text = str(value).strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2]
    return text.split("|", 1)[0].split("#", 1)[0].rsplit("/", 1)[-1].removesuffix(".md")


def _epoch(value: object, fallback: float) -> float:
    try:
        return parse_datetime(value).timestamp()
    except ValueError:
        return fallback


class SealInputs(NamedTuple):
    """What pass 1 plans from, read from the index (:func:`read_seal_inputs`)."""

    memories: list[StmMemory]
    """The active STM memories, in path order, symbolic links among them included."""
    traces: list[TraceRecord]
    lone: list[SealedBox]
    """Recent sealed boxes in no trace yet."""
    taken: set[str]
    """The base name (no ``.md``) of every indexed note a seal could give
    (:data:`~vaultmem.core.lifecycle.boxes.GIVEN_NAME_PREFIXES`), as the index folds it."""


def load_seal_inputs(
    vault: VaultContext,
    now: dt.datetime,
    read: SealInputs | None = None,
    linked: AbstractSet[str] | None = None,
) -> SealInputs:
    """:func:`read_seal_inputs` (or ``read``, what it gave meanwhile) without the memories that
    are symbolic links, each named in a warning: a linked memory is left where it is, never moved
    into a box. ``linked``: the notes a walk just found to be links; ``None``: ask the file
    system about each memory."""
    inputs = read or read_seal_inputs(vault, now)
    paths = [m.path for m in inputs.memories]
    if linked is None:
        found = linked_notes(vault.root, paths)
    else:
        found = {path for path in paths if path in linked} if linked else set()
    if not found:
        return inputs
    vault.warnings.extend(left_in_place_warning(rel) for rel in sorted(found))
    return inputs._replace(memories=[m for m in inputs.memories if m.path not in found])


def read_seal_inputs(vault: VaultContext, now: dt.datetime) -> SealInputs:
    """STM memories, traces, lone recent boxes and taken base names, from the index alone (no
    file is looked at, nothing is said: a run reads them while the vault is walked)."""
    db = vault.index
    stm = prefix_bounds(vault.settings.folders.stm.strip("/") + "/")
    # "+type": the notes of the STM folder, a range of the path index, not every memory
    rows = db.conn.execute(
        "SELECT nid, path, id, created, tags FROM notes "
        "WHERE +type = 'memory' AND status = 'active' AND NOT " + HANDS_OFF_SQL + " "
        "AND path >= ? AND path < ? ORDER BY path",
        stm,
    ).fetchall()
    targets: dict[int, list[str]] = {}
    for nid, target in db.conn.execute(
        "SELECT l.nid, l.target FROM notes n JOIN links l ON l.nid = n.nid "
        "WHERE +n.type = 'memory' AND n.status = 'active' AND n.problems = '[]' "
        "AND n.warnings = '[]' AND n.path >= ? AND n.path < ? ORDER BY n.path, l.lid",
        stm,
    ):
        targets.setdefault(nid, []).append(target)
    # each row's tags are a JSON array the index wrote: parsed as one array of them, not
    # 25,000 json.loads calls (a third of this function at 100,000 notes)
    tag_lists = json.loads("[" + ",".join([row[4] for row in rows]) + "]")
    memories = [
        StmMemory(
            path,
            note_id,
            path.rsplit("/", 1)[-1].removesuffix(".md"),
            float(created if created is not None else now.timestamp()),
            tuple(tags),
            tuple(targets.get(nid, ())),
        )
        for (nid, path, note_id, created, _), tags in zip(rows, tag_lists, strict=True)
    ]
    window = vault.settings.lifecycle.trace_window_days * 86_400.0
    traces: list[TraceRecord] = []
    for path, fm in db.frontmatter_of(
        "n.type = 'trace' AND n.status = 'active' AND n.problems = '[]' AND n.warnings = '[]'"
    ):
        boxes = tuple(_unlink(b) for b in fm.get("boxes") or [])
        traces.append(
            TraceRecord(
                path,
                path.rsplit("/", 1)[-1].removesuffix(".md"),
                tuple(str(t) for t in fm.get("topics") or []),
                boxes,
                _epoch(fm.get("updated") or fm.get("created"), 0.0),
                str(fm.get("id") or ""),
            )
        )
    lone: list[SealedBox] = []
    for path, fm in db.frontmatter_of(
        "n.type = 'box' AND n.status = 'active' AND n.trace IS NULL "
        "AND n.problems = '[]' AND n.warnings = '[]'"
    ):
        end = _epoch(fm.get("end"), 0.0)
        if now.timestamp() - end <= window:
            lone.append(
                SealedBox(
                    path.rsplit("/", 1)[-1].removesuffix(".md"),
                    path,
                    tuple(str(t) for t in fm.get("topics") or []),
                    end,
                    None,
                )
            )
    taken = {
        key.removesuffix(".md")
        for prefix in GIVEN_NAME_PREFIXES  # the names a seal could give: a range of the index
        for (key,) in db.conn.execute(
            "SELECT name_key FROM notes WHERE name_key >= ? AND name_key < ?",
            prefix_bounds(prefix),
        )
    }
    return SealInputs(memories, traces, lone, taken)


def box_note(box: BoxPlan, now: dt.datetime) -> str:
    """The text of a new ``type: box`` note; it depends on the plan only (not on ``now``).

    ``id`` is the plan's id derived from the members, ``created`` the time of its last member
    (when it could first seal), so two machines sealing the same members write identical notes.
    """
    fields: dict[str, object] = {
        "id": box.id or new_id(),
        "type": "box",
        "status": "active",
        "created": from_epoch(box.end),
        "start": from_epoch(box.start),
        "end": from_epoch(box.end),
        "topics": list(box.topics),
        "members": [_link(_unlink(m)) for m in box.members],
    }
    if box.trace:
        fields["trace"] = _link(box.trace)
    lines = [
        f"Memory box of {_count(len(box.members), 'memory', 'memories')}, "
        f"{from_epoch(box.start):%Y-%m-%d %H:%M}–{from_epoch(box.end):%H:%M} UTC.",
        "",
    ]
    lines += [f"- {_link(_unlink(m))}" for m in box.members]
    return render_note(fields, "\n".join(lines) + "\n")


def trace_note(trace: TracePlan, now: dt.datetime) -> str:
    """The text of a new ``type: trace`` note; like :func:`box_note`, from the plan only:
    ``created`` and ``updated`` are the end of its latest box."""
    stamp = from_epoch(trace.updated) if trace.updated else now
    fields: dict[str, object] = {
        "id": trace.id or new_id(),
        "type": "trace",
        "status": "active",
        "created": stamp,
        "updated": stamp,
        "topics": list(trace.topics),
        "boxes": [_link(b) for b in trace.boxes],
    }
    body = "A trace: memory boxes on shared topics, in order (see `boxes` above).\n"
    return render_note(fields, body)


def seal_boxes(
    vault: VaultContext,
    session: PassSession,
    now: dt.datetime,
    read: SealInputs | None = None,
    linked: AbstractSet[str] | None = None,
    shared: frozenset[str] | None = None,
) -> PassResult:
    """Plan pass 1 and (unless the session is a dry run) apply it; returns its moves.

    ``read`` and ``linked``: see :func:`load_seal_inputs`; ``shared``: the run's
    :func:`~vaultmem.services.sync.shared_ids.shared_id_paths` (``None``: read here)."""
    from vaultmem.services.lifecycle.pass_session import PassResult

    memories, traces, lone, taken = load_seal_inputs(vault, now, read, linked)
    if shared is None:
        shared = shared_id_paths(vault.index)
    held = [m for m in memories if m.path in shared]
    memories = [m for m in memories if m.path not in shared]
    plan = plan_seal(
        memories, traces, now.timestamp(), vault.settings, taken_names=taken, recent_boxes=lone
    )
    ids = {m.path: m.id for m in memories}
    result = PassResult("seal", [], dry_run=session.dry_run)
    prefix = vault.settings.folders.stm.strip("/") + "/"
    for path, problems in vault.index.conn.execute(
        "SELECT path, problems FROM notes WHERE type = 'memory' AND status = 'active' "
        "AND substr(path, 1, ?) = ? AND problems != '[]' ORDER BY path",
        (len(prefix), prefix),
    ):  # a note vaultmem must not write is left out of every box, and said so
        why = json.loads(problems)[0]
        result.skipped.append((Move(path, None, "seal", None, rule="seal"), f"{why}; not sealed"))
    held_moves = [Move(m.path, m.id, "seal", None, rule="seal") for m in held]
    hold_shared(held_moves, result.skipped, shared)
    for box in plan.boxes:
        result.planned.append(
            Move(
                box.path,
                None,
                "create",
                None,
                rule="seal",
                reason=f"box of {_count(len(box.members), 'memory', 'memories')}, topics "
                f"{', '.join(box.topics) or '—'}; "
                f"sealed: {box.reason}",
            )
        )
        for member, destination in zip(box.members, box.member_destinations, strict=True):
            result.planned.append(
                Move(
                    member,
                    ids.get(member),
                    "seal",
                    destination,
                    {"layer": "episodic", "box": _link(box.title)},
                    rule="seal",
                    reason=box.reason,
                )
            )
    for trace in plan.traces:
        result.planned.append(
            Move(
                trace.path,
                None if trace.new or not trace.id else trace.id,  # an edit is of this id
                "create" if trace.new else "edit",
                None,
                {
                    "topics": list(trace.topics),
                    "boxes": [_link(b) for b in trace.boxes],
                    "updated": from_epoch(trace.updated) if trace.updated else now,
                },
                rule="trace",
                reason=f"trace of {len(trace.boxes)} boxes on {', '.join(trace.topics)}",
            )
        )
    if session.dry_run:
        return result
    _apply_seal(session, plan.boxes, plan.traces, lone, result, now)
    return result


def _apply_seal(
    session: PassSession,
    boxes: Sequence[BoxPlan],
    traces: Sequence[TracePlan],
    lone: Sequence[SealedBox],
    result: PassResult,
    now: dt.datetime,
) -> None:
    """Members first, then each box note listing the members that did move (a member a
    person saved or deleted meanwhile is skipped, and its box does not list it); a box none of
    whose members moved is not written, and traces leave it out."""
    planned = {(m.action, m.path): m for m in result.planned}
    session.expect(len(planned))
    unwritten: set[str] = set()
    prepared_to = batch_end = 0
    texts: dict[str, str] = {}  # box path → its note as written when all its members move
    for at, box in enumerate(boxes):
        report_progress("seal", at, len(boxes))  # before a batch is prepared: shown at once
        if at == batch_end:  # members and box notes of the next boxes, one flush to disk each
            if at == prepared_to:
                prepared_to = _prepare_boxes(session, boxes, at, planned, now, texts)
            batch_end = prepared_to  # and the batch after, flushed while this one is applied
            if prepared_to < len(boxes):
                prepared_to = _prepare_boxes(session, boxes, prepared_to, planned, now, texts)
        session.index_ahead()  # what is written so far, re-indexed meanwhile
        moved: list[str] = []
        for member in box.members:
            move = planned[("seal", member)]
            if _try(session.apply, move, result):
                moved.append(member)
        box_move = planned[("create", box.path)]
        text = texts.pop(box.path, None)
        if not moved:
            unwritten.add(box.title)
            result.skipped.append((box_move, "none of its members could be moved; not written"))
            continue
        if len(moved) != len(box.members) or text is None:
            text = box_note(replace(box, members=tuple(moved)), now)
        _try(partial(_create, session, text), box_move, result)
    report_progress("seal", len(boxes), len(boxes))
    session.index_ahead(1)  # the last boxes, re-indexed while the traces are written
    writes: list[tuple[Move, str | None]] = []  # each trace's move, and a new one's text
    for trace in traces:
        titles = [b for b in trace.boxes if b not in unwritten]
        move = planned[("create" if trace.new else "edit", trace.path)]
        if titles == list(trace.boxes):
            kept_trace = trace
        elif trace.new and len(titles) < 2:
            result.skipped.append((move, "its new boxes were not written"))
            continue
        else:
            kept_trace = replace(trace, boxes=tuple(titles))
            move = replace(move, changes={**move.changes, "boxes": [_link(b) for b in titles]})
        writes.append((move, trace_note(kept_trace, now) if trace.new else None))
    # every trace written ahead together: one flush to disk, not one per trace
    session.prepare(
        [move for move, text in writes if text is None],
        [(move.path, text) for move, text in writes if text is not None],
    )
    for move, text in writes:
        if text is not None:
            _try(partial(_create, session, text), move, result)
        else:
            _try(session.apply, move, result)
    position = {id(m): i for i, m in enumerate(result.planned)}
    result.applied.sort(key=lambda m: position.get(id(m), len(position)))
    trace_of_box = {b: t.title for t in traces for b in t.boxes if b not in unwritten}
    for earlier in lone:  # an earlier lone box that a new trace now includes gets its trace link
        trace_title = trace_of_box.get(earlier.title)
        if trace_title is None:
            continue
        try:
            session.edit_fields(earlier.path, partial(_set_trace, trace_title))
        except InterruptedRunError:
            raise
        except (VaultmemError, OSError) as err:
            result.skipped.append((Move(earlier.path, None, "edit", None), str(err)))


def _prepare_boxes(
    session: PassSession,
    boxes: Sequence[BoxPlan],
    start: int,
    planned: dict[tuple[str, str], Move],
    now: dt.datetime,
    texts: dict[str, str],
) -> int:
    """Prepare the members and box notes of boxes ``start``… (about one batch).

    Returns the index of the first box not prepared; adds each prepared box's note text to
    ``texts`` (box path → text).
    """
    from vaultmem.services.lifecycle.pass_session import PREPARE_BATCH

    end, members = start, 0
    while end < len(boxes) and (members == 0 or members + len(boxes[end].members) <= PREPARE_BATCH):
        members += len(boxes[end].members)
        end += 1
    prepared = {box.path: box_note(box, now) for box in boxes[start:end]}
    session.prepare(
        [planned[("seal", member)] for box in boxes[start:end] for member in box.members],
        list(prepared.items()),
    )
    texts.update(prepared)
    return end


def _create(session: PassSession, text: str, move: Move) -> None:
    session.create(move.path, text)


def _try(action: Callable[[Move], None], move: Move, result: PassResult) -> bool:
    """Apply ``move`` with ``action``; record it as applied or skipped (with why)."""
    try:
        action(move)
    except InterruptedRunError:
        raise
    except (VaultmemError, OSError) as err:
        result.skipped.append((move, str(err)))
        return False
    result.applied.append(move)
    return True


def plan_box_archival(
    vault: VaultContext, leaving: dict[str, Move], now: dt.datetime, sealed: Sequence[Move] = ()
) -> list[Move]:
    """Boxes whose members are all archived once ``leaving`` (path → archive/delete move) is done.

    docs/user-guide.md, "Lifecycle": "a box whose members have all been archived is archived with
    them". ``sealed`` holds the seal pass's planned moves when they were not applied (a dry run):
    the boxes it would create and the members it would move into them count as if done, so the plan
    lists exactly the boxes the real run archives.
    """
    members: dict[str, list[tuple[str, str]]] = {}
    moved_in = {m.path: m for m in sealed if m.action == "seal" and m.destination}
    titles: dict[object, str] = {}  # a box's link as its members write it → its title, folded

    def title_of(link: object) -> str:
        title = titles.get(link)
        if title is None:
            title = titles[link] = _unlink(link).lower()
        return title

    for path, box, status in vault.index.conn.execute(
        "SELECT path, box, status FROM notes WHERE type = 'memory' AND box IS NOT NULL"
    ):
        if path not in moved_in:
            members.setdefault(title_of(box), []).append((path, status))
    for move in moved_in.values():
        box_link = move.changes.get("box") if move.changes else None
        if box_link and move.destination:
            members.setdefault(title_of(box_link), []).append((move.destination, "active"))
    boxes = vault.index.frontmatter_of(
        "n.type = 'box' AND n.status = 'active' AND n.problems = '[]' AND n.warnings = '[]'"
    )
    boxes += [(m.path, {}) for m in sealed if m.action == "create" and m.rule == "seal"]
    moves: list[Move] = []
    for path, fm in boxes:
        title = path.rsplit("/", 1)[-1].removesuffix(".md")
        group = members.get(title.lower(), [])
        if path in leaving or not any(p in leaving for p, _ in group):
            continue
        if all(status == "archived" or p in leaving for p, status in group):
            note_id = fm.get("id")
            moves.append(
                Move(
                    path,
                    str(note_id) if note_id else None,
                    "archive",
                    f"{vault.settings.folders.archive}/{path.rsplit('/', 1)[-1]}",
                    {"status": "archived", "archived_at": now},
                    rule="box",
                    reason="its only member was archived"
                    if len(group) == 1
                    else f"all {len(group)} members archived",
                )
            )
    return moves
