"""The decay-score formulas written once, for floats and for numpy columns (docs/user-guide.md,
"Scores").

Each formula takes ``xp``, the maths it runs on: :data:`FLOATS` (Python floats, the ``math``
module) or the ``numpy`` module itself (columns of n memories). The same expression then serves
recall (:mod:`vaultmem.core.scoring.float_scores`), which scores a few dozen candidates and must
start without importing numpy, and :mod:`vaultmem.core.scoring.decay` /
:mod:`vaultmem.core.scoring.scoring`, which score 100,000 memories at once. Results agree to
rounding (numpy's vectorised ``exp``/``pow`` may differ from the C library's in the last bit);
``tests/test_decay.py`` compares the two on random memories.

This module imports nothing heavy: :class:`DecayParams` (the ``[decay]`` settings) lives here so
that reading ``vaultmem.toml`` does not load numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

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
    scales both λ by :data:`TWO_COMPONENT_REFERENCE_HALF_LIFE_SECONDS` / H (see
    :func:`vaultmem.core.scoring.decay.retention`). Raises ``ValueError`` for an unknown ``model``
    (naming the allowed ones) or a parameter outside its range.
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


class _Floats:
    """The few numpy functions the formulas use, on Python floats (NaN propagates as in numpy)."""

    exp = staticmethod(math.exp)
    isfinite = staticmethod(math.isfinite)

    @staticmethod
    def power(base: float, exponent: float) -> float:
        return float(base**exponent)

    @staticmethod
    def where(condition: bool, yes: float, no: float) -> float:
        return yes if condition else no

    @staticmethod
    def maximum(a: float, b: float) -> float:
        return math.nan if a != a or b != b else (a if a >= b else b)

    @staticmethod
    def clip(value: float, low: float, high: float) -> float:
        return math.nan if value != value else min(max(value, low), high)


FLOATS: Any = _Floats()
"""``xp`` for one memory: Python floats."""


def retention_curve(t: Any, params: DecayParams, xp: Any) -> Any:
    """f(t) in [0, 1] for t = Δt / H in half-lives (≥ 0) of ``params.model``; see
    :func:`vaultmem.core.scoring.decay.retention` for the models and their sources."""
    model = params.model
    if model == "power_law":
        # Δt / t0 with t0 = H / (2^(1/α) − 1), so f(H) = 1/2 exactly.
        f = xp.power(1.0 + t * (2.0 ** (1.0 / params.alpha) - 1.0), -params.alpha)
    elif model == "exponential":
        f = xp.exp(-math.log(2.0) * t)
    elif model == "two_component":
        # λ·Δt with λ scaled by H_ref / H  ==  λ·H_ref·t.
        ref = TWO_COMPONENT_REFERENCE_HALF_LIFE_SECONDS
        w = params.two_component_weight
        f = w * xp.exp(-params.lambda_fast * ref * t) + (1.0 - w) * xp.exp(
            -params.lambda_slow * ref * t
        )
    elif model == "l2":
        f = xp.exp(-L2_RATE * t)
    elif model == "huber":
        delta = params.huber_delta
        at_delta = math.exp(-L2_RATE * delta)
        # The tangent of l2 at δ: l2(δ) + l2'(δ)·(t − δ), l2'(δ) = −0.693·l2(δ).
        line = at_delta * (1.0 - L2_RATE * (t - delta))
        f = xp.where(t <= delta, xp.exp(-L2_RATE * t), xp.maximum(line, 0.0))
    else:  # elastic
        r = params.elastic_ratio
        f = r * xp.maximum(0.0, 1.0 - t / 2.0) + (1.0 - r) * xp.exp(-L2_RATE * t)
    return xp.clip(f, 0.0, 1.0)


def half_lives(age: Any, half_life: Any, xp: Any) -> Any:
    """t = Δt / H; an infinite half-life means t = 0 whatever the age (no inf/inf)."""
    finite = xp.isfinite(half_life)
    return xp.where(finite, age / xp.where(finite, half_life, 1.0), 0.0)


def trust_weighted(half_life: Any, trust: Any, kappa: float) -> Any:
    """H_eff = H / (1 + κ·(1 − trust)) (engram; floats or numpy columns alike)."""
    return half_life / (1.0 + kappa * (1.0 - trust))


def use_factor(use_count: Any, beta: float, xp: Any) -> Any:
    """use_count^β (Mnemex), a negative count counting as 0."""
    return xp.power(xp.maximum(use_count, 0.0), beta)


def review_curve(score: Any, zone_min: float, zone_max: float, xp: Any) -> Any:
    """Mnemex's review priority: 1 − 4·(x − 0.5)² inside the danger zone, 0 outside; see
    :func:`vaultmem.core.scoring.importance.review_priority`."""
    x = (score - zone_min) / (zone_max - zone_min)
    inside = (score >= zone_min) & (score <= zone_max)
    return xp.where(inside, xp.clip(1.0 - 4.0 * (x - 0.5) ** 2, 0.0, 1.0), 0.0)


def source_trust_of(source: object) -> float:
    """Trust of one ``source`` value (case and surrounding spaces ignored; unknown → 1.0)."""
    return SOURCE_TRUST.get(str(source).strip().lower(), DEFAULT_SOURCE_TRUST)


COLUMN_ORDER = (
    "path",
    "id",
    "type",
    "status",
    "layer",
    "category",
    "source",
    "created",
    "last_used",
    "use_count",
    "strength",
    "importance",
    "confidence",
    "pinned",
    "resolved_at",
    "use_days",
    "edges",
)
"""The columns of a memory row as the index hands them over (``IndexDB.memory_rows``)."""
