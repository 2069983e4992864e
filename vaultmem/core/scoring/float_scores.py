"""Scores of a few index rows in Python floats: recall's candidates, scored without numpy.

The expressions are :mod:`vaultmem.core.scoring.score_formulas`'s, with ``xp`` =
:data:`~vaultmem.core.scoring.score_formulas.FLOATS`, so a candidate scores exactly what ``list``
and the passes give it (docs/user-guide.md, "Scores"). Settings come in whole
(:class:`~vaultmem.core.settings.Settings`, which itself builds on ``score_formulas``): this
module sits above both.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from vaultmem.core.scoring.score_formulas import (
    COLUMN_ORDER,
    FLOATS,
    SECONDS_PER_DAY,
    half_lives,
    retention_curve,
    review_curve,
    source_trust_of,
    trust_weighted,
    use_factor,
)
from vaultmem.core.settings import Settings

__all__ = ["row_scores"]

_LAYER, _SOURCE, _CREATED, _LAST_USED, _USE_COUNT, _STRENGTH = (
    COLUMN_ORDER.index(name)
    for name in ("layer", "source", "created", "last_used", "use_count", "strength")
)
"""Where each column :func:`row_scores` reads sits in a row (``COLUMN_ORDER``)."""


def row_scores(
    rows: Sequence[Sequence[Any]], now_epoch: float, settings: Settings
) -> list[tuple[float, float]]:
    """(decay score, review priority) of each index row (``COLUMN_ORDER``), in Python floats.

    The expressions of :func:`vaultmem.core.scoring.scoring.score_columns` for a few rows (recall's
    candidates): the same formulas with ``xp`` = :data:`FLOATS`. ``None`` counts as NaN as in
    :meth:`~vaultmem.core.scoring.scoring.MemoryColumns.from_rows`; raises ``ValueError`` where
    ``score_columns`` does (a NaN score, a half-life ≤ 0).
    """
    params, th = settings.decay, settings.thresholds
    if not (
        math.isfinite(th.danger_zone_min)
        and math.isfinite(th.danger_zone_max)
        and th.danger_zone_min < th.danger_zone_max
    ):
        raise ValueError(
            f"danger zone must satisfy zone_min < zone_max, not "
            f"[{th.danger_zone_min}, {th.danger_zone_max}]"
        )
    out: list[tuple[float, float]] = []
    for row in rows:
        layer, source = row[_LAYER], row[_SOURCE]
        base = settings.half_life_days(str(layer)) * SECONDS_PER_DAY
        trust = source_trust_of(source)
        half_life = float(trust_weighted(base, trust, params.trust_kappa))
        if math.isnan(half_life) or half_life <= 0:
            raise ValueError("half_life_seconds must be greater than 0 (inf for no decay)")
        last_used, created = _number(row[_LAST_USED]), _number(row[_CREATED])
        if math.isnan(last_used):
            last_used = created
        if math.isnan(last_used):
            last_used = now_epoch
        idle = FLOATS.maximum(now_epoch - last_used, 0.0)
        kept = retention_curve(half_lives(idle, half_life, FLOATS), params, FLOATS)
        score = (
            use_factor(_number(row[_USE_COUNT]), params.beta, FLOATS)
            * kept
            * _number(row[_STRENGTH])
        )
        if math.isnan(score):
            raise ValueError("score must be a number, not NaN")
        out.append((score, review_curve(score, th.danger_zone_min, th.danger_zone_max, FLOATS)))
    return out


def _number(value: object) -> float:
    return math.nan if value is None else float(value)  # type: ignore[arg-type]
