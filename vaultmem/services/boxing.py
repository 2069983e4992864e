"""Pass 1, *Seal boxes*, applied (spec section 4.1; seed 002): box notes, member moves, traces.

The plan is :func:`vaultmem.core.boxes.plan_seal`, fed from the index (columns and stored
frontmatter; no note is read to plan). Applying it creates ``Boxes/YYYY-MM-DD/<box>.md``
(``type: box``: topics, time span, member links, trace link), moves each member to
``Boxes/YYYY-MM-DD/<box>/`` with ``layer: episodic`` and ``box:`` set, and creates or extends
the ``type: trace`` notes — every step through the pass journal, so ``undo`` reverses it.
"""

from __future__ import annotations

import datetime as dt
import json
from functools import partial
from typing import TYPE_CHECKING

from vaultmem.core.boxes import BoxPlan, SealedBox, StmMemory, TracePlan, TraceRecord, plan_seal
from vaultmem.core.fields import MemoryFields
from vaultmem.core.lifecycle_plan import Move
from vaultmem.core.naming import new_id
from vaultmem.core.note_text import render_note
from vaultmem.core.timestamps import from_epoch, parse_datetime
from vaultmem.errors import VaultmemError

if TYPE_CHECKING:
    from vaultmem.services.lifecycle import PassResult, PassSession
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


def load_seal_inputs(
    vault: VaultContext, now: dt.datetime
) -> tuple[list[StmMemory], list[TraceRecord], list[SealedBox], set[str]]:
    """STM memories, traces, lone recent boxes and taken base names, from the index."""
    db = vault.index
    prefix = vault.settings.folders.stm.strip("/") + "/"
    rows = db.conn.execute(
        "SELECT nid, path, id, created, tags FROM notes "
        "WHERE type = 'memory' AND status = 'active' "
        "AND substr(path, 1, ?) = ? ORDER BY path",
        (len(prefix), prefix),
    ).fetchall()
    targets: dict[int, list[str]] = {}
    for nid, target in db.conn.execute(
        "SELECT l.nid, l.target FROM links l JOIN notes n ON n.nid = l.nid WHERE n.type = 'memory' "
        "AND n.status = 'active' AND substr(n.path, 1, ?) = ? ORDER BY l.lid",
        (len(prefix), prefix),
    ):
        targets.setdefault(nid, []).append(target)
    memories = [
        StmMemory(
            path,
            note_id,
            path.rsplit("/", 1)[-1].removesuffix(".md"),
            float(created if created is not None else now.timestamp()),
            tuple(json.loads(tags)),
            tuple(targets.get(nid, ())),
        )
        for nid, path, note_id, created, tags in rows
    ]
    window = vault.settings.lifecycle.trace_window_days * 86_400.0
    traces: list[TraceRecord] = []
    for path, fm in db.frontmatter_of("n.type = 'trace' AND n.status = 'active'"):
        boxes = tuple(_unlink(b) for b in fm.get("boxes") or [])
        traces.append(
            TraceRecord(
                path,
                path.rsplit("/", 1)[-1].removesuffix(".md"),
                tuple(str(t) for t in fm.get("topics") or []),
                boxes,
                _epoch(fm.get("updated") or fm.get("created"), 0.0),
            )
        )
    lone: list[SealedBox] = []
    for path, fm in db.frontmatter_of("n.type = 'box' AND n.status = 'active' AND n.trace IS NULL"):
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
    taken = {key.removesuffix(".md") for (key,) in db.conn.execute("SELECT name_key FROM notes")}
    return memories, traces, lone, taken


def box_note(box: BoxPlan, now: dt.datetime) -> str:
    """The text of a new ``type: box`` note."""
    fields: dict[str, object] = {
        "id": new_id(),
        "type": "box",
        "status": "active",
        "created": now,
        "start": from_epoch(box.start),
        "end": from_epoch(box.end),
        "topics": list(box.topics),
        "members": [_link(_unlink(m)) for m in box.members],
    }
    if box.trace:
        fields["trace"] = _link(box.trace)
    lines = [
        f"Memory box of {len(box.members)} memories, "
        f"{from_epoch(box.start):%Y-%m-%d %H:%M}–{from_epoch(box.end):%H:%M} UTC.",
        "",
    ]
    lines += [f"- {_link(_unlink(m))}" for m in box.members]
    return render_note(fields, "\n".join(lines) + "\n")


def trace_note(trace: TracePlan, now: dt.datetime) -> str:
    """The text of a new ``type: trace`` note."""
    fields: dict[str, object] = {
        "id": new_id(),
        "type": "trace",
        "status": "active",
        "created": now,
        "updated": now,
        "topics": list(trace.topics),
        "boxes": [_link(b) for b in trace.boxes],
    }
    body = "A trace: memory boxes on shared topics, in order (see `boxes` above).\n"
    return render_note(fields, body)


def seal_boxes(vault: VaultContext, session: PassSession, now: dt.datetime) -> PassResult:
    """Plan pass 1 and (unless the session is a dry run) apply it; returns its moves."""
    from vaultmem.services.lifecycle import PassResult

    memories, traces, lone, taken = load_seal_inputs(vault, now)
    plan = plan_seal(
        memories, traces, now.timestamp(), vault.settings, taken_names=taken, recent_boxes=lone
    )
    ids = {m.path: m.id for m in memories}
    result = PassResult("seal", [], dry_run=session.dry_run)
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
                None,
                "create" if trace.new else "edit",
                None,
                {
                    "topics": list(trace.topics),
                    "boxes": [_link(b) for b in trace.boxes],
                    "updated": now,
                },
                rule="trace",
                reason=f"trace of {len(trace.boxes)} boxes on {', '.join(trace.topics)}",
            )
        )
    if session.dry_run:
        return result
    boxes = {b.path: b for b in plan.boxes}
    traces_by_path = {t.path: t for t in plan.traces}
    trace_of_box = {b: t.title for t in plan.traces for b in t.boxes}
    for move in result.planned:
        try:
            if move.action == "create" and move.path in boxes:
                session.create(move.path, box_note(boxes[move.path], now))
            elif move.action == "create":
                session.create(move.path, trace_note(traces_by_path[move.path], now))
            else:
                session.apply(move)
        except (VaultmemError, OSError) as err:
            result.skipped.append((move, str(err)))
            continue
        result.applied.append(move)
    for earlier in lone:  # an earlier lone box that a new trace now includes gets its trace link
        trace_title = trace_of_box.get(earlier.title)
        if trace_title is None:
            continue
        try:
            session.edit_fields(earlier.path, partial(_set_trace, trace_title))
        except (VaultmemError, OSError) as err:
            result.skipped.append((Move(earlier.path, None, "edit", None), str(err)))
    return result


def plan_box_archival(
    vault: VaultContext, leaving: dict[str, Move], now: dt.datetime
) -> list[Move]:
    """Boxes whose members are all archived once ``leaving`` (path → archive/delete move) is done.

    Spec 4: "a box whose members have all been archived is archived with them".
    """
    members: dict[str, list[tuple[str, str]]] = {}
    for path, box, status in vault.index.conn.execute(
        "SELECT path, box, status FROM notes WHERE type = 'memory' AND box IS NOT NULL"
    ):
        members.setdefault(_unlink(box).lower(), []).append((path, status))
    moves: list[Move] = []
    for path, fm in vault.index.frontmatter_of("n.type = 'box' AND n.status = 'active'"):
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
