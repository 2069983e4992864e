"""Memories as a person or a script sees them: fields plus derived values.

:class:`Memory` is what ``show``, ``touch`` and ``list`` return; :func:`memory_table` loads many
memories from the index as columns and scores them in one numpy pass (docs/user-guide.md, "Scores").
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from vaultmem.core.collector import collector_paused
from vaultmem.core.notes.excerpts import SHOW_TEXT_CHARS, capped_text
from vaultmem.core.notes.fields import DATETIME_KEYS, MemoryFields
from vaultmem.core.notes.note_parse import CONFLICT_PROBLEM, ParsedNote, title_of
from vaultmem.core.notes.timestamps import format_datetime
from vaultmem.core.settings import Settings
from vaultmem.services.index.index_lookups import conflicted_paths
from vaultmem.store.index_db import IndexDB

if TYPE_CHECKING:  # numpy and the scoring columns load where a table is built (not for recall)
    import numpy as np

    from vaultmem.core.lifecycle.lifecycle_plan import Move
    from vaultmem.core.scoring.scoring import MemoryColumns, Scores


@dataclass(frozen=True, slots=True)
class Memory:
    """One note with its fields and derived values at a given ``now``.

    ``score`` = ``use_factor`` · ``retention`` · ``strength`` ("Scores"); ``half_life_days`` is
    the effective half-life (layer, trust-weighted); ``effective_importance`` and
    ``review_priority`` as in "Scores"; ``edges`` distinct linked notes ("Index and graph").
    """

    path: str
    title: str
    fields: MemoryFields
    body: str
    score: float
    use_factor: float
    retention: float
    half_life_days: float
    age_days: float
    idle_days: float
    effective_importance: float
    review_priority: float
    edges: int
    conflicted: bool = False
    """The note holds git conflict markers; ``fields`` and ``body`` are its "ours" side."""
    properties: dict[str, Any] = field(default_factory=dict)
    """The note's frontmatter as written (what :meth:`as_dict` shows of a person's own note)."""
    problems: tuple[str, ...] = ()
    """Why vaultmem never writes this note (``frontmatter is not valid YAML: …``, conflict
    markers, not UTF-8); empty for a sound note."""
    template: bool = False
    """The note lies in a template folder: a template, never a memory, whatever its
    frontmatter says (``services/index/template_folders``)."""

    @property
    def managed(self) -> bool:
        """A note vaultmem manages (``type`` memory, box or trace, outside the template
        folders), not a person's own or a template."""
        return self.fields.type in ("memory", "box", "trace") and not self.template

    @property
    def importance_level(self) -> int:
        from vaultmem.core.scoring.importance import importance_level

        return int(importance_level(self.fields.importance))

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: path, title, text (the body, capped), every field, score and its factors.

        Datetimes are strings; ``text`` is cut past
        :data:`~vaultmem.core.notes.excerpts.SHOW_TEXT_CHARS` characters with a marker. A person's
        own note or a template (not :attr:`managed`) gets no memory fields or scores, which
        would be defaults it does not have: path, title, conflicted, text, ``"memory": false``,
        ``"template": true`` for a template, ``"problems"`` when its properties cannot be read
        (e.g. the YAML error), its ``properties`` as written, and ``edges``.
        """
        if not self.managed:
            return {
                "path": self.path,
                "title": self.title,
                "conflicted": self.conflicted,
                "text": capped_text(self.body, SHOW_TEXT_CHARS),
                "memory": False,
                **({"template": True} if self.template else {}),
                **({"problems": list(self.problems)} if self.problems else {}),
                "properties": _plain_json(self.properties),
                "edges": self.edges,
            }
        fields: dict[str, object] = {}
        for name in MemoryFields._fields:
            value = getattr(self.fields, name)
            if name in DATETIME_KEYS and value is not None:
                value = format_datetime(value)
            elif isinstance(value, tuple):
                value = list(value)
            fields[name] = value
        return {
            "path": self.path,
            "title": self.title,
            "conflicted": self.conflicted,
            "text": capped_text(self.body, SHOW_TEXT_CHARS),
            "memory": self.fields.type == "memory",
            **fields,
            "score": _finite(self.score),
            "factors": {
                "use_factor": _finite(self.use_factor),
                "retention": _finite(self.retention),
                "strength": self.fields.strength,
                "half_life_days": _finite(self.half_life_days),
            },
            "age_days": _finite(self.age_days),
            "idle_days": _finite(self.idle_days),
            "effective_importance": _finite(self.effective_importance),
            "importance_level": self.importance_level,
            "review_priority": _finite(self.review_priority),
            "edges": self.edges,
        }


def _plain_json(value: Any) -> Any:
    """A frontmatter value as JSON has it: dates and times as ISO strings, tuples as lists."""
    if isinstance(value, dict):
        return {str(k): _plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain_json(v) for v in value]
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _finite(value: float) -> float | None:
    """JSON has no infinity: ``inf`` half-lives become ``None`` (no decay)."""
    return None if math.isinf(value) or math.isnan(value) else round(float(value), 6)


def memory_from_note(note: ParsedNote, scores: Scores, edges: int) -> Memory:
    """A :class:`Memory` from a parsed note and its one-row :class:`Scores`."""
    return Memory(
        path=note.path,
        title=note.title,
        fields=note.fields,
        body=note.body,
        score=float(scores.score[0]),
        use_factor=float(scores.use_factor[0]),
        retention=float(scores.retention[0]),
        half_life_days=float(scores.half_life_days[0]),
        age_days=float(scores.age_days[0]),
        idle_days=float(scores.idle_days[0]),
        effective_importance=float(scores.effective_importance[0]),
        review_priority=float(scores.review_priority[0]),
        edges=edges,
        conflicted=any(p.startswith(CONFLICT_PROBLEM) for p in note.problems),
        properties=dict(note.frontmatter),
        problems=note.problems,
    )


@dataclass(frozen=True, slots=True)
class MemoryTable:
    """Columns and scores of many memories, one row per memory in the index's own order (not
    sorted: :func:`order_rows` orders them for ``list``)."""

    columns: MemoryColumns
    scores: Scores
    linked: AbstractSet[str] | None = None
    """Vault-relative paths of the notes that are symbolic links, as found by the walk of the
    sync just before the table was loaded; ``None`` when there was none (a live watcher keeps
    the index fresh, or the sidecar is read-only): then ask the file system."""

    def __len__(self) -> int:
        return len(self.columns)


def memory_table(
    db: IndexDB,
    settings: Settings,
    now: dt.datetime,
    *,
    where: str = "n.type = 'memory'",
    params: tuple[object, ...] = (),
) -> MemoryTable:
    """Load the notes matching ``where`` (SQL over ``notes n``) and score them at ``now``.

    The cyclic garbage collector is paused while the rows are fetched and turned into columns:
    100,000 fresh row tuples would otherwise set off collections that find nothing to free.
    """
    from vaultmem.core.scoring.scoring import MemoryColumns, score_columns

    with collector_paused():
        columns = MemoryColumns.from_rows(db.memory_rows(where, params))
    return MemoryTable(columns, score_columns(columns, now.timestamp(), settings))


def with_moves(
    table: MemoryTable, moves: Sequence[Move], settings: Settings, now: dt.datetime
) -> MemoryTable:
    """``table`` as it will be after ``moves`` (new paths and layers), re-scored; for dry runs."""
    from vaultmem.core.scoring.scoring import score_columns

    c = table.columns
    row_of = {str(p): i for i, p in enumerate(c.path)}
    path, layer, top = c.path.copy(), c.layer.copy(), c.top_folder.copy()
    for move in moves:
        i = row_of.get(move.path)
        if i is None:
            continue
        if move.destination:
            path[i] = move.destination
            top[i] = move.destination.split("/", 1)[0] if "/" in move.destination else ""
        if "layer" in move.changes:
            layer[i] = move.changes["layer"]
    columns = replace(c, path=path, layer=layer, top_folder=top)
    linked = table.linked
    if linked:  # a linked note is never moved by a pass; kept right all the same
        moved = {m.path: m.destination for m in moves if m.destination}
        linked = {moved.get(rel, rel) for rel in linked}
    return MemoryTable(columns, score_columns(columns, now.timestamp(), settings), linked)


SORT_KEYS = ("score", "ei", "last_used", "created", "title")


def order_rows(table: MemoryTable, sort: str) -> np.ndarray:
    """Row order for ``list --sort``: score, ei, last_used, created descending; title ascending."""
    import numpy as np

    c, s = table.columns, table.scores
    if sort == "score":
        key = -s.score
    elif sort == "ei":
        key = -s.effective_importance
    elif sort == "last_used":
        key = -np.nan_to_num(c.last_used, nan=-np.inf)
    elif sort == "created":
        key = -np.nan_to_num(c.created, nan=-np.inf)
    elif sort == "title":
        return np.argsort(
            np.array([str(p).rsplit("/", 1)[-1].lower() for p in c.path]), kind="stable"
        )
    else:
        raise ValueError(f"unknown sort key {sort!r}; one of {', '.join(SORT_KEYS)}")
    return np.lexsort((c.path.astype(str), key))


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """One line of ``list``: identity, place, state and the derived values that order it."""

    path: str
    id: str | None
    title: str
    status: str
    layer: str
    category: str
    use_count: int
    last_used: str | None
    score: float
    effective_importance: float
    review_priority: float
    conflicted: bool = False
    """The note holds git conflict markers; its values are read from its "ours" side."""

    def as_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "id": self.id,
            "title": self.title,
            "conflicted": self.conflicted,
            "status": self.status,
            "layer": self.layer,
            "category": self.category,
            "use_count": self.use_count,
            "last_used": self.last_used,
            "score": _finite(self.score),
            "effective_importance": _finite(self.effective_importance),
            "review_priority": _finite(self.review_priority),
        }


def rows_of(table: MemoryTable, order: np.ndarray, db: IndexDB) -> list[MemoryRow]:
    """:class:`MemoryRow` for the rows ``order`` of ``table``."""
    import numpy as np

    c, s = table.columns, table.scores
    rows: list[MemoryRow] = []
    conflicted = conflicted_paths(db)
    for i in order:
        path = str(c.path[i])
        last_used = (
            None
            if np.isnan(c.last_used[i])
            else format_datetime(dt.datetime.fromtimestamp(float(c.last_used[i]), tz=dt.UTC))
        )
        rows.append(
            MemoryRow(
                path=path,
                id=c.id[i],
                title=title_of(path),
                status=str(c.status[i]),
                layer=str(c.layer[i]),
                category=str(c.category[i]),
                use_count=int(c.use_count[i]),
                last_used=last_used,
                score=float(s.score[i]),
                effective_importance=float(s.effective_importance[i]),
                review_priority=float(s.review_priority[i]),
                conflicted=path in conflicted,
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class VaultStatus:
    """``status``: notes and memories per top folder and status, and what passes would do now."""

    notes: int
    memories: int
    by_folder: dict[str, int]
    by_status: dict[str, int]
    by_layer: dict[str, int]
    danger_zone: int
    would_forget: int
    would_promote: int
    conflicted: int = 0
    """Memories whose notes hold git conflict markers."""
    next_pass: dict[str, dict[str, int]] = field(default_factory=dict)
    """What the next ``lifecycle`` would do: pass name → action (seal, create, promote,
    archive, edit …) → notes; ``would_forget`` and ``would_promote`` are two of its sums."""

    def as_dict(self) -> dict[str, object]:
        return {
            "notes": self.notes,
            "memories": self.memories,
            "conflicted": self.conflicted,
            "by_folder": self.by_folder,
            "by_status": self.by_status,
            "by_layer": self.by_layer,
            "danger_zone": self.danger_zone,
            "would_forget": self.would_forget,
            "would_promote": self.would_promote,
            "next_pass": self.next_pass,
        }


def _counts(values: np.ndarray) -> dict[str, int]:
    import numpy as np

    names, counts = np.unique(values.astype(str), return_counts=True)
    return {str(n): int(k) for n, k in zip(names, counts, strict=True)}


def vault_status(
    table: MemoryTable,
    settings: Settings,
    notes: int,
    *,
    forget: int,
    promote: int,
    conflicted: int = 0,
    next_pass: dict[str, dict[str, int]] | None = None,
) -> VaultStatus:
    """Summarise ``table`` (all memories); ``forget``/``promote`` are the planned move counts."""
    import numpy as np

    c, s = table.columns, table.scores
    folders = np.array([f"{top}/" if top else "(top)" for top in c.top_folder])
    th = settings.thresholds
    active = c.status == "active"
    danger = active & (s.score >= th.danger_zone_min) & (s.score <= th.danger_zone_max)
    return VaultStatus(
        notes=notes,
        memories=len(c),
        by_folder=_counts(folders),
        by_status=_counts(c.status),
        by_layer=_counts(c.layer),
        danger_zone=int(danger.sum()),
        would_forget=forget,
        would_promote=promote,
        conflicted=conflicted,
        next_pass=next_pass or {},
    )
