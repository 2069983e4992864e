"""The maths of recall (docs/user-guide.md, "Recall"): signals in [0, 1], their weighted fusion,
ranking, review blending.

Pure Python over the n candidates of one query (a few dozen: recall starts without numpy); no
I/O. Every signal is a list of n floats indexed like the candidate list the caller built.

Signals (each in [0, 1]):

- **relevance** ``r`` — FTS5 BM25 relative to the best candidate: ``r = (−bm25) / max(−bm25)``
  (FTS5's ``bm25()`` is negative, more negative = better; the best candidate has ``r = 1``).
- **decay** ``d`` — the memory's decay score ``s`` (Mnemex; "Scores") squashed to
  ``s / (1 + s)``: a fresh, once-used memory (s = 1) gives 0.5, a faded one (s = 0.05) 0.048,
  a much-used one (s = 4) 0.8. Notes without decay fields (a person's own notes, boxes, traces)
  get :data:`NEUTRAL_DECAY` = 0.5, the value of a fresh memory: neither lifted nor sunk.
- **graph** ``g`` — graph proximity (Mnemon's graph re-ranking; "Recall"): the relevance of
  the strongest *strong hit* linked to or from the note, ``g_i = max{ r_s : s strong, s ~ i,
  s ≠ i }``, 0 when none. Strong hits are the :data:`GRAPH_SEEDS` most relevant candidates with
  ``r ≥`` :data:`STRONG_HIT`.

- **vector** ``v`` — embedding similarity with the query, when vectors exist
  (:func:`vaultmem.core.recall.vector_fusion.vector_signal`); 0 without embeddings.

Fusion: ``score = w_r·r + w_d·d + w_g·g + w_v·v`` (weights from ``[recall]`` and
``[embeddings] weight_vector``, overridable per call); each term is that signal's
*contribution*, which ``--explain`` prints. With ``w_d = w_g = w_v = 0`` the order is BM25's.
Ties break by path, so the order is deterministic.

Review blending (Mnemex, "Blended Search Results"): a share ``review_blend`` (0.3) of the
results are danger-zone memories relevant to the query (active, review priority > 0, relevance
≥ :data:`REVIEW_MIN_RELEVANCE`), highest priority first, interleaved ``[p0, p1, r0, p2, p3, r1,
…]`` — every ``round(1 / blend)``-th slot (every 3rd at 0.3) holds the next review candidate,
when its fused score is at least :data:`REVIEW_CLOSENESS` (0.9) of the hit it would displace.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from vaultmem.core.settings import RecallSettings

Floats = list[float]
Ints = list[int]
Bools = list[bool]

NEUTRAL_DECAY = 0.5
"""Decay signal of notes without decay fields: that of a fresh, once-used memory (score 1)."""
STRONG_HIT = 0.5
"""A candidate is a strong hit (a graph seed) when its relevance is at least this."""
GRAPH_SEEDS = 10
"""At most this many strong hits (the most relevant) lend graph proximity to their neighbours."""
REVIEW_MIN_RELEVANCE = STRONG_HIT
"""A danger-zone memory is blended in only when it is relevant: a strong hit itself (Mnemex's
"filter for relevance"; measured on ``benchmarks/recall_eval``: looser floors push answers down)."""

REVIEW_CLOSENESS = 0.9
"""A review slot takes the next danger-zone memory only when its fused score is at least this
share of the score of the hit it displaces; else the slot keeps the fused order. Blending then
chooses among near-equals (memories about to fade win the tie) instead of pushing a better hit
down: on real conversations (LoCoMo dev, ``benchmarks.locomo_eval``) an unconditional 30 %
blend cost 0.5 point of R@5 and 0.7 of R@10, and 0.9 gave the figures of no blending."""

UNRANKED_BM25 = -1.0
"""The ``bm25`` of a match that was not ranked by BM25 (every query word is a stopword found in
too many notes: BM25 weighs such words at about 0 and costs a scan of each word's notes)."""

WEIGHT_NAMES = ("relevance", "decay", "graph", "review_blend", "episode", "vector")


@dataclass(frozen=True, slots=True)
class FusionWeights:
    """Weights of the fused score and the review-blend share ("Recall"; ``[recall]`` settings).

    ``relevance``, ``decay``, ``graph``, ``episode``, ``vector`` ≥ 0 weigh their signals;
    ``review_blend``
    in [0, 1) is the share of results given to danger-zone memories (Mnemex: 0.3). Keyword-only
    ranking is ``relevance=1, decay=0, graph=0, review_blend=0, vector=0``; ``vector`` counts only
    when embeddings are configured and the notes have vectors.
    """

    relevance: float = 1.0
    decay: float = 0.3
    graph: float = 0.2
    review_blend: float = 0.3
    episode: float = 0.5
    """Weight of episode context (:mod:`vaultmem.core.recall.recall_context`); 0 turns it off."""
    vector: float = 0.0

    @classmethod
    def from_settings(cls, recall: RecallSettings, vector: float = 0.0) -> FusionWeights:
        return cls(
            relevance=recall.weight_relevance, decay=recall.weight_decay,
            graph=recall.weight_graph, review_blend=recall.review_blend,
            episode=recall.weight_episode, vector=vector,
        ).checked()

    def with_overrides(self, overrides: Mapping[str, float] | None) -> FusionWeights:
        """These weights with some replaced, e.g. ``{"decay": 0, "graph": 0}``.

        Raises ``ValueError`` naming an unknown key or a value out of range.
        """
        if not overrides:
            return self
        unknown = sorted(set(overrides) - set(WEIGHT_NAMES))
        if unknown:
            raise ValueError(
                f"unknown recall weight {unknown[0]!r}; known: {', '.join(WEIGHT_NAMES)}"
            )
        changes: dict[str, float] = {}
        for name, value in overrides.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"recall weight {name} must be a number, not {value!r}")
            changes[name] = float(value)
        return replace(self, **changes).checked()

    def checked(self) -> FusionWeights:
        """``self``, after checking every value is finite and in range (raises ``ValueError``)."""
        for name in ("relevance", "decay", "graph", "episode", "vector"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"recall weight {name} must be a number ≥ 0, not {value!r}")
        if not 0.0 <= self.review_blend < 1.0:
            raise ValueError(f"review_blend must be in [0, 1), not {self.review_blend!r}")
        return self

    def as_dict(self) -> dict[str, float]:
        return {name: float(getattr(self, name)) for name in WEIGHT_NAMES}


