"""Importance level, effective importance (spec 3.2, seed 000), review priority (3.3, seed 001)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem.core.scoring.importance import (
    base_weight,
    effective_importance,
    importance_from_level,
    importance_level,
    review_priority,
)

# --- levels ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("importance", "level"),
    [
        (0.0, 1),
        (0.1, 1),  # 4 × 0.1 = 0.4 -> 0
        (0.125, 2),  # 0.5 rounds up (round-half-even would give level 1)
        (0.25, 2),
        (0.5, 3),  # the default importance is Mnemon's middle level
        (0.625, 4),  # 2.5 rounds up (round-half-even would give level 3)
        (0.7, 4),  # 2.8 -> 3
        (0.875, 5),
        (1.0, 5),
        (-0.3, 1),  # clipped
        (1.4, 5),  # clipped
    ],
)
def test_importance_level(importance: float, level: int) -> None:
    result = importance_level(importance)
    assert result == level
    assert type(result) is int


def test_importance_level_of_a_column() -> None:
    levels = importance_level(np.array([0.0, 0.125, 0.5, 0.625, 1.0]))
    np.testing.assert_array_equal(levels, [1, 2, 3, 4, 5])
    assert levels.dtype == np.int64


@pytest.mark.parametrize(("level", "importance"), [(1, 0.0), (2, 0.25), (3, 0.5), (5, 1.0)])
def test_importance_from_level(level: int, importance: float) -> None:
    assert importance_from_level(level) == importance
    assert importance_level(importance_from_level(level)) == level


@pytest.mark.parametrize("level", [0, 6, 2.5, math.nan])
def test_levels_outside_one_to_five_are_refused(level: float) -> None:
    with pytest.raises(ValueError):
        importance_from_level(level)
    with pytest.raises(ValueError):
        base_weight(level)


def test_base_weights_per_level() -> None:
    assert [base_weight(level) for level in (5, 4, 3, 2, 1)] == [1.0, 0.8, 0.5, 0.3, 0.15]
    np.testing.assert_array_equal(base_weight(np.array([1, 5, 3])), [0.15, 1.0, 0.5])


# --- effective importance --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("importance", "weight"), [(1.0, 1.0), (0.75, 0.8), (0.5, 0.5), (0.25, 0.3), (0.0, 0.15)]
)
def test_ei_starts_from_the_base_weight(importance: float, weight: float) -> None:
    assert effective_importance(importance, 0, 0.0, 0) == pytest.approx(weight)


@pytest.mark.parametrize(
    ("access_count", "factor"),
    [(0, 1.0), (1, 1.0), (2, math.log(3)), (10, math.log(11))],  # max(1, ln(1 + n))
)
def test_ei_access_factor(access_count: int, factor: float) -> None:
    assert effective_importance(1.0, access_count, 0.0, 0) == pytest.approx(factor)


@pytest.mark.parametrize(("days", "factor"), [(0, 1.0), (15, 2**-0.5), (30, 0.5), (60, 0.25)])
def test_ei_halves_every_thirty_days(days: float, factor: float) -> None:
    assert effective_importance(1.0, 0, days, 0) == pytest.approx(factor)


@pytest.mark.parametrize(("edges", "factor"), [(0, 1.0), (3, 1.3), (5, 1.5), (12, 1.5)])
def test_ei_edge_factor_is_capped_at_one_and_a_half(edges: int, factor: float) -> None:
    assert effective_importance(1.0, 0, 0.0, edges) == pytest.approx(factor)


def test_ei_multiplies_the_four_factors() -> None:
    # level 5 (1.0) · ln 3 · 0.5 · 1.3 = 0.71410
    assert effective_importance(1.0, 2, 30.0, 3) == pytest.approx(0.714098, abs=1e-6)
    # level 4 (0.8) · ln 11 · 0.25 · 1.5 = 0.71937
    assert effective_importance(0.75, 10, 60.0, 9) == pytest.approx(0.719369, abs=1e-6)


def test_ei_of_a_column() -> None:
    ei = effective_importance(
        np.array([1.0, 0.75, 0.0]), np.array([2, 10, 0]), np.array([30.0, 60.0, 0.0]), 3
    )
    assert ei.dtype == np.float64
    np.testing.assert_allclose(
        ei, [0.714098, 0.8 * math.log(11) * 0.25 * 1.3, 0.15 * 1.3], atol=1e-6
    )


def test_ei_treats_negative_days_as_zero() -> None:
    assert effective_importance(0.5, 0, -3.0, 0) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("access_count", "days", "edges"), [(-1, 0.0, 0), (0, math.nan, 0), (0, 0.0, -2)]
)
def test_ei_refuses_bad_inputs(access_count: int, days: float, edges: int) -> None:
    with pytest.raises(ValueError):
        effective_importance(0.5, access_count, days, edges)


counts = st.integers(min_value=0, max_value=10_000)
day_values = st.floats(min_value=0.0, max_value=5_000.0)
unit = st.floats(min_value=0.0, max_value=1.0)


@given(importance=unit, access=counts, days_a=day_values, days_b=day_values, edges=counts)
def test_ei_falls_with_time_and_never_goes_negative(
    importance: float, access: int, days_a: float, days_b: float, edges: int
) -> None:
    sooner, later = sorted((days_a, days_b))
    ei_sooner = effective_importance(importance, access, sooner, edges)
    ei_later = effective_importance(importance, access, later, edges)
    assert 0.0 <= ei_later <= ei_sooner


@given(importance=unit, a=counts, b=counts, days=day_values, edges=counts)
def test_ei_grows_with_accesses(importance: float, a: int, b: int, days: float, edges: int) -> None:
    fewer, more = sorted((a, b))
    assert effective_importance(importance, fewer, days, edges) <= effective_importance(
        importance, more, days, edges
    )


@settings(max_examples=50)
@given(rows=st.lists(st.tuples(unit, counts, day_values, counts), min_size=1, max_size=40))
def test_ei_column_equals_the_memories_one_by_one(
    rows: list[tuple[float, int, float, int]],
) -> None:
    importance, access, days, edges = (
        np.array(col, dtype=float) for col in zip(*rows, strict=True)
    )
    column = effective_importance(importance, access, days, edges)
    one_by_one = [effective_importance(i, a, d, e) for i, a, d, e in rows]
    assert column.shape == (len(rows),)
    np.testing.assert_allclose(column, one_by_one, rtol=1e-12, atol=1e-300)


# --- review priority -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "priority"),
    [
        (0.25, 1.0),  # the middle of [0.15, 0.35]
        (0.20, 0.75),  # x = 0.25: 1 − 4·0.0625
        (0.30, 0.75),  # x = 0.75
        (0.15, 0.0),  # the edges
        (0.35, 0.0),
        (0.10, 0.0),  # outside
        (0.90, 0.0),
        (0.0, 0.0),
    ],
)
def test_review_priority(score: float, priority: float) -> None:
    assert review_priority(score) == pytest.approx(priority, abs=1e-12)


def test_review_priority_with_another_zone() -> None:
    assert review_priority(0.5, zone_min=0.4, zone_max=0.6) == pytest.approx(1.0)
    assert review_priority(0.45, zone_min=0.4, zone_max=0.6) == pytest.approx(0.75)
    assert review_priority(0.25, zone_min=0.4, zone_max=0.6) == 0.0


def test_review_priority_of_a_column() -> None:
    result = review_priority(np.array([0.1, 0.2, 0.25, 0.3, 0.4]))
    np.testing.assert_allclose(result, [0.0, 0.75, 1.0, 0.75, 0.0], atol=1e-12)


@pytest.mark.parametrize(("low", "high"), [(0.35, 0.15), (0.2, 0.2), (math.nan, 0.3)])
def test_review_priority_refuses_an_empty_zone(low: float, high: float) -> None:
    with pytest.raises(ValueError, match="zone"):
        review_priority(0.25, zone_min=low, zone_max=high)


@given(score=st.floats(min_value=-1.0, max_value=10.0))
def test_review_priority_is_in_unit_interval_and_symmetric(score: float) -> None:
    priority = review_priority(score)
    assert 0.0 <= priority <= 1.0
    assert priority == pytest.approx(review_priority(0.5 - score), abs=1e-9)  # mirror about 0.25
    assert (priority > 0) == (0.15 < score < 0.35)
