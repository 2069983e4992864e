"""Making memories: ``remember`` (one) and ``import`` (JSONL, one per line).

The frontmatter of a new memory is written in the order of spec section 2's example; only keys
that carry information are written (``box``/``related`` only when set), and every datetime is
``YYYY-MM-DDTHH:MM:SS`` UTC.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from vaultmem.core.fields import DATETIME_KEYS, LAYERS, SOURCES, normalise_tags
from vaultmem.core.importance import importance_from_level
from vaultmem.core.naming import new_id
from vaultmem.core.note_parse import title_of
from vaultmem.core.timestamps import parse_datetime
from vaultmem.errors import InputError, VaultmemError
from vaultmem.store.vault_lock import vault_lock

if TYPE_CHECKING:
    from vaultmem.services.vault import Vault

FIELD_ORDER = (
    "id",
    "type",
    "status",
    "layer",
    "category",
    "created",
    "last_used",
    "use_count",
    "strength",
    "importance",
    "confidence",
    "source",
    "pinned",
    "tags",
    "box",
    "related",
    "review_count",
    "last_review_at",
    "cross_domain_count",
    "promoted_at",
    "archived_at",
    "resolved_at",
    "valid_until",
    "supersedes",
    "episode",
    "previous",
)


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """What ``remember`` was asked to write, validated. ``extra`` = other properties as given."""

    content: str
    title: str | None = None
    tags: tuple[str, ...] = ()
    category: str = "fact"
    importance: float = 0.5
    confidence: float = 1.0
    source: str = "human"
    layer: str = "working"
    pinned: bool = False
    strength: float = 1.0
    use_count: int = 1
    created: dt.datetime | None = None
    last_used: dt.datetime | None = None
    id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def frontmatter(self, now: dt.datetime) -> dict[str, object]:
        """The new note's frontmatter, in :data:`FIELD_ORDER` then ``extra`` keys."""
        created = self.created or now
        values: dict[str, object] = {
            "id": self.id or new_id(),
            "type": "memory",
            "status": "active",
            "layer": self.layer,
            "category": self.category,
            "created": created,
            "last_used": self.last_used or created,
            "use_count": self.use_count,
            "strength": self.strength,
            "importance": self.importance,
            "confidence": self.confidence,
            "source": self.source,
            "pinned": self.pinned,
            "tags": list(self.tags),
        }
        for key, value in self.extra.items():
            values[key] = value
        ordered = {k: values[k] for k in FIELD_ORDER if k in values}
        ordered.update((k, v) for k, v in values.items() if k not in ordered)
        return ordered