def relevance_signal(bm25: Sequence[float]) -> Floats:
    """FTS5 ``bm25()`` values (≤ 0, lower = better) → relevance in [0, 1], best = 1.

    Candidates that did not match the query (graph neighbours) carry ``bm25 = 0`` → ``r = 0``;
    NaN counts as 0.
    """
    gain = [max(-(0.0 if math.isnan(b) else float(b)), 0.0) for b in bm25]
    top = max(gain, default=0.0)
    return [g / top for g in gain] if top > 0.0 else [0.0] * len(gain)


def decay_signal(score: Sequence[float], decays: Sequence[bool]) -> Floats:
    """Decay score ``s`` ("Scores") → ``s / (1 + s)`` where ``decays``, else the neutral 0.5.

    NaN counts as 0, ``inf`` as 10¹² (a signal of 1)."""
    out: Floats = []
    for value, decaying in zip(score, decays, strict=True):
        s = 0.0 if math.isnan(value) else 1e12 if value == math.inf else max(float(value), 0.0)
        out.append(s / (1.0 + s) if decaying else NEUTRAL_DECAY)
    return out


def _best_first(values: Sequence[float], paths: Sequence[str]) -> Ints:
    """Indices by value descending, ties by path ascending (then by index: stable)."""
    return sorted(range(len(values)), key=lambda i: (-values[i], str(paths[i])))


