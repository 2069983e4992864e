"""Decay models and the decay score (Mnemex, engram; docs/user-guide.md, "Scores").

Every function serves one memory and a column of n memories with the same definition: pass
floats and get a ``float`` back, pass ``np.ndarray`` columns (broadcast against each other and
against scalars) and get an ``np.ndarray[float64]`` of the broadcast shape, usually ``(n,)``.
A result is a ``float`` only when no input was an array or a list.

Times are in seconds. Δt (``age_seconds`` = now − last_used) is floored at 0, so a clock that
runs a little behind never raises a score above its fresh value. A half-life of ``inf``
(semantic and procedural layers) means no decay: retention is exactly 1.0, whatever the age.

Bad inputs (NaN anywhere, a half-life ≤ 0, a negative use count or strength, a trust outside
[0, 1]) raise ``ValueError``; the note parser replaces such values with defaults before they
reach this module (docs/user-guide.md, "The memory note"), so a ``ValueError`` here is a
programming error.
"""

from __future__ import annotations

import math
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from vaultmem.core.scoring.score_formulas import (  # re-exported: defined without numpy
    DECAY_MODELS,
    DEFAULT_SOURCE_TRUST,
    L2_RATE,
    SECONDS_PER_DAY,
    SOURCE_TRUST,
    TWO_COMPONENT_REFERENCE_HALF_LIFE_SECONDS,
    DecayParams,
    half_lives,
    retention_curve,
    trust_weighted,
    use_factor,
)
from vaultmem.core.scoring.vectorised import (
    ArrayIn,
    FloatArray,
    as_floats,
    per_distinct,
    scalar_or_array,
)

SourceColumn = list[str] | list[str | None] | tuple[str | None, ...] | npt.NDArray[Any]
"""A column of ``source`` values (a bare ``str`` is one source, not a column)."""


def _check_half_life(half_life: FloatArray) -> None:
    if not (half_life > 0).all():
        raise ValueError("half_life_seconds must be greater than 0 (inf for no decay)")


@overload
def source_trust(source: str | None) -> float: ...
@overload
def source_trust(source: SourceColumn) -> FloatArray: ...
def source_trust(source: str | None | SourceColumn) -> float | FloatArray:
    """Trust in [0, 1] of a ``source`` (or an array of n sources) -> ``float | ndarray`` (n,).

    engram (raya-ac) / :data:`SOURCE_TRUST`; case and surrounding spaces are ignored. A missing
    (None) or unknown source gets :data:`DEFAULT_SOURCE_TRUST` (1.0, the trust of the default
    ``human``). Arrays are mapped through their distinct values, not per memory.
    """
    if source is None or isinstance(source, str):
        key = "" if source is None else source.strip().lower()
        return SOURCE_TRUST.get(key, DEFAULT_SOURCE_TRUST)
    return per_distinct(
        np.asarray(source, dtype=object),
        lambda name: SOURCE_TRUST.get(name.strip().lower(), DEFAULT_SOURCE_TRUST),
    )


@overload
def trust_weighted_half_life(
    half_life_seconds: float, trust: float, kappa: float = 2.0
) -> float: ...
@overload
def trust_weighted_half_life(
    half_life_seconds: ArrayIn, trust: float | ArrayIn, kappa: float = 2.0
) -> FloatArray: ...
@overload
def trust_weighted_half_life(
    half_life_seconds: float | ArrayIn, trust: float | ArrayIn, kappa: float = 2.0
) -> float | FloatArray: ...
def trust_weighted_half_life(
    half_life_seconds: float | ArrayIn, trust: float | ArrayIn, kappa: float = 2.0
) -> float | FloatArray:
    """H_eff = H / (1 + κ·(1 − trust)) -> ``float | ndarray[float64]`` (n,), seconds.

    engram's trust-weighted decay (docs/user-guide.md, "Scores"): human (1.0) keeps H, agent (0.7)
    gets H / 1.6, trust 0 decays 3× faster. ``inf`` stays ``inf``. Raises ``ValueError`` if H ≤ 0 or
    NaN, trust outside [0, 1], or κ < 0.
    """
    h = as_floats("half_life_seconds", half_life_seconds)
    t = as_floats("trust", trust)
    _check_half_life(h)
    if ((t < 0) | (t > 1)).any():
        raise ValueError("trust must be in [0, 1]")
    if not (math.isfinite(kappa) and kappa >= 0):
        raise ValueError(f"trust kappa must be a finite number >= 0, not {kappa!r}")
    return scalar_or_array(trust_weighted(h, t, kappa), half_life_seconds, trust)


def _retention(age: FloatArray, half_life: FloatArray, params: DecayParams) -> FloatArray:
    """Retention over validated float64 arrays (age already floored at 0); the formulas are
    :func:`~vaultmem.core.scoring.score_formulas.retention_curve`, shared with one-memory
    scoring."""
    with np.errstate(over="ignore", under="ignore"):
        f = retention_curve(half_lives(age, half_life, np), params, np)
    return np.asarray(f, dtype=np.float64)


