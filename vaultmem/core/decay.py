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
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from vaultmem.core.vectorised import (
    ArrayIn,
    FloatArray,
    as_floats,
    scalar_or_array,
)

SourceColumn = list[str] | list[str | None] | tuple[str | None, ...] | npt.NDArray[Any]
"""A column of ``source`` values (a bare ``str`` is one source, not a column)."""

SECONDS_PER_DAY = 86_400.0

DECAY_MODELS = ("power_law", "exponential", "two_component", "l2", "huber", "elastic")
"""Allowed values of ``[decay] model`` (docs/user-guide.md, "Scores")."""

SOURCE_TRUST: dict[str, float] = {
    "human": 1.0,
    "agent": 0.7,
    "conversation": 0.6,
    "import": 0.5,
    "consolidation": 0.4,
}
"""Trust of a memory's ``source`` (engram, raya-ac: human 1.0, AI 0.7, conversation 0.6, ingest
0.5, consolidation 0.4; vaultmem names AI ``agent`` and ingest ``import``, docs/user-guide.md,
"The memory note")."""

DEFAULT_SOURCE_TRUST = 1.0
"""Trust of a missing or unknown ``source``: that of the default source ``human``
(docs/user-guide.md, "The memory note": a value that cannot be used is replaced by the field's
default for scoring)."""

L2_RATE = 0.693
"""Rate of engram's l2 retention, e^(−0.693·t), as engram writes it (not exactly ln 2)."""

TWO_COMPONENT_REFERENCE_HALF_LIFE_SECONDS = 3 * SECONDS_PER_DAY
"""The half-life Mnemex's λ_fast / λ_slow were chosen for (Mnemex's default, 3 days)."""


_PARAM_RANGES = (  # name, low, high, low excluded
    ("beta", 0.0, math.inf, False),
    ("alpha", 0.0, math.inf, True),
    ("two_component_weight", 0.0, 1.0, False),
    ("lambda_fast", 0.0, math.inf, True),
    ("lambda_slow", 0.0, math.inf, True),
    ("huber_delta", 0.0, math.inf, False),
    ("elastic_ratio", 0.0, 1.0, False),
    ("trust_kappa", 0.0, math.inf, False),
)


@dataclass(frozen=True, slots=True)
class DecayParams:
    """Parameters of the decay models (Mnemex: β, α, w, λ; engram: δ, r, κ; user guide "Scores").

    It is also the ``[decay]`` table of ``vaultmem.toml`` (``Settings.decay``). ``two_component``
    scales both λ by :data:`TWO_COMPONENT_REFERENCE_HALF_LIFE_SECONDS` / H (see :func:`retention`).
    Raises ``ValueError`` for an unknown ``model`` (naming the allowed ones) or a parameter
    outside its range.
    """

    model: str = "power_law"
    beta: float = 0.6
    alpha: float = 1.1
    two_component_weight: float = 0.7
    lambda_fast: float = 1.603e-5
    lambda_slow: float = 1.147e-6
    huber_delta: float = 0.5
    elastic_ratio: float = 0.3
    trust_kappa: float = 2.0

    def __post_init__(self) -> None:
        if self.model not in DECAY_MODELS:
            raise ValueError(
                f"unknown decay model {self.model!r}; choose one of: {', '.join(DECAY_MODELS)}"
            )
        for name, low, high, low_open in _PARAM_RANGES:
            value = getattr(self, name)
            if not (
                isinstance(value, int | float)
                and math.isfinite(value)
                and (low < value if low_open else low <= value)
                and value <= high
            ):
                if high < math.inf:
                    wanted = f"in [{low:g}, {high:g}]"
                else:
                    wanted = f"{'>' if low_open else '>='} {low:g}"
                raise ValueError(f"decay {name} must be a finite number {wanted}, not {value!r}")


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
    names = np.asarray(source, dtype=np.str_)
    distinct, inverse = np.unique(names, return_inverse=True)
    table = np.array(
        [SOURCE_TRUST.get(str(n).strip().lower(), DEFAULT_SOURCE_TRUST) for n in distinct],
        dtype=np.float64,
    )
    trust: FloatArray = table[inverse.reshape(names.shape)]
    return trust


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
    return scalar_or_array(h / (1.0 + kappa * (1.0 - t)), half_life_seconds, trust)


def _retention(age: FloatArray, half_life: FloatArray, params: DecayParams) -> FloatArray:
    """Retention over validated float64 arrays (age already floored at 0)."""
    finite = np.isfinite(half_life)
    with np.errstate(over="ignore", under="ignore"):
        # t in half-lives; an infinite half-life means t = 0 whatever the age (no inf/inf).
        t = np.where(finite, age / np.where(finite, half_life, 1.0), 0.0)
        model = params.model
        if model == "power_law":
            # Δt / t0 with t0 = H / (2^(1/α) − 1), so f(H) = 1/2 exactly.
            f = np.power(1.0 + t * (2.0 ** (1.0 / params.alpha) - 1.0), -params.alpha)
        elif model == "exponential":
            f = np.exp(-math.log(2.0) * t)
        elif model == "two_component":
            # λ·Δt with λ scaled by H_ref / H  ==  λ·H_ref·t.
            ref = TWO_COMPONENT_REFERENCE_HALF_LIFE_SECONDS
            w = params.two_component_weight
            f = w * np.exp(-params.lambda_fast * ref * t) + (1.0 - w) * np.exp(
                -params.lambda_slow * ref * t
            )
        elif model == "l2":
            f = np.exp(-L2_RATE * t)
        elif model == "huber":
            delta = params.huber_delta
            at_delta = math.exp(-L2_RATE * delta)
            # The tangent of l2 at δ: l2(δ) + l2'(δ)·(t − δ), l2'(δ) = −0.693·l2(δ).
            line = at_delta * (1.0 - L2_RATE * (t - delta))
            f = np.where(t <= delta, np.exp(-L2_RATE * t), np.maximum(line, 0.0))
        else:  # elastic
            r = params.elastic_ratio
            f = r * np.maximum(0.0, 1.0 - t / 2.0) + (1.0 - r) * np.exp(-L2_RATE * t)
    clipped: FloatArray = np.clip(f, 0.0, 1.0)
    return clipped


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
    score = np.power(uses, params.beta) * _retention(age, half_life, params) * power
    return scalar_or_array(score, use_count, age_seconds, strength, half_life_seconds)
