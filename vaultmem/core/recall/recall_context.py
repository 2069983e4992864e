"""Recall adjustments that come from how memories relate, not from their words (pure Python
over the candidates of one query, lists indexed like them).

- **Episode context.** Memories imported from a conversation link each turn to the one before
  (``previous: "[[…]]"``, same ``episode``). A short reply ("We called him Biscuit!") rarely
  shares words with the question it answers; the question does. A strong hit therefore lends
  its episode neighbours an *episode* signal ``e_j = max{ share · r_h : h strong, h ~ j }`` where
  ``share`` is :data:`NEXT_SHARE` for the turn after the hit and :data:`PREVIOUS_SHARE` for the
  turn before it; the neighbour gains ``w_episode · e_j · (1 − r_j)``: a neighbour whose own
  words already match gains little. The shares were chosen on real conversations
  (``benchmarks.locomo_eval``).
- **Corrections.** A superseded memory shown anyway (``--include-superseded``) ranks below its
  successor when both are candidates: its score is capped just under the successor's.
- **Plain notes' decay.** Notes without decay fields (a person's own notes) get the neutral 0.5,
  lowered just enough that a plain note never outranks, on relevance plus decay, a relevant
  memory (a strong hit) that matches the query as well or better (:func:`plain_note_decay`).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

Floats = list[float]
Ints = list[int]

NEXT_SHARE = 1.0
"""Share of a hit's relevance lent to the turn right after it (the reply to a question)."""
PREVIOUS_SHARE = 0.5
"""Share of a hit's relevance lent to the turn right before it (the question to an answer):
0.5, chosen by cross-validation on real conversations (``benchmarks.locomo_eval``: 0.5 in every
fold over 0; docs/user-guide.md, "Semantic recall"). The generated ``conversation_eval`` had
preferred 0, a default that did not carry over."""
EPISODE_SEEDS = 20
"""At most this many strong hits (the most relevant) lend episode context to their turns before
and after (graph proximity keeps :data:`~vaultmem.core.recall.recall_fusion.GRAPH_SEEDS`): measured
on ``benchmarks.locomo_eval`` over all its questions (not cross-validated), 20 against 10 raised
R@5, R@25 and R@50 by 0.1 each (30: no more)."""
EPISODE_WEIGHT = 0.5
"""Default weight of the episode signal in the fused score (``[recall] weight_episode``)."""
SUPERSEDED_GAP = 1e-6
"""A superseded memory's score is capped this far below its successor's (and a plain note's
decay bound this far below a relevant memory's, so ties go to the memory)."""


def plain_note_decay(
    decay: Sequence[float],
    decays: Sequence[bool],
    relevance: Sequence[float],
    ratio: float,
    *,
    plain: Sequence[bool],
    relevant: float = 0.5,
    neutral: float = 0.5,
) -> Floats:
    """``decay`` with each non-memory entry set to ``neutral``, lowered just enough that the
    plain note cannot outrank, on relevance plus decay, a *relevant* memory (``decays`` marks
    the memories that count: the caller leaves out those below the forget threshold; relevance
    ≥ ``relevant``, a strong hit) that matches at least as well as the note:
    ``d_p = min(neutral, min{ d_m + (r_m − r_p)·ratio : m relevant memory, r_m ≥ r_p })``, with
    ``ratio`` = relevance weight / decay weight (docs/user-guide.md, "Clean recall"). Only the
    entries where ``plain`` is set change."""
    out = [neutral if p else float(d) for p, d in zip(plain, decay, strict=True)]
    memories = [i for i, m in enumerate(decays) if m and relevance[i] >= relevant]
    notes = [i for i, p in enumerate(plain) if p]
    if not memories or not notes or not math.isfinite(ratio):
        return out
    order = sorted(memories, key=lambda i: -relevance[i])  # stable
    # min over the memories at least as relevant (a prefix of `order`) of d_m + r_m·ratio
    running: Floats = []
    for i in order:
        value = out[i] + relevance[i] * ratio
        running.append(min(running[-1], value) if running else value)
    descending = [-relevance[i] for i in order]
    for j in notes:
        count = bisect.bisect_right(descending, -relevance[j])
        bound = (running[count - 1] - relevance[j] * ratio - SUPERSEDED_GAP if count > 0
                 else math.inf)
        out[j] = max(min(neutral, bound), 0.0)
    return out


def episode_signal(
    relevance: Sequence[float],
    seeds: Sequence[bool],
    hits: Sequence[int],
    nexts: Sequence[int],
    previous: Sequence[int],
) -> tuple[Floats, Ints]:
    """Episode signal of n candidates and the hit that gave it (−1: none).

    ``hits[e]``/``nexts[e]``: candidate ``nexts[e]`` is the turn after candidate ``hits[e]``;
    ``previous[e]`` is 1 when the pair was found from the hit's own ``previous`` link (the
    neighbour is the turn before) and 0 otherwise. Only seeds (strong hits) lend.
    """
    n = len(relevance)
    signal = [0.0] * n
    via = [-1] * n
    for h, j, before in zip(hits, nexts, previous, strict=True):
        if h == j or not seeds[h]:
            continue
        lent = float(relevance[h]) * (PREVIOUS_SHARE if before else NEXT_SHARE)
        if lent > signal[j] or (lent == signal[j] and lent > 0 and (via[j] < 0 or h < via[j])):
            signal[j] = lent
            via[j] = h
    return signal, via


def episode_contribution(
    signal: Sequence[float], relevance: Sequence[float], weight: float
) -> Floats:
    """``weight · e · (1 − r)``: what the episode signal adds to each fused score."""
    return [weight * e * (1.0 - min(max(r, 0.0), 1.0))
            for e, r in zip(signal, relevance, strict=True)]


def cap_superseded(score: Sequence[float], successor: Sequence[int]) -> Floats:
    """``score`` with each superseded candidate (``successor[i] ≥ 0``, the index of its
    successor among the candidates) capped :data:`SUPERSEDED_GAP` below its successor.

    Chains (a superseded successor) are followed by repeating until nothing changes.
    """
    out = [float(x) for x in score]
    rows = [i for i, s in enumerate(successor) if s >= 0]
    for _ in range(len(rows) + 1):
        changed = False
        for i in rows:
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
