"""Near-duplicate clusters of memories for consolidation (Mnemex, engram): pure numpy, no I/O.

- **Single linkage** at ``threshold`` (0.83, Mnemex's cluster link threshold): two memories
  whose vectors' cosine exceeds it are linked, and a cluster is a connected group of links.
  Cosines are computed in blocks of :data:`BLOCK` rows, so memory stays O(BLOCK · n).
- **Cohesion** of a cluster = the mean cosine over all its pairs (1.0 for identical vectors).
  Bands: ``≥ merge`` (0.9) → merged by ``consolidate``; ``review``..``merge`` (0.75–0.9) →
  listed for a person to review; lower → kept apart (a chain of links whose ends differ).
- **Distinct events are never linked**: two memories whose texts name different numbers, dates,
  months or weekdays (:func:`fact_tokens`: "Meeting notes day 12" and "… day 16", "paid 40 €"
  and "paid 45 €") tell different events however close their vectors are, so no link joins them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
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


_NUMBER = re.compile(r"\d+(?:[.,:/]\d+)*")
_CALENDAR_WORDS = frozenset((
    "january", "february", "march", "april", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "yesterday", "tomorrow",
))
"""Months ("may" left out: mostly the verb) and weekdays, and the relative days."""


def fact_tokens(text: str) -> frozenset[str]:
    """The numbers (leading zeros dropped: ``"07"`` = ``"7"``) and calendar words (months,
    weekdays, yesterday/tomorrow) of ``text``: what tells one dated event from another."""
    numbers = {".".join(part.lstrip("0") or "0" for part in re.split(r"[.,:/]", n))
               for n in _NUMBER.findall(text)}
    words = {w for w in re.findall(r"[^\W\d_]+", text.casefold()) if w in _CALENDAR_WORDS}
    return frozenset(numbers | words)


def same_facts(facts: Sequence[frozenset[str]]) -> Callable[[int, int], bool]:
    """A ``linkable(i, j)`` for :func:`single_linkage`: rows i and j name the same facts."""
    return lambda i, j: facts[i] == facts[j]


def single_linkage(
    vectors: npt.ArrayLike, threshold: float,
    linkable: Callable[[int, int], bool] | None = None,
) -> list[list[int]]:
    """Clusters (row indices, ascending; clusters by first index) of two or more unit vectors
    linked by cosine > ``threshold`` (and, when given, ``linkable(i, j)``: e.g.
    :func:`same_facts`). Singletons are left out."""
    m = np.asarray(vectors, dtype=np.float32)
    n = len(m)
    parent = list(range(n))
    for start in range(0, n, BLOCK):
        sims = m[start : start + BLOCK] @ m.T
        rows, cols = np.nonzero(sims > threshold)
        for r, c in zip((rows + start).tolist(), cols.tolist(), strict=True):
            if c <= r or (linkable is not None and not linkable(r, c)):
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
