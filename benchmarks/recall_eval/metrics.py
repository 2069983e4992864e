"""Retrieval metrics over ranked lists of note paths: recall@k and mean reciprocal rank.

A *rank* is the 1-based position of the first expected answer in a ranking, or ``None`` when no
answer was returned. recall@k = share of questions whose rank is ≤ k ("at least one answer in the
top k"); MRR = mean of 1/rank, a missing answer counting 0. Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

CUTOFFS = (1, 5, 10)
"""The k of the recall@k columns the report shows."""


def first_rank(ranking: Sequence[str], answers: Iterable[str]) -> int | None:
    """1-based position of the first path of ``ranking`` in ``answers``, else ``None``."""
    wanted = set(answers)
    for position, path in enumerate(ranking, 1):
        if path in wanted:
            return position
    return None


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    """Share (0..1) of questions with an answer in the top ``k``; 0.0 for no questions."""
    if not ranks:
        return 0.0
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def mean_reciprocal_rank(ranks: Sequence[int | None]) -> float:
    """Mean of 1/rank over the questions (a question without an answer adds 0); 0.0 for none."""
    if not ranks:
        return 0.0
    return sum(1.0 / r for r in ranks if r is not None) / len(ranks)


def reciprocal(rank: int | None) -> float:
    """1/rank, or 0.0 when no answer was returned."""
    return 0.0 if rank is None else 1.0 / rank


@dataclass(frozen=True, slots=True)
class Scores:
    """recall@1/5/10 and MRR of ``n`` questions."""

    n: int
    recall_1: float
    recall_5: float
    recall_10: float
    mrr: float

    def as_dict(self) -> dict[str, float | int]:
        return {"n": self.n, "recall@1": self.recall_1, "recall@5": self.recall_5,
                "recall@10": self.recall_10, "mrr": self.mrr}


def score(ranks: Sequence[int | None]) -> Scores:
    """The :class:`Scores` of one configuration on the questions whose ranks are ``ranks``."""
    return Scores(
        n=len(ranks),
        recall_1=recall_at(ranks, 1),
        recall_5=recall_at(ranks, 5),
        recall_10=recall_at(ranks, 10),
        mrr=mean_reciprocal_rank(ranks),
    )
