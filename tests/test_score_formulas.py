"""Recall scores its candidates in Python floats (``float_scores.row_scores``), ``list`` and
the passes score columns with numpy (``scoring.score_columns``): one formula source, and the
two agree on random memories of every decay model, layer, source and danger zone."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from vaultmem.core.scoring.decay import DECAY_MODELS, DecayParams
from vaultmem.core.scoring.float_scores import row_scores
from vaultmem.core.scoring.score_formulas import COLUMN_ORDER, FLOATS, retention_curve
from vaultmem.core.scoring.scoring import MemoryColumns, score_columns
from vaultmem.core.settings import Settings, ThresholdSettings

NOW = 1_790_000_000.0
LAYERS = ("working", "episodic", "semantic", "procedural", "unknown-layer", None)
SOURCES = ("human", "agent", " Conversation ", "IMPORT", "consolidation", "robot", "", None)


def _random_rows(rng: np.random.Generator, n: int) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    for i in range(n):
        created = NOW - float(rng.uniform(-2, 3 * 365)) * 86_400  # a few in the future
        last_used = created + float(rng.uniform(0, 400)) * 86_400
        values = {
            "path": f"STM/m{i}.md", "id": f"id{i}", "type": "memory", "status": "active",
            "layer": LAYERS[int(rng.integers(len(LAYERS)))], "category": "fact",
            "source": SOURCES[int(rng.integers(len(SOURCES)))],
            "created": None if rng.random() < 0.1 else created,
            "last_used": None if rng.random() < 0.2 else last_used,
            "use_count": int(rng.integers(0, 60)) if rng.random() < 0.9 else 0,
            "strength": float(rng.choice([0.0, 1.0, float(rng.uniform(0, 2))])),
            "importance": float(rng.uniform(0, 1)), "confidence": 1.0, "pinned": False,
            "resolved_at": None, "use_days": 1, "edges": int(rng.integers(0, 8)),
        }
        rows.append(tuple(values[name] for name in COLUMN_ORDER))
    return rows


def _random_params(rng: np.random.Generator, model: str) -> DecayParams:
    return DecayParams(
        model=model, beta=float(rng.uniform(0, 1.5)), alpha=float(rng.uniform(0.2, 3)),
        two_component_weight=float(rng.uniform(0, 1)),
        lambda_fast=float(rng.uniform(1e-6, 5e-5)), lambda_slow=float(rng.uniform(1e-7, 5e-6)),
        huber_delta=float(rng.uniform(0, 3)), elastic_ratio=float(rng.uniform(0, 1)),
        trust_kappa=float(rng.uniform(0, 4)),
    )


@pytest.mark.parametrize("model", DECAY_MODELS)
def test_row_scores_equal_score_columns_on_random_memories(model: str) -> None:
    rng = np.random.default_rng(DECAY_MODELS.index(model))
    for _ in range(20):
        low = float(rng.uniform(0, 0.5))
        settings = replace(
            Settings(), decay=_random_params(rng, model),
            thresholds=ThresholdSettings(danger_zone_min=low,
                                         danger_zone_max=low + float(rng.uniform(0.01, 0.8))),
        )
        rows = _random_rows(rng, 250)
        scores = score_columns(MemoryColumns.from_rows(rows), NOW, settings)
        floats = row_scores(rows, NOW, settings)
        assert all(isinstance(s, float) and isinstance(p, float) for s, p in floats)
        np.testing.assert_allclose([s for s, _ in floats], scores.score, rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose([p for _, p in floats], scores.review_priority,
                                   rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("model", DECAY_MODELS)
def test_the_retention_curve_is_the_same_on_floats_and_columns(model: str) -> None:
    params = _random_params(np.random.default_rng(7), model)
    t = np.concatenate([np.linspace(0, 12, 4001), [0.5, 1.0, params.huber_delta, math.inf]])
    with np.errstate(over="ignore", under="ignore"):
        column = retention_curve(t, params, np)
    one_by_one = [retention_curve(float(x), params, FLOATS) for x in t]
    np.testing.assert_allclose(one_by_one, column, rtol=1e-12, atol=1e-300)
    assert all(0.0 <= f <= 1.0 for f in one_by_one)


def test_row_scores_refuse_what_score_columns_refuses() -> None:
    rows = _random_rows(np.random.default_rng(3), 3)
    broken = [tuple(None if name == "use_count" else v for name, v in
                    zip(COLUMN_ORDER, rows[0], strict=True))]
    with pytest.raises(ValueError, match="NaN"):
        score_columns(MemoryColumns.from_rows(broken), NOW, Settings())
    with pytest.raises(ValueError, match="NaN"):
        row_scores(broken, NOW, Settings())
