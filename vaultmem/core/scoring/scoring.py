"""Scores of many memories at once, from columns (docs/user-guide.md, "Scores").

:class:`MemoryColumns` holds one numpy array per field for n memories (the index hands them over
column by column; a single memory is a table of one row). :func:`score_columns` computes every
derived value — decay score, its factors, EI, review priority — as numpy expressions, with no
Python loop over memories.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from vaultmem.core.notes.fields import MemoryFields
from vaultmem.core.notes.timestamps import to_epoch
from vaultmem.core.scoring.decay import (
    SECONDS_PER_DAY,
    retention,
    source_trust,
    trust_weighted_half_life,
)
from vaultmem.core.scoring.importance import effective_importance, review_priority
from vaultmem.core.scoring.score_formulas import COLUMN_ORDER, use_factor
from vaultmem.core.scoring.vectorised import per_distinct
from vaultmem.core.settings import Settings

FloatArray = npt.NDArray[np.float64]
ObjArray = npt.NDArray[np.object_]


@dataclass(frozen=True, slots=True)
class MemoryColumns:
    """n memories as columns; datetimes are epoch seconds with NaN for "absent"."""

    path: ObjArray
    id: ObjArray
    type: ObjArray
    status: ObjArray
    layer: ObjArray
    category: ObjArray
    source: ObjArray
    created: FloatArray
    last_used: FloatArray
    use_count: FloatArray
    strength: FloatArray
    importance: FloatArray
    confidence: FloatArray
    pinned: npt.NDArray[np.bool_]
    resolved_at: FloatArray
    use_days: FloatArray
    """Distinct UTC days of use, the creation day included (the promotion rule)."""
    edges: FloatArray
    top_folder: ObjArray
    """The first folder of each path ("" for notes at the top of the vault)."""

    def __len__(self) -> int:
        return len(self.path)

    @classmethod
    def from_rows(cls, rows: Sequence[Sequence[object]]) -> MemoryColumns:
        """Build from rows ordered as :data:`COLUMN_ORDER` (``None`` → NaN for numbers).

        The rows become one numpy record array in a single C pass (no per-value Python loop),
        whose fields are then copied out as contiguous columns.
        """
        records = np.array(
            [row if isinstance(row, tuple) else tuple(row) for row in rows]
            if rows and not isinstance(rows[0], tuple)
            else rows,
            dtype=_ROW_DTYPE,
        )
        if records.ndim != 1:  # no rows: numpy reads an empty list as shape (0,) already
            records = records.reshape(-1)
        values = {name: np.ascontiguousarray(records[name]) for name in COLUMN_ORDER}
        values["top_folder"] = np.array(
            [p[: p.find("/")] if "/" in p else "" for p in values["path"].tolist()], dtype=object
        )
        return cls(**values)

    @classmethod
    def from_fields(cls, path: str, fields: MemoryFields, edges: int = 0) -> MemoryColumns:
        """A table of one memory."""

        def epoch(value: object) -> float | None:
            return None if value is None else to_epoch(value)  # type: ignore[arg-type]

        row = (
            path,
            fields.id,
            fields.type,
            fields.status,
            fields.layer,
            fields.category,
            fields.source,
            epoch(fields.created),
            epoch(fields.last_used),
            fields.use_count,
            fields.strength,
            fields.importance,
            fields.confidence,
            fields.pinned,
            epoch(fields.resolved_at),
            fields.use_days,
            edges,
        )
        return cls.from_rows([row])


_TEXT_COLUMNS = {"path", "id", "type", "status", "layer", "category", "source"}
_ROW_DTYPE = np.dtype(
    [
        (name, object if name in _TEXT_COLUMNS else np.bool_ if name == "pinned" else np.float64)
        for name in COLUMN_ORDER
    ]
)
"""One index row as a record: text as Python objects, ``pinned`` as bool, numbers as float64
(``None`` → NaN, as ``np.array(..., dtype=float64)`` converts it)."""


@dataclass(frozen=True, slots=True)
class Scores:
    """Derived values of n memories ("Scores"): arrays of shape (n,)."""

    score: FloatArray
    use_factor: FloatArray
    retention: FloatArray
    half_life_days: FloatArray
    age_days: FloatArray
    idle_days: FloatArray
    effective_importance: FloatArray
    review_priority: FloatArray
    promotion_score: FloatArray
    """The score on the working layer's curve, which the promote threshold is calibrated on."""