def _number(name: str, value: object, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{name} must be a number in {low:g}..{high:g}, not {value!r}")
    if not low <= value <= high:
        raise InputError(f"{name} must be in {low:g}..{high:g}, not {value!r}")
    return float(value)


def make_draft(content: str, **options: Any) -> MemoryDraft:
    """Validate ``remember``'s options into a :class:`MemoryDraft`; raises :class:`InputError`.

    ``imp`` (Mnemon's 1..5) sets ``importance`` = (imp − 1) / 4; it conflicts with
    ``importance``. Unknown ``layer``/``source`` values are refused with the allowed list.
    """
    if not content or not content.strip():
        raise InputError("nothing to remember: the content is empty")
    imp = options.pop("imp", None)
    if imp is not None:
        if options.get("importance") is not None:
            raise InputError("give --importance or --imp, not both")
        if isinstance(imp, bool) or not isinstance(imp, int) or not 1 <= imp <= 5:
            raise InputError(f"--imp must be a whole number 1..5, not {imp!r}")
        options["importance"] = importance_from_level(imp)
    values = {k: v for k, v in options.items() if v is not None}
    for name in ("importance", "confidence"):
        if name in values:
            values[name] = _number(name, values[name], 0.0, 1.0)
    if "strength" in values:
        values["strength"] = _number("strength", values["strength"], 0.0, 2.0)
    if "use_count" in values:
        count = values["use_count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InputError(f"use_count must be a whole number ≥ 1, not {count!r}")
    if values.get("layer", "working") not in LAYERS:
        raise InputError(f"layer must be one of {', '.join(LAYERS)}, not {values['layer']!r}")
    if values.get("source", "human") not in SOURCES:
        raise InputError(f"source must be one of {', '.join(SOURCES)}, not {values['source']!r}")
    if "tags" in values:
        try:
            values["tags"] = normalise_tags(values["tags"])
        except ValueError:
            raise InputError(f"tags must be a list of words, not {values['tags']!r}") from None
    for key in ("created", "last_used"):
        if key in values:
            try:
                values[key] = parse_datetime(values[key])
            except ValueError:
                raise InputError(f"{key} is not a datetime: {values[key]!r}") from None
    if "category" in values:
        values["category"] = str(values["category"]).strip() or "fact"
    return MemoryDraft(content=content, **values)


DRAFT_KEYS = (
    "title",
    "tags",
    "category",
    "importance",
    "confidence",
    "source",
    "layer",
    "pinned",
    "strength",
    "use_count",
    "created",
    "last_used",
    "id",
)


def draft_from_json(record: object) -> MemoryDraft:
    """A JSONL import record → :class:`MemoryDraft`.

    ``content`` is required; spec section 2 keys map to fields (so decay histories migrate);
    other datetime keys are parsed; every other key becomes a property as it is. Raises
    :class:`InputError` describing the problem.
    """
    if not isinstance(record, dict):
        raise InputError("a line must be a JSON object")
    content = record.get("content")
    if not isinstance(content, str):
        raise InputError('missing "content" (a string)')
    options: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    record = conversation_fields(record)
    for key, value in record.items():
        if key == "content":
            continue
        if key in DRAFT_KEYS:
            options[key] = value
        elif key in ("type", "status"):
            continue  # an import always makes an active memory
        elif key in DATETIME_KEYS:
            try:
                extra[key] = parse_datetime(value)
            except ValueError:
                raise InputError(f"{key} is not a datetime: {value!r}") from None
        else:
            extra[key] = value
    if options.get("pinned") is not None and not isinstance(options["pinned"], bool):
        raise InputError(f"pinned must be true or false, not {options['pinned']!r}")
    options.setdefault("source", "import")
    return make_draft(content, extra=extra, **options)


@dataclass(slots=True)
class ImportReport:
    """``import`` outcome: paths written, and (line number, problem) of each skipped line."""

    imported: list[str] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "imported": len(self.imported),
            "paths": self.imported,
            "errors": [{"line": n, "error": e} for n, e in self.errors],
        }


EPISODE_KEYS = ("episode", "session", "conversation", "session_id", "conversation_id")
"""Keys of an import line that name the conversation (episode) a turn belongs to, first wins."""
TIME_KEYS = ("timestamp", "time", "date_time")
"""Keys of an import line that give a turn's time when it has no ``created``."""


def conversation_fields(record: dict[str, Any]) -> dict[str, Any]:
    """An import line with its conversation keys mapped to memory properties.

    The first of :data:`EPISODE_KEYS` becomes ``episode`` (text) and the others are dropped; the
    first of :data:`TIME_KEYS` becomes ``created`` when the line has none. Other keys (e.g.
    ``speaker``) are kept as they are. The record given is not changed.
    """
    out = dict(record)
    episode = next((out[k] for k in EPISODE_KEYS if out.get(k) not in (None, "")), None)
    for key in EPISODE_KEYS:
        out.pop(key, None)
    if episode is not None:
        if isinstance(episode, bool) or not isinstance(episode, str | int | float):
            raise InputError(f"episode must be text, not {episode!r}")
        out["episode"] = str(episode).strip()
    if "created" not in out:
        when = next((out[k] for k in TIME_KEYS if out.get(k) not in (None, "")), None)
        if when is not None:
            out["created"] = when
    for key in TIME_KEYS:
        if key in out and "created" in out and out[key] == out["created"]:
            out.pop(key)
    return out


def conversation_order(drafts: list[tuple[int, MemoryDraft]]) -> list[tuple[int, MemoryDraft]]:
    """``(line number, draft)`` pairs in the order to write them: each episode's turns sorted
    by ``created`` (ties, and turns without a time, keep their line order), placed where the
    episode's first line is; lines without an episode stay where they are."""
    groups: dict[str, list[tuple[int, MemoryDraft]]] = {}
    slots: list[tuple[int, MemoryDraft] | str] = []
    for number, draft in drafts:
        episode = draft.extra.get("episode")
        if not isinstance(episode, str):
            slots.append((number, draft))
            continue
        if episode not in groups:
            groups[episode] = []
            slots.append(episode)
        groups[episode].append((number, draft))
    ordered: list[tuple[int, MemoryDraft]] = []
    for slot in slots:
        if isinstance(slot, str):
            turns = groups[slot]
            timed = all(d.created is not None for _, d in turns)
            ordered += sorted(turns, key=lambda t: (t[1].created, t[0])) if timed else turns
        else:
            ordered.append(slot)
    return ordered


def linked_turn(draft: MemoryDraft, previous_title: str | None) -> MemoryDraft:
    """``draft`` with ``previous: "[[previous_title]]"`` when it follows a turn of its episode."""
    if previous_title is None:
        return draft
    extra = dict(draft.extra)
    extra["previous"] = f"[[{previous_title}]]"
    return replace(draft, extra=extra)


def import_lines(
    vault: Vault,
    lines: Iterable[str],
    *,
    now: dt.datetime,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import one memory per JSONL line; a bad line is reported by number and skipped.

    Turns of one conversation (an ``episode``/``session``/``conversation`` key) are written in
    time order and each links the turn before it (``previous``, :func:`linked_turn`).
    """
    report = ImportReport()
    drafts: list[tuple[int, MemoryDraft]] = []
    for number, line in enumerate(lines, 1):
        if progress is not None:
            progress(number)
        if not line.strip():
            continue
        try:
            drafts.append((number, draft_from_json(json.loads(line))))
        except json.JSONDecodeError as err:
            report.errors.append((number, f"not JSON: {err.msg} at column {err.colno}"))
        except VaultmemError as err:
            report.errors.append((number, str(err)))
    last_turn: dict[str, str] = {}
    with vault_lock(vault.sidecar):
        vault.sync()
        for number, draft in conversation_order(drafts):
            episode = draft.extra.get("episode")
            key = episode if isinstance(episode, str) else None
            try:
                path = vault.write_draft(
                    linked_turn(draft, last_turn.get(key) if key else None),
                    now=now, link=False, synced=True,
                )
            except VaultmemError as err:
                report.errors.append((number, str(err)))
                continue
            report.imported.append(path)
            if key:
                last_turn[key] = title_of(path)
    report.errors.sort()
    return report
