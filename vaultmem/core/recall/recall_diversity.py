"""Diversity of a recall page: near-duplicates of a better hit do not fill the page.

Pure Python, no I/O. Seven notes "Meeting notes day N" that say nearly the same thing should take
one slot of the page, not seven, so that the memory that actually answers "when is the daily team
meeting" (the standup, used 28 times) is seen. This is grouping rather than full MMR (Carbonell
and Goldstein, 1998): a candidate is held back only when it is a *near-duplicate* of a hit
already placed, judged by

- the cosine of their vectors ≥ ``[embeddings] near_duplicate`` (0.92) when both have one, or
- the Jaccard overlap of their content words ≥ :data:`NEAR_DUPLICATE_WORDS` (notes that differ
  by a day number embed at 0.91 with all-MiniLM-L6-v2, and share 85 % of their words).

Held-back candidates keep their order and follow the distinct ones, so they still fill the page
when too few distinct candidates are left; ranks among distinct candidates do not change. Review
blending does not bring a held-back candidate back into the page.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from vaultmem.core.recall.text_tokens import jaccard

NEAR_DUPLICATE_WORDS = 0.6
"""Content-word Jaccard overlap at or above which two hits count as near-duplicates ("Meeting
notes day 12: …" against "Meeting notes day 16: …" with the same agenda: 0.8–0.9; two
different turns of one conversation rarely pass 0.4)."""


class Spread(NamedTuple):
    """The order with near-duplicates moved back, and the candidates moved."""

    order: list[int]
    held: set[int]


def spread_near_duplicates(
    order: Sequence[int], k: int, words: Callable[[int], frozenset[str]],
    cosine: Callable[[int, int], float | None] | None = None, near_cosine: float = 0.92,
    near_words: float = NEAR_DUPLICATE_WORDS,
) -> Spread:
    """``order`` (candidate indices, best first) with near-duplicates of an earlier hit moved
    behind the first ``k`` distinct candidates.

    ``words(i)`` gives candidate i's content words; ``cosine(i, j)`` their vectors' cosine or
    ``None`` when one has no vector. Only the first ``k`` distinct candidates are compared
    (O(k²) comparisons at most); the returned list holds every index of ``order`` once.
    """
    kept: list[int] = []
    held: list[int] = []
    seen = 0
    for i in order:
        if len(kept) >= k:
            break
        seen += 1
        if any(_near(i, j, words, cosine, near_cosine, near_words) for j in kept):
            held.append(i)
        else:
            kept.append(i)
    return Spread([*kept, *held, *order[seen:]], set(held))


def _near(i: int, j: int, words: Callable[[int], frozenset[str]],
          cosine: Callable[[int, int], float | None] | None, near_cosine: float,
          near_words: float) -> bool:
    if cosine is not None:
        value = cosine(i, j)
        if value is not None and value >= near_cosine:
            return True
    a, b = words(i), words(j)
    return bool(a) and bool(b) and jaccard(a, b) >= near_words
