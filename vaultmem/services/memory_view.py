"""Memories as a person or a script sees them: fields plus derived values.

:class:`Memory` is what ``show``, ``touch`` and ``list`` return; :func:`memory_table` loads many
memories from the index as columns and scores them in one numpy pass (spec 3, style rule 5).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

import numpy as np

from vaultmem.core.fields import DATETIME_KEYS, MemoryFields
from vaultmem.core.importance import importance_level
from vaultmem.core.note_parse import ParsedNote
from vaultmem.core.scoring import MemoryColumns, Scores, score_columns
from vaultmem.core.settings import Settings
from vaultmem.core.timestamps import format_datetime
from vaultmem.store.index_db import IndexDB


@dataclass(frozen=True, slots=True)
class Memory:
    """One note with its fields and derived values at a given ``now``.

    ``score`` = ``use_factor`` · ``retention`` · ``strength`` (spec 3.1); ``half_life_days`` is
    the effective half-life (layer, trust-weighted); ``effective_importance`` spec 3.2;
    ``review_priority`` spec 3.3; ``edges`` distinct linked notes (spec 6).
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

    @property
    def importance_level(self) -> int:
        return int(importance_level(self.fields.importance))

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: path, title, every field (datetimes as strings), score and its factors."""
        fields: dict[str, object] = {}
        for name in MemoryFields.__slots__:  # type: ignore[attr-defined]
            value = getattr(self.fields, name)
            if name in DATETIME_KEYS and value is not None:
                value = format_datetime(value)
            elif isinstance(value, tuple):
                value = list(value)
            fields[name] = value
        return {
            "path": self.path,
            "title": self.title,
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


def _finite(value: float) -> float | None:
    """JSON has no infinity: ``inf`` half-lives become ``None`` (no decay)."""
    return None if math.isinf(value) or math.isnan(value) else round(float(value), 6)


def memory_from_note(note: ParsedNote, scores: Scores, edges: int) -> Memory:
    """A :class:`Memory` from a parsed note and its one-row :class:`Scores`."""
    return Memory(
        path=note.path, title=note.title, fields=note.fields, body=note.body,
        score=float(scores.score[0]), use_factor=float(scores.use_factor[0]),
        retention=float(scores.retention[0]), half_life_days=float(scores.half_life_days[0]),
        age_days=float(scores.age_days[0]), idle_days=float(scores.idle_days[0]),
        effective_importance=float(scores.effective_importance[0]),
        review_priority=float(scores.review_priority[0]), edges=edges,
    )


@dataclass(frozen=True, slots=True)
class MemoryTable:
    """Columns and scores of many memories (rows in path order)."""

    columns: MemoryColumns
    scores: Scores

    def __len__(self) -> int:
        return len(self.columns)


def memory_table(
    db: IndexDB, settings: Settings, now: dt.datetime, *, where: str = "n.type = 'memory'",
    params: tuple[object, ...] = (),
) -> MemoryTable:
    """Load the notes matching ``where`` (SQL over ``notes n``) and score them at ``now``."""
    columns = MemoryColumns.from_rows(db.memory_rows(where, params))
    return MemoryTable(columns, score_columns(columns, now.timestamp(), settings))


SORT_KEYS = ("score", "ei", "last_used", "created", "title")


def order_rows(table: MemoryTable, sort: str) -> np.ndarray:
    """Row order for ``list --sort``: score / ei / last_used / created descending, title ascending."""
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
        return np.argsort(np.array([str(p).rsplit("/", 1)[-1].lower() for p in c.path]), kind="stable")
    else:
        raise ValueError(f"unknown sort key {sort!r}; one of {', '.join(SORT_KEYS)}")
    return np.lexsort((c.path.astype(str), key))