def strong_hits(relevance: Sequence[float], paths: Sequence[str], count: int | None = None) -> (
        Bools):
    """Mask of the graph seeds: the ``count`` (:data:`GRAPH_SEEDS`) most relevant with
    ``r ≥ STRONG_HIT``."""
    mask = [False] * len(relevance)
    for i in _best_first(relevance, paths)[:GRAPH_SEEDS if count is None else count]:
        if relevance[i] >= STRONG_HIT:
            mask[i] = True
    return mask


class Proximity(NamedTuple):
    """Graph signal per candidate and, for ``--explain``, which seed gave it (−1: none)."""

    signal: Floats
    via: Ints


def graph_signal(
    relevance: Sequence[float], seeds: Sequence[bool], sources: Sequence[int],
    targets: Sequence[int],
) -> Proximity:
    """Graph proximity of n candidates from links ``sources[e] → targets[e]`` (candidate indices).

    Links count in either direction ("Index and graph": backlinks and outlinks are both edges): a
    strong hit lends its relevance to every candidate it links to or that links to it, never to
    itself; a candidate's signal is the largest amount lent to it.
    """
    n = len(relevance)
    signal = [0.0] * n
    via = [-1] * n
    pairs = [(int(a), int(b)) for a, b in (*zip(sources, targets, strict=True),
                                           *zip(targets, sources, strict=True))
             if seeds[int(a)] and int(a) != int(b)]
    for lender, taker in pairs:
        signal[taker] = max(signal[taker], float(relevance[lender]))
    # the seed that gave the maximum; among equals the lowest index (deterministic)
    for lender, taker in pairs:
        if float(relevance[lender]) == signal[taker] and (via[taker] < 0 or lender < via[taker]):
            via[taker] = lender
    return Proximity(signal, via)


class Fused(NamedTuple):
    """Per-signal contributions (weight × signal) and their sum ``score``, shape (n,) each."""

    relevance: Floats
    decay: Floats
    graph: Floats
    score: Floats
    vector: Floats | None = None


def fuse(
    relevance: Sequence[float], decay: Sequence[float], graph: Sequence[float],
    weights: FusionWeights, vector: Sequence[float] | None = None,
) -> Fused:
    """``score = w_r·r + w_d·d + w_g·g (+ w_v·v)``, each weighted term kept for ``--explain``."""
    r = [weights.relevance * x for x in relevance]
    d = [weights.decay * x for x in decay]
    g = [weights.graph * x for x in graph]
    score = [a + b + c for a, b, c in zip(r, d, g, strict=True)]
    if vector is None:
        return Fused(relevance=r, decay=d, graph=g, score=score)
    v = [weights.vector * x for x in vector]
    total = [a + b for a, b in zip(score, v, strict=True)]
    return Fused(relevance=r, decay=d, graph=g, score=total, vector=v)


def ranking(score: Sequence[float], paths: Sequence[str]) -> Ints:
    """Candidate indices by ``score`` descending, ties by path ascending (deterministic)."""
    return _best_first(score, paths)


def review_period(blend: float) -> int:
    """Every how many slots a review candidate goes (Mnemex: 0.3 → every 3rd); 0 = never."""
    if blend <= 0.0:
        return 0
    return max(2, round(1.0 / blend))


def blend_results(
    primary: Sequence[int], review: Sequence[int], k: int, blend: float,
    score: Sequence[float] | None = None, closeness: float = 0.0,
) -> list[tuple[int, bool]]:
    """The first ``k`` results as (candidate index, placed by review blending).

    ``primary`` is every candidate in fused order; ``review`` the danger-zone candidates in review
    order (a subset of ``primary``). Slot j (0-based) is a review slot when ``(j + 1)`` is a
    multiple of :func:`review_period`; it takes the next review candidate not yet shown, or the
    next primary one when none is left. A memory shows once: one already placed by its own score
    is not placed again. Mnemex's example, blend 0.3: ``[p0, p1, r0, p2, p3, r1, p4, …]``.
    With ``score`` (fused scores by candidate index) and ``closeness`` > 0, the next review
    candidate takes its slot only when ``score[r] ≥ closeness × score[p]`` for the primary hit
    ``p`` it would displace; else the slot goes to ``p`` and the candidate waits for the next.
    """
    period = review_period(blend)
    shown: set[int] = set()
    out: list[tuple[int, bool]] = []
    p = r = 0
    while len(out) < k:
        slot = len(out)
        if period and (slot + 1) % period == 0:
            while r < len(review) and review[r] in shown:
                r += 1
            if r < len(review) and _close_enough(review[r], primary, p, shown, score, closeness):
                out.append((review[r], True))
                shown.add(review[r])
                continue
        while p < len(primary) and primary[p] in shown:
            p += 1
        if p >= len(primary):
            break
        out.append((primary[p], False))
        shown.add(primary[p])
    return out


