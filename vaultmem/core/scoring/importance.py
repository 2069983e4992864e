"""Importance level, effective importance (EI) and review priority (Mnemon, Mnemex).

The formulas are those of docs/user-guide.md, "Scores".

Like :mod:`vaultmem.core.scoring.decay`, every function serves one memory and a column of n
memories: floats in, ``float`` (or ``int``) out; ``np.ndarray`` columns in (broadcast against
scalars), ``np.ndarray`` of the broadcast shape, usually ``(n,)``, out. Bad inputs (NaN, negative
counts, levels outside 1..5) raise ``ValueError``.
"""

from __future__ import annotations

import math
from typing import overload

import numpy as np

from vaultmem.core.scoring.score_formulas import review_curve
from vaultmem.core.scoring.vectorised import (
    ArrayIn,
    FloatArray,
    IntArray,
    all_scalar,
    as_floats,
    scalar_or_array,
)

LEVELS = (1, 2, 3, 4, 5)
"""Mnemon's importance scale."""

BASE_WEIGHTS: dict[int, float] = {5: 1.0, 4: 0.8, 3: 0.5, 2: 0.3, 1: 0.15}
"""EI base weight per importance level (Mnemon; docs/user-guide.md, "Scores")."""

_BASE_WEIGHT_TABLE = np.array([math.nan] + [BASE_WEIGHTS[lvl] for lvl in LEVELS])

EI_HALF_LIFE_DAYS = 30.0
"""EI's recency factor halves every 30 days without use (Mnemon)."""

EI_EDGE_CAP = 5
"""Edges beyond 5 add nothing: the edge factor tops out at 1.5 (Mnemon)."""

DANGER_ZONE = (0.15, 0.35)
"""Default danger zone of the decay score for review (Mnemex; docs/user-guide.md, "Scores")."""


def _levels(level: float | ArrayIn) -> IntArray:
    """Validated levels as int64: each must be an integer in 1..5."""
    values = as_floats("level", level)
    if ((values < 1) | (values > 5) | (values != np.round(values))).any():
        raise ValueError("importance level must be an integer from 1 to 5")
    return values.astype(np.int64)


@overload
def importance_level(importance: float) -> int: ...
@overload
def importance_level(importance: ArrayIn) -> IntArray: ...
def importance_level(importance: float | ArrayIn) -> int | IntArray:
    """Mnemon level 1..5 of an importance in [0, 1] -> ``int | ndarray[int64]`` (n,).

    docs/user-guide.md, "The memory note": level = 1 + round(4 × importance), rounding halves up
    (0.125 -> 2, 0.375 -> 3, 0.625 -> 4, 0.875 -> 5; not Python's round-half-to-even), clipped to
    1..5 so out-of-range importances still get a level. Raises ``ValueError`` for NaN.
    """
    values = as_floats("importance", importance)
    levels: IntArray = np.clip(1 + np.floor(4.0 * values + 0.5), 1, 5).astype(np.int64)
    if all_scalar(importance):
        return int(levels)
    return levels


@overload
def importance_from_level(level: float) -> float: ...
@overload
def importance_from_level(level: ArrayIn) -> FloatArray: ...
def importance_from_level(level: float | ArrayIn) -> float | FloatArray:
    """Importance in [0, 1] of a Mnemon level -> ``float | ndarray[float64]`` (n,).

    The inverse of :func:`importance_level`: (level − 1) / 4, so 1 -> 0.0, 3 -> 0.5, 5 -> 1.0.
    Raises ``ValueError`` unless every level is an integer from 1 to 5.
    """
    return scalar_or_array((_levels(level) - 1) / 4.0, level)


@overload
def base_weight(level: float) -> float: ...
@overload
def base_weight(level: ArrayIn) -> FloatArray: ...
def base_weight(level: float | ArrayIn) -> float | FloatArray:
    """EI base weight of a level -> ``float | ndarray[float64]`` (n,).

    Mnemon: 1.0, 0.8, 0.5, 0.3, 0.15 for levels 5..1. Raises ``ValueError`` unless every
    level is an integer from 1 to 5.
    """
    return scalar_or_array(_BASE_WEIGHT_TABLE[_levels(level)], level)