@overload
def retention(age_seconds: float, half_life_seconds: float, params: DecayParams = ...) -> float: ...
@overload
def retention(
    age_seconds: ArrayIn, half_life_seconds: float | ArrayIn, params: DecayParams = ...
) -> FloatArray: ...
@overload
def retention(
    age_seconds: float | ArrayIn, half_life_seconds: float | ArrayIn, params: DecayParams = ...
) -> float | FloatArray: ...
def retention(
    age_seconds: float | ArrayIn,
    half_life_seconds: float | ArrayIn,
    params: DecayParams = DecayParams(),  # noqa: B008 - frozen, immutable default
) -> float | FloatArray:
    """f(Δt) in [0, 1] of ``params.model`` -> ``float | ndarray[float64]`` (n,).

    ``age_seconds`` is Δt = now − last_used in seconds (floored at 0); ``half_life_seconds`` is
    the effective H (after :func:`trust_weighted_half_life`); H = ``inf`` gives 1.0. With
    t = Δt / H (docs/user-guide.md, "Scores"):

    - ``power_law`` (Mnemex): (1 + Δt/t0)^(−α), t0 = H / (2^(1/α) − 1); f(H) = 0.5.
    - ``exponential`` (Mnemex): e^(−ln2·t); f(H) = 0.5.
    - ``two_component`` (Mnemex): w·e^(−λf'·Δt) + (1 − w)·e^(−λs'·Δt) with
      λ' = λ · (3 days / H): Mnemex's λ were set for its 3-day half-life, so at H = 3 days
      Mnemex's numbers come out unchanged, and a 30-day layer decays 10× slower. H is a time
      scale here, not the point where f = 0.5.
    - ``l2`` (engram, raya-ac): e^(−0.693·t).
    - ``huber`` (engram): l2 while t ≤ δ, then the tangent of l2 at δ, floored at 0
      (reaches 0 at t = δ + 1/0.693).
    - ``elastic`` (engram): r·max(0, 1 − t/2) + (1 − r)·l2.

    Every model is non-increasing in Δt. Raises ``ValueError`` for NaN, or H ≤ 0.
    """
    age = np.maximum(as_floats("age_seconds", age_seconds), 0.0)
    half_life = as_floats("half_life_seconds", half_life_seconds)
    _check_half_life(half_life)
    return scalar_or_array(_retention(age, half_life, params), age_seconds, half_life_seconds)


@overload
def decay_score(
    use_count: float,
    age_seconds: float,
    strength: float,
    half_life_seconds: float,
    params: DecayParams = ...,
) -> float: ...
@overload
def decay_score(
    use_count: ArrayIn,
    age_seconds: float | ArrayIn,
    strength: float | ArrayIn,
    half_life_seconds: float | ArrayIn,
    params: DecayParams = ...,
) -> FloatArray: ...
@overload
def decay_score(
    use_count: float | ArrayIn,
    age_seconds: float | ArrayIn,
    strength: float | ArrayIn,
    half_life_seconds: float | ArrayIn,
    params: DecayParams = ...,
) -> float | FloatArray: ...
def decay_score(
    use_count: float | ArrayIn,
    age_seconds: float | ArrayIn,
    strength: float | ArrayIn,
    half_life_seconds: float | ArrayIn,
    params: DecayParams = DecayParams(),  # noqa: B008 - frozen, immutable default
) -> float | FloatArray:
    """score = use_count^β · f(Δt) · strength -> ``float | ndarray[float64]`` (n,).

    After Mnemex, docs/user-guide.md "Scores" (Mnemex's (use_count + 1)^β with a zero-based count is
    the same number: vaultmem's ``use_count`` counts the creation). ``age_seconds`` = now −
    last_used in seconds, floored at 0; ``half_life_seconds`` is the effective H (``inf`` = no
    decay); f is :func:`retention` of ``params.model``. Compare with the thresholds: forget below
    0.05, promote at or above 0.65. Raises ``ValueError`` for NaN, a negative use count or strength,
    or H ≤ 0.
    """
    uses = as_floats("use_count", use_count)
    power = as_floats("strength", strength)
    if (uses < 0).any():
        raise ValueError("use_count must be >= 0")
    if (power < 0).any():
        raise ValueError("strength must be >= 0")
    age = np.maximum(as_floats("age_seconds", age_seconds), 0.0)
    half_life = as_floats("half_life_seconds", half_life_seconds)
    _check_half_life(half_life)
    score = use_factor(uses, params.beta, np) * _retention(age, half_life, params) * power
    return scalar_or_array(score, use_count, age_seconds, strength, half_life_seconds)


__all__ = [
    "DECAY_MODELS",
    "DEFAULT_SOURCE_TRUST",
    "L2_RATE",
    "SECONDS_PER_DAY",
    "SOURCE_TRUST",
    "TWO_COMPONENT_REFERENCE_HALF_LIFE_SECONDS",
    "DecayParams",
    "decay_score",
    "retention",
    "source_trust",
    "trust_weighted_half_life",
]