def _close_enough(candidate: int, primary: Sequence[int], p: int, shown: set[int],
                  score: Sequence[float] | None, closeness: float) -> bool:
    """Whether the review candidate's fused score is at least ``closeness`` × that of the
    primary hit it would displace (the next one not yet shown); always true at 0."""
    if closeness <= 0.0 or score is None:
        return True
    while p < len(primary) and primary[p] in shown:
        p += 1
    return p >= len(primary) or score[candidate] >= closeness * score[primary[p]]


@dataclass(frozen=True, slots=True)
class HitSignals:
    """The raw measures behind a :class:`Hit`: signals in [0, 1] and what they came from.

    ``bm25`` is FTS5's value (≤ 0, lower = better; 0 = reached through a link only;
    :data:`UNRANKED_BM25` = matched but not ranked);
    ``decay_score`` the decay score ("Scores") (``None`` for notes without decay fields);
    ``review_priority`` as in "Scores"; ``linked_to`` the strong hit that lent graph proximity.
    """

    relevance: float
    decay: float
    graph: float
    bm25: float
    decay_score: float | None
    review_priority: float
    linked_to: str | None
    vector: float = 0.0
    cosine: float | None = None
    time: float = 0.0
    """The time-words lift in ``graph`` (the query asks when, the note mentions a time)."""
    date: float = 0.0
    """The date lift in ``graph`` (the note was created inside a date the query names)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One recall result: ``score`` = ``relevance + decay + graph`` (the weighted contributions).

    ``review`` is True when review blending (Mnemex) placed the memory in its slot; ``id`` is
    ``None`` for notes vaultmem does not manage. ``rank`` counts from 1. ``text`` is the note's
    body as indexed, cut past :data:`~vaultmem.core.notes.excerpts.HIT_TEXT_CHARS` with a marker.
    """

    rank: int
    path: str
    id: str | None
    title: str
    score: float
    relevance: float
    decay: float
    graph: float
    review: bool
    signals: HitSignals
    conflicted: bool = False
    """The note holds git conflict markers; it was read from its "ours" side."""
    text: str = ""
    vector: float = 0.0
    episode: str | None = None
    """The memory box the hit belongs to (its episode), as a vault-relative path; ``None`` for a
    memory in no box and for notes."""

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: identity, score, contributions and signals (numbers rounded to 6 places)."""
        s = self.signals
        out: dict[str, object] = {
            "rank": self.rank, "path": self.path, "id": self.id, "title": self.title,
            "text": self.text, "score": _round(self.score), "review": self.review,
            "conflicted": self.conflicted, "episode": self.episode,
            "contributions": {"relevance": _round(self.relevance), "decay": _round(self.decay),
                              "graph": _round(self.graph)},
            "signals": {"relevance": _round(s.relevance), "decay": _round(s.decay),
                        "graph": _round(s.graph), "bm25": _round(s.bm25),
                        "decay_score": None if s.decay_score is None else _round(s.decay_score),
                        "review_priority": _round(s.review_priority), "linked_to": s.linked_to},
        }
        if s.cosine is not None:  # embeddings took part (hybrid recall)
            out["contributions"]["vector"] = _round(self.vector)  # type: ignore[index]
            out["signals"]["vector"] = _round(s.vector)  # type: ignore[index]
            out["signals"]["cosine"] = _round(s.cosine)  # type: ignore[index]
        return out


def _round(value: float) -> float:
    return round(float(value), 6) if math.isfinite(value) else 0.0