def half_life_seconds(
    layer: ObjArray, source: ObjArray, settings: Settings, trust: FloatArray | None = None
) -> FloatArray:
    """Effective half-life per memory: layer half-life, trust-weighted by source (engram).

    Layers are looked up once per distinct name; ``trust`` (``source_trust(source)``) may be
    passed when the caller already has it.
    """
    return _trust_weighted(per_distinct(layer, settings.half_life_days), source, settings, trust)


def _trust_weighted(
    days: FloatArray, source: ObjArray, settings: Settings, trust: FloatArray | None
) -> FloatArray:
    base = days * SECONDS_PER_DAY
    if trust is None:
        trust = source_trust(np.asarray(source, dtype=object))
    return np.asarray(
        trust_weighted_half_life(base, trust, settings.decay.trust_kappa), dtype=np.float64
    )


def score_columns(columns: MemoryColumns, now_epoch: float, settings: Settings) -> Scores:
    """Every derived value of ``columns`` at ``now_epoch`` (epoch seconds).

    score = use_count^β · f(Δt) · strength (Mnemex; user guide "Scores"), Δt = now − last_used
    floored at 0; EI (Mnemon) with ``edges`` from the link graph; review priority
    (Mnemex) over the ``[thresholds]`` danger zone.

    ``promotion_score`` is the same score on the working layer's half-life (trust-weighted):
    Mnemex calibrated the 0.65 promote threshold on that 3-day curve. On a memory's own layer a
    sealed, never reinforced episodic memory (30-day half-life) would score 0.91 at 3 days and
    every box would drain into LTM; on the working curve it scores 0.5, and only reinforced
    memories promote.
    """
    params = settings.decay
    trust = source_trust(columns.source)
    half_life = half_life_seconds(columns.layer, columns.source, settings, trust)
    last_used = np.where(np.isnan(columns.last_used), columns.created, columns.last_used)
    last_used = np.where(np.isnan(last_used), now_epoch, last_used)
    idle = np.maximum(now_epoch - last_used, 0.0)
    created = np.where(np.isnan(columns.created), last_used, columns.created)
    kept = np.asarray(retention(idle, half_life, params), dtype=np.float64)
    uses = use_factor(columns.use_count, params.beta, np)
    score = uses * kept * columns.strength
    working_days = np.full(len(columns), settings.half_life_days("working"), dtype=np.float64)
    working = _trust_weighted(working_days, columns.source, settings, trust)
    promotion_score = (
        uses
        * np.asarray(retention(idle, working, params), dtype=np.float64)
        * columns.strength
    )
    idle_days = idle / SECONDS_PER_DAY
    access = np.maximum(columns.use_count - 1.0, 0.0)
    ei = np.asarray(
        effective_importance(columns.importance, access, idle_days, columns.edges),
        dtype=np.float64,
    )
    th = settings.thresholds
    priority = np.asarray(
        review_priority(score, th.danger_zone_min, th.danger_zone_max), dtype=np.float64
    )
    return Scores(
        score=score,
        use_factor=uses,
        retention=kept,
        half_life_days=half_life / SECONDS_PER_DAY,
        age_days=np.maximum(now_epoch - created, 0.0) / SECONDS_PER_DAY,
        idle_days=idle_days,
        effective_importance=ei,
        review_priority=priority,
        promotion_score=promotion_score,
    )
