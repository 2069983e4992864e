"""The vector signal of hybrid recall: cosine similarity turned into a [0, 1] signal.

No I/O. For the n candidates of one query (lists of n floats; numpy only for the nearest-vector
search over the whole vault, :func:`top_k` and the projection):

``v_i = clip((cos_i − floor) / (top − floor), 0, 1)`` with ``top`` the best cosine of the whole
vault for this query (the first vector candidate) and ``floor`` = ``[embeddings] vector_floor``:
the nearest note gets 1, a note at or below the floor 0. Notes without a vector get 0.

Relative scaling keeps the signal on the same footing as BM25 relevance (the best keyword match
gets 1 too), and the floor keeps the near-random cosines of unrelated notes (0.0–0.2 for MiniLM)
from lending every candidate a little. The fused score adds ``w_v · v`` to relevance, decay and
graph (see :mod:`vaultmem.core.recall.recall_fusion`); ``w_v`` (0.75) was chosen by cross-validation
on real conversations, ``benchmarks.locomo_eval`` (see ``docs/user-guide.md``, "Semantic
recall"). :func:`matched_share` and :func:`unmatched_share` stay for ``[embeddings]
matched_vector_share`` and ``agreement_damping``, which now default to no effect (1 and 0): on
real conversations keeping 0.4 of the vector signal of keyword matches cost 1.4 points of R@5.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads with the vectors: keyword recall starts without it
    import numpy as np
    import numpy.typing as npt


def vector_signal(cosines: Iterable[float], top: float, floor: float) -> list[float]:
    """Cosines (NaN = no vector) → signal in [0, 1]; all zeros when ``top ≤ floor``."""
    cos = [-1.0 if math.isnan(c) else float(c) for c in cosines]
    span = top - floor
    if not math.isfinite(span) or span <= 0:
        return [0.0] * len(cos)
    return [min(max((c - floor) / span, 0.0), 1.0) for c in cos]


def top_k(similarity: npt.ArrayLike, k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` largest values, largest first (ties: lower index first)."""
    import numpy as np

    sims = np.asarray(similarity)
    n = len(sims)
    if k <= 0 or n == 0:
        return np.zeros(0, dtype=np.intp)
    part = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
    order = np.lexsort((part, -sims[part]))
    return np.asarray(part[order], dtype=np.intp)


def keyword_agreement(
    cosines: Iterable[float], relevance: Iterable[float], top: float, leaders: int = 3
) -> float:
    """How close the best keyword matches come to the query's nearest note by meaning, in [0, 1].

    The largest cosine among the ``leaders`` candidates of highest BM25 relevance (ties: the
    earlier candidate), divided by ``top``, the best cosine in the vault for this query. 1 means
    a top keyword match *is* (as near as) the nearest note; 0 without keyword matches, without
    vectors, or when ``top ≤ 0``. NaN cosines (no vector) count as −1.
    """
    matched = [(r, -1.0 if math.isnan(c) else float(c))
               for r, c in zip(relevance, cosines, strict=True) if r > 0]
    if top <= 0 or not matched:
        return 0.0
    matched.sort(key=lambda pair: -pair[0])  # stable: equal relevance keeps candidate order
    best = max(c for _, c in matched[:leaders])
    return min(max(best / top, 0.0), 1.0)


def unmatched_share(agreement: float, damping: float, start: float) -> float:
    """Share of the vector signal kept by notes no query word matched, in [1 − damping, 1].

    ``1 − damping · (agreement − start) / (1 − start)`` above ``start``, else 1: when the words
    and the meaning agree on the best notes (a keyword match is also the nearest note), the
    keyword ranking is trusted and a note that only resembles the query cannot jump over it.
    When they disagree (paraphrases: the keyword matches are incidental words), vectors keep
    their full weight. Tuned on ``benchmarks/recall_eval`` (see ``docs/user-guide.md``,
    "Hybrid recall").
    """
    if agreement <= start or start >= 1.0:
        return 1.0
    return 1.0 - damping * min((agreement - start) / (1.0 - start), 1.0)


def matched_share(
    vector: Iterable[float], matched: Iterable[bool], share: float, unmatched: float = 1.0
) -> list[float]:
    """The vector signal with notes that matched the query's words scaled by ``share``, and the
    others by ``unmatched`` (:func:`unmatched_share`).

    Among keyword matches BM25 already orders well, and one vector per note misses the detail
    of a long note; notes no word matched (paraphrases) keep ``unmatched`` of their signal.
    """
    return [share * v if m else unmatched * float(v)
            for v, m in zip(vector, matched, strict=True)]


PREFILTER_DIMS = 96
"""Dimensions of the projection that screens a large vault's vectors before exact cosines."""


def projection(
    vectors: npt.ArrayLike, dims: int = PREFILTER_DIMS, sample: int = 4096, seed: int = 0
) -> npt.NDArray[np.float32]:
    """A ``(d, dims)`` basis of the principal directions of (a sample of) ``vectors``.

    Embeddings concentrate in a few directions; cosines in this subspace rank neighbours almost
    as the full vectors do, at ``dims / d`` of the memory traffic.
    """
    import numpy as np

    m = np.asarray(vectors, dtype=np.float32)
    rng = np.random.default_rng(seed)
    rows = m if len(m) <= sample else m[rng.choice(len(m), sample, replace=False)]
    _u, _s, vt = np.linalg.svd(rows.astype(np.float64), full_matrices=False)
    return np.ascontiguousarray(vt[: min(dims, vt.shape[0])].T.astype(np.float32))


def screened_top_k(
    vectors: npt.NDArray[np.float32],
    reduced: npt.NDArray[np.float32],
    basis: npt.NDArray[np.float32],
    query: npt.NDArray[np.float32],
    k: int,
    pool: int,
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
    """The ``k`` rows nearest ``query`` (indices and exact cosines, nearest first): the best
    ``pool`` rows by projected cosine, then exact cosines for those only."""
    approx = reduced @ (query @ basis)
    chosen = top_k(approx, max(k, pool))
    exact = vectors[chosen] @ query
    order = top_k(exact, k)
    return chosen[order], exact[order]