@overload
def effective_importance(
    importance: float, access_count: float, days_since_last_used: float, edges: float
) -> float: ...
@overload
def effective_importance(
    importance: ArrayIn,
    access_count: float | ArrayIn,
    days_since_last_used: float | ArrayIn,
    edges: float | ArrayIn,
) -> FloatArray: ...
@overload
def effective_importance(
    importance: float | ArrayIn,
    access_count: float | ArrayIn,
    days_since_last_used: float | ArrayIn,
    edges: float | ArrayIn,
) -> float | FloatArray: ...
def effective_importance(
    importance: float | ArrayIn,
    access_count: float | ArrayIn,
    days_since_last_used: float | ArrayIn,
    edges: float | ArrayIn,
) -> float | FloatArray:
    """Mnemon's effective importance -> ``float | ndarray[float64]`` (n,); orders auto-pruning.

    Mnemon (docs/user-guide.md, "Scores")::

        EI = base_weight(level) · max(1, ln(1 + access_count))
             · 0.5^(days_since_last_used / 30) · (1 + 0.1 · min(edges, 5))

    ``importance`` in [0, 1] (mapped with :func:`importance_level`); ``access_count`` =
    ``use_count − 1`` (≥ 0); ``days_since_last_used`` in days (floored at 0); ``edges`` =
    distinct notes linked to or from this one (≥ 0). Raises ``ValueError`` for NaN or a
    negative count.
    """
    accesses = as_floats("access_count", access_count)
    links = as_floats("edges", edges)
    if (accesses < 0).any():
        raise ValueError("access_count must be >= 0 (it is use_count - 1)")
    if (links < 0).any():
        raise ValueError("edges must be >= 0")
    days = np.maximum(as_floats("days_since_last_used", days_since_last_used), 0.0)
    weight = _BASE_WEIGHT_TABLE[importance_level(np.asarray(importance, dtype=np.float64))]
    with np.errstate(under="ignore"):
        ei = (
            weight
            * np.maximum(1.0, np.log1p(accesses))
            * np.power(0.5, days / EI_HALF_LIFE_DAYS)
            * (1.0 + 0.1 * np.minimum(links, EI_EDGE_CAP))
        )
    return scalar_or_array(ei, importance, access_count, days_since_last_used, edges)


@overload
def review_priority(
    score: float, zone_min: float = DANGER_ZONE[0], zone_max: float = DANGER_ZONE[1]
) -> float: ...
@overload
def review_priority(
    score: ArrayIn, zone_min: float = DANGER_ZONE[0], zone_max: float = DANGER_ZONE[1]
) -> FloatArray: ...
def review_priority(
    score: float | ArrayIn, zone_min: float = DANGER_ZONE[0], zone_max: float = DANGER_ZONE[1]
) -> float | FloatArray:
    """Review urgency in [0, 1] of a decay score -> ``float | ndarray[float64]`` (n,).

    Mnemex (docs/user-guide.md, "Scores"): inside the danger zone [zone_min, zone_max], with x =
    (score − zone_min) / (zone_max − zone_min), priority = 1 − 4·(x − 0.5)²: 1.0 at the middle (0.25
    by default), 0.75 at x = 0.25, 0 at the edges; 0 outside the zone. Raises ``ValueError`` for NaN
    or a zone with zone_min ≥ zone_max.
    """
    if not (math.isfinite(zone_min) and math.isfinite(zone_max) and zone_min < zone_max):
        raise ValueError(
            f"danger zone must satisfy zone_min < zone_max, not [{zone_min}, {zone_max}]"
        )
    priority = review_curve(as_floats("score", score), zone_min, zone_max, np)
    return scalar_or_array(priority, score)
