"""Near-duplicate clusters of memories for consolidation (Mnemex, engram): pure numpy, no I/O.

- **Single linkage** at ``threshold`` (0.83, Mnemex's cluster link threshold): two memories
  whose vectors' cosine exceeds it are linked, and a cluster is a connected group of links.
  Cosines are computed in blocks of :data:`BLOCK` rows, so memory stays O(BLOCK · n).
- **Cohesion** of a cluster = the mean cosine over all its pairs (1.0 for identical vectors).
  Bands: ``≥ merge`` (0.9) → merged by ``consolidate``; ``review``..``merge`` (0.75–0.9) →
  listed for a person to review; lower → kept apart (a chain of links whose ends differ).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

BLOCK = 1024
"""Rows of the cosine matrix computed at once."""


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def single_linkage(vectors: npt.ArrayLike, threshold: float) -> list[list[int]]:
    """Clusters (row indices, ascending; clusters by first index) of two or more unit vectors
    linked by cosine > ``threshold``. Singletons are left out."""
    m = np.asarray(vectors, dtype=np.float32)
    n = len(m)
    parent = list(range(n))
    for start in range(0, n, BLOCK):
        sims = m[start : start + BLOCK] @ m.T
        rows, cols = np.nonzero(sims > threshold)
        for r, c in zip((rows + start).tolist(), cols.tolist(), strict=True):
            if c <= r:
                continue
            a, b = _find(parent, r), _find(parent, c)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(_find(parent, i), []).append(i)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: g[0])


def cohesion(vectors: npt.ArrayLike) -> float:
    """Mean pairwise cosine of the (unit) rows; 1.0 for fewer than two rows."""
    m = np.asarray(vectors, dtype=np.float64)
    n = len(m)
    if n < 2:
        return 1.0
    sims = m @ m.T
    return float((sims.sum() - np.trace(sims)) / (n * (n - 1)))


@dataclass(frozen=True, slots=True)
class Band:
    """Cohesion bands: ``merge`` at or above, ``review`` at or above, else keep.

    See docs/user-guide.md, "Consolidation".
    """

    merge: float = 0.9
    review: float = 0.75

    def action(self, value: float) -> str:
        """``merge``, ``review`` or ``keep`` for a cluster of cohesion ``value``."""
        if value >= self.merge:
            return "merge"
        if value >= self.review:
            return "review"
        return "keep"
