"""Recall adjustments that come from how memories relate, not from their words (pure numpy).

- **Episode context.** Memories imported from a conversation link each turn to the one before
  (``previous: "[[…]]"``, same ``episode``). A short reply ("We called him Biscuit!") rarely
  shares words with the question it answers; the question does. A strong hit therefore lends
  its episode neighbours an *episode* signal ``e_j = max{ share · r_h : h strong, h ~ j }`` where
  ``share`` is :data:`NEXT_SHARE` for the turn after the hit and :data:`PREVIOUS_SHARE` for the
  turn before it; the neighbour gains ``w_episode · e_j · (1 − r_j)``: a neighbour whose own
  words already match gains little. Measured on ``benchmarks/conversation_eval``.
- **Corrections.** A superseded memory shown anyway (``--include-superseded``) ranks below its
  successor when both are candidates: its score is capped just under the successor's.
- **Plain notes' decay.** Notes without decay fields (a person's own notes) get the neutral 0.5,
  lowered just enough that a plain note never outranks, on relevance plus decay, a relevant
  memory (a strong hit) that matches the query as well or better (:func:`plain_note_decay`).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]
BoolArray = npt.NDArray[np.bool_]

NEXT_SHARE = 1.0
"""Share of a hit's relevance lent to the turn right after it (the reply to a question)."""
PREVIOUS_SHARE = 0.0
"""Share of a hit's relevance lent to the turn right before it (the question to an answer):
0, measured on ``benchmarks/conversation_eval`` (0.5 lowered recall@5 by 0.01)."""
EPISODE_WEIGHT = 0.5
"""Default weight of the episode signal in the fused score (``[recall] weight_episode``)."""
SUPERSEDED_GAP = 1e-6
"""A superseded memory's score is capped this far below its successor's (and a plain note's
decay bound this far below a relevant memory's, so ties go to the memory)."""


def plain_note_decay(
    decay: FloatArray,
    decays: BoolArray,
    relevance: FloatArray,
    ratio: float,
    *,
    plain: BoolArray,
    relevant: float = 0.5,
    neutral: float = 0.5,
) -> FloatArray:
    """``decay`` with each non-memory entry set to ``neutral``, lowered just enough that the
    plain note cannot outrank, on relevance plus decay, a *relevant* memory (``decays`` marks
    the memories that count: the caller leaves out those below the forget threshold; relevance
    ≥ ``relevant``, a strong hit) that matches at least as well as the note:
    ``d_p = min(neutral, min{ d_m + (r_m − r_p)·ratio : m relevant memory, r_m ≥ r_p })``, with
    ``ratio`` = relevance weight / decay weight (docs/user-guide.md, "Clean recall"). Only the
    entries where ``plain`` is set change."""
    out = np.where(plain, neutral, np.asarray(decay, dtype=np.float64))
    memories = np.flatnonzero(decays & (relevance >= relevant))
    notes = np.flatnonzero(plain)
    if not len(memories) or not len(notes) or not math.isfinite(ratio):
        return out
    order = memories[np.argsort(-relevance[memories], kind="stable")]
    # min over the memories at least as relevant (a prefix of `order`) of d_m + r_m·ratio
    running = np.minimum.accumulate(out[order] + relevance[order] * ratio)
    count = np.searchsorted(-relevance[order], -relevance[notes], side="right")
    has = count > 0
    bound = np.full(len(notes), np.inf)
    bound[has] = running[count[has] - 1] - relevance[notes][has] * ratio - SUPERSEDED_GAP
    out[notes] = np.clip(np.minimum(neutral, bound), 0.0, None)
    return out


def episode_signal(
    relevance: FloatArray,
    seeds: BoolArray,
    hits: IntArray,
    nexts: IntArray,
    previous: IntArray,
) -> tuple[FloatArray, IntArray]:
    """Episode signal of n candidates and the hit that gave it (−1: none).

    ``hits[e]``/``nexts[e]``: candidate ``nexts[e]`` is the turn after candidate ``hits[e]``;
    ``previous[e]`` is 1 when the pair was found from the hit's own ``previous`` link (the
    neighbour is the turn before) and 0 otherwise. Only seeds (strong hits) lend.
    """
    n = len(relevance)
    signal = np.zeros(n, dtype=np.float64)
    via = np.full(n, -1, dtype=np.intp)
    for h, j, before in zip(hits.tolist(), nexts.tolist(), previous.tolist(), strict=True):
        if h == j or not seeds[h]:
            continue
        lent = float(relevance[h]) * (PREVIOUS_SHARE if before else NEXT_SHARE)
        if lent > signal[j] or (lent == signal[j] and lent > 0 and (via[j] < 0 or h < via[j])):
            signal[j] = lent
            via[j] = h
    return signal, via


def episode_contribution(signal: FloatArray, relevance: FloatArray, weight: float) -> FloatArray:
    """``weight · e · (1 − r)``: what the episode signal adds to each fused score."""
    return weight * signal * (1.0 - np.clip(relevance, 0.0, 1.0))


def cap_superseded(score: FloatArray, successor: IntArray) -> FloatArray:
    """``score`` with each superseded candidate (``successor[i] ≥ 0``, the index of its
    successor among the candidates) capped :data:`SUPERSEDED_GAP` below its successor.

    Chains (a superseded successor) are followed by repeating until nothing changes.
    """
    out = score.astype(np.float64, copy=True)
    rows = np.flatnonzero(successor >= 0)
    for _ in range(len(rows) + 1):
        changed = False
        for i in rows.tolist():
            cap = out[successor[i]] - SUPERSEDED_GAP
            if out[i] > cap:
                out[i] = cap
                changed = True
        if not changed:
            break
    return out


__all__ = [
    "EPISODE_WEIGHT",
    "NEXT_SHARE",
    "PREVIOUS_SHARE",
    "cap_superseded",
    "episode_contribution",
    "episode_signal",
    "plain_note_decay",
]
