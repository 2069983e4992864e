"""Ranking recall's candidates, in four steps read top to bottom in :func:`rank`
(docs/user-guide.md, "Recall"):

1. **Candidates** (:func:`gather`): the FTS5 rows the words match, ranked by BM25 under a row
   budget; the query's nearest notes by vector; the notes created on a date the query names;
   then the notes linked to the strong hits and their episode neighbours
   (:mod:`~vaultmem.services.recall.recall_candidates`,
   :mod:`~vaultmem.services.recall.recall_neighbours`).
2. **Signals** (:func:`signals`): per candidate, the decay score and review priority, graph
   proximity, the vector signal, and the episode, time and date lifts
   (:mod:`vaultmem.core.recall`, :mod:`vaultmem.core.scoring.float_scores`).
3. **Fusion** (:func:`fusion`): the weighted sum of the signals plus the lifts, a superseded
   memory capped below its successor (:mod:`vaultmem.core.recall.recall_fusion`).
4. **Page** (:func:`page`): near-duplicates of a better hit behind the distinct ones, review
   slots blended in, the top ``k`` as :class:`~vaultmem.core.recall.recall_fusion.Hit` objects.
"""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple, cast

from vaultmem.core.notes.excerpts import capped_text
from vaultmem.core.notes.fields import MANAGED_TYPES
from vaultmem.core.notes.note_parse import title_of
from vaultmem.core.recall.recall_context import (
    EPISODE_SEEDS,
    cap_superseded,
    episode_contribution,
    episode_signal,
    plain_note_decay,
)
from vaultmem.core.recall.recall_dates import (
    DATE_CANDIDATES,
    DATE_LIFT,
    Window,
    created_within,
)
from vaultmem.core.recall.recall_diversity import Spread, spread_near_duplicates
from vaultmem.core.recall.recall_fusion import (
    REVIEW_CLOSENESS,
    REVIEW_MIN_RELEVANCE,
    STRONG_HIT,
    Fused,
    FusionWeights,
    Hit,
    HitSignals,
    blend_results,
    decay_signal,
    fuse,
    graph_signal,
    ranking,
    relevance_signal,
    strong_hits,
)
from vaultmem.core.recall.recall_time import TIME_LIFT, mentions_time
from vaultmem.core.recall.text_tokens import content_tokens
from vaultmem.core.recall.vector_fusion import (
    keyword_agreement,
    matched_share,
    unmatched_share,
    vector_signal,
)
from vaultmem.core.scoring.float_scores import row_scores
from vaultmem.core.scoring.score_formulas import COLUMN_ORDER
from vaultmem.services.recall.recall_candidates import (
    CANDIDATES,
    dated_candidates,
    fts_candidates,
    rows_at,
)
from vaultmem.services.recall.recall_neighbours import (
    Episodes,
    episode_neighbours,
    graph_candidates,
    successors,
)

if TYPE_CHECKING:
    from vaultmem.core.recall.recall_fusion import Proximity
    from vaultmem.services.recall.recall_filters import RecallFilters
    from vaultmem.services.semantic.embeddings import SemanticQuery
    from vaultmem.services.vault_context import VaultContext

__all__ = ["Candidates", "Signals", "fusion", "gather", "page", "rank", "signals"]

_ID, _TYPE, _STATUS, _CREATED = (
    COLUMN_ORDER.index(name) for name in ("id", "type", "status", "created"))
DIVERSITY_WINDOW = 3
"""Near-duplicates are looked for among the first ``DIVERSITY_WINDOW × k`` candidates."""


class Candidates(NamedTuple):
    """Step 1: the candidate rows (``COLUMN_ORDER``) with their paths, BM25 values (0 for a
    note that joined without matching the words) and relevance signal; which are strong hits
    (``seeds``, for graph proximity) and which lend episode context (``lenders``); the link
    edges between them (``sources[i]`` → ``targets[i]``) and the episode neighbours."""

    rows: list[tuple[object, ...]]
    paths: list[str]
    bm25: list[float]
    relevance: list[float]
    seeds: list[bool]
    lenders: list[bool]
    sources: list[int]
    targets: list[int]
    context: Episodes


class Signals(NamedTuple):
    """Step 2, per candidate: decay score and review priority, the decay, graph-proximity and
    vector signals (``vector``/``cosine`` ``None`` without vectors), and the lifts."""

    score: list[float]
    priority: list[float]
    decays: list[bool]
    decay: list[float]
    proximity: Proximity
    cosine: list[float] | None
    vector: list[float] | None
    episode_lift: list[float]
    episode_via: list[int]
    time_lift: list[float]
    date_lift: list[float]


def rank(
    vault: VaultContext, terms: Sequence[str], filters: RecallFilters, weights: FusionWeights,
    k: int, now: dt.datetime, semantic: SemanticQuery | None = None, when: bool = False,
    dates: tuple[Window, ...] = (),
) -> list[Hit]:
    """Candidates → signals → fusion → page: the best ``k`` hits. ``when``: the query asks for
    a time (candidates mentioning one are lifted, :mod:`vaultmem.core.recall.recall_time`);
    ``dates``: the windows of the dates it names (notes created inside join the candidates and
    are lifted, :mod:`vaultmem.core.recall.recall_dates`)."""
    fusing = weights.relevance > 0 and any(
        (weights.decay, weights.graph, weights.episode, weights.vector))
    dates = dates if fusing else ()
    found = gather(vault, terms, filters, weights, k, semantic, dates)
    if found is None:
        return []
    measured = signals(vault, found, weights, now, semantic, when=when and fusing, dates=dates)
    fused = fusion(vault.index.conn, found, measured, weights)
    return page(vault, found, measured, fused, weights, k, semantic)


def gather(
    vault: VaultContext, terms: Sequence[str], filters: RecallFilters, weights: FusionWeights,
    k: int, semantic: SemanticQuery | None, dates: tuple[Window, ...],
) -> Candidates | None:
    """Step 1, the candidates; ``None`` when there are none."""
    conn = vault.index.conn
    rows, bm25_values = (
        fts_candidates(conn, terms, filters, max(CANDIDATES, k)) if terms else ([], [])
    )
    if semantic is not None:  # the query's nearest notes join the candidates
        known = {str(row[0]) for row in rows}
        size = max(vault.settings.embeddings.vector_candidates, k)
        floor = vault.settings.embeddings.vector_floor
        wanted = [p for p, cos in semantic.nearest(size + len(known))
                  if p not in known and cos > floor][:size]
        where, params = filters.sql()
        near = rows_at(conn, wanted, where, params) if wanted else []
        rows = [*rows, *near]
        bm25_values = [*bm25_values, *([0.0] * len(near))]
    if dates:  # the notes created when the query says
        dated, dated_bm25 = dated_candidates(
            conn, terms, filters, dates, {str(row[0]) for row in rows}, DATE_CANDIDATES,
            semantic.cosine_of if semantic is not None else None)
        rows = [*rows, *dated]
        bm25_values = [*bm25_values, *dated_bm25]
    if not rows:
        return None
    paths = [str(row[0]) for row in rows]
    relevance = relevance_signal(bm25_values)
    sources: list[int] = []
    targets: list[int] = []
    if weights.graph > 0:
        extra, sources, targets = graph_candidates(conn, filters, paths, relevance)
        rows += extra
        paths += [str(row[0]) for row in extra]
        relevance += [0.0] * len(extra)
    seeds = strong_hits(relevance, paths)
    context = Episodes([], [])
    lenders = seeds
    if weights.episode > 0:
        lenders = strong_hits(relevance, paths, EPISODE_SEEDS)
        context = episode_neighbours(conn, filters, paths, lenders)
        rows += context.extra
        paths += [str(row[0]) for row in context.extra]
        relevance += [0.0] * len(context.extra)
        seeds += [False] * len(context.extra)
        lenders += [False] * len(context.extra)
    bm25 = [*bm25_values, *([0.0] * (len(paths) - len(bm25_values)))]
    return Candidates(rows, paths, bm25, relevance, seeds, lenders, sources, targets, context)


def signals(
    vault: VaultContext, found: Candidates, weights: FusionWeights, now: dt.datetime,
    semantic: SemanticQuery | None, *, when: bool, dates: tuple[Window, ...],
) -> Signals:
    """Step 2, the signals of every candidate of ``found``."""
    rows, paths, relevance = found.rows, found.paths, found.relevance
    kinds = [row[_TYPE] for row in rows]
    statuses = [row[_STATUS] for row in rows]
    scored = row_scores(rows, now.timestamp(), vault.settings)
    score = [s for s, _ in scored]
    decays = [kind == "memory" for kind in kinds]
    priority = [p if d and st == "active" else 0.0
                for (_, p), d, st in zip(scored, decays, statuses, strict=True)]
    ratio = weights.relevance / weights.decay if weights.decay > 0 else math.inf
    forget = vault.settings.thresholds.forget
    alive = [d and s >= forget for d, s in zip(decays, score, strict=True)]
    decay = plain_note_decay(decay_signal(score, decays), alive, relevance, ratio,
                             plain=[not d for d in decays], relevant=STRONG_HIT)
    proximity = graph_signal(relevance, found.seeds, found.sources, found.targets)
    cosine = [float(c) for c in semantic.cosine_of(paths)] if semantic is not None else None
    vector = None
    if semantic is not None and cosine is not None:
        tuning = vault.settings.embeddings
        # vectors alone (relevance weight 0): no BM25 order to protect, the full signal
        keywords = weights.relevance > 0
        agreement = keyword_agreement(cosine, relevance, semantic.top) if keywords else 0.0
        vector = matched_share(
            vector_signal(cosine, semantic.top, tuning.vector_floor),
            [b != 0.0 for b in found.bm25],
            tuning.matched_vector_share if keywords else 1.0,
            unmatched_share(agreement, tuning.agreement_damping, tuning.agreement_start))
    index = {p: i for i, p in enumerate(paths)}
    pairs = [(index[h], index[j], before) for h, j, before in found.context.pairs
             if h in index and j in index]
    episode, episode_via = episode_signal(
        relevance, found.lenders, [p[0] for p in pairs], [p[1] for p in pairs],
        [p[2] for p in pairs]
    )
    episode_lift = episode_contribution(episode, relevance, weights.episode)
    time_lift = [0.0] * len(paths)
    if when:  # a question asking when: memories that say when (pure BM25 keeps BM25's order)
        texts = _bodies(vault.index.conn, paths)
        time_lift = [TIME_LIFT if mentions_time(texts.get(p, "")) else 0.0 for p in paths]
    date_lift = [DATE_LIFT if dates and created_within(_timestamp(row[_CREATED]), dates)
                 else 0.0 for row in rows]
    return Signals(score, priority, decays, decay, proximity, cosine, vector, episode_lift,
                   [int(v) for v in episode_via], time_lift, date_lift)


def fusion(
    conn: sqlite3.Connection, found: Candidates, measured: Signals, weights: FusionWeights
) -> Fused:
    """Step 3, the fused score of every candidate: the weighted signals plus the lifts (shown
    in the graph part), a superseded memory capped below its successor."""
    lift = [e + t + d for e, t, d in zip(
        measured.episode_lift, measured.time_lift, measured.date_lift, strict=True)]
    fused = fuse(found.relevance, measured.decay, measured.proximity.signal, weights,
                 measured.vector)
    fused = fused._replace(graph=[g + x for g, x in zip(fused.graph, lift, strict=True)],
                           score=[s + x for s, x in zip(fused.score, lift, strict=True)])
    statuses = [row[_STATUS] for row in found.rows]
    index = {p: i for i, p in enumerate(found.paths)}
    capped = cap_superseded(fused.score, successors(conn, found.paths, statuses, index))
    return fused._replace(score=capped)


def page(
    vault: VaultContext, found: Candidates, measured: Signals, fused: Fused,
    weights: FusionWeights, k: int, semantic: SemanticQuery | None,
) -> list[Hit]:
    """Step 4, the page: the ``k`` best by fused score with near-duplicates of a better hit held
    back, review slots blended in, each a :class:`Hit` with its signals and text."""
    conn, rows, paths = vault.index.conn, found.rows, found.paths
    primary, held = _spread(conn, ranking(fused.score, paths), paths, k, semantic,
                            vault.settings.embeddings.near_duplicate)
    priority, relevance = measured.priority, found.relevance
    due = [i for i in primary if priority[i] > 0 and relevance[i] >= REVIEW_MIN_RELEVANCE
           and i not in held]
    due.sort(key=lambda i: -priority[i])  # stable: equal priorities keep the fused order
    chosen = list(blend_results(primary, due, k, weights.review_blend, fused.score,
                                 REVIEW_CLOSENESS))
    bodies = _bodies(conn, [paths[i] for i, _ in chosen])
    proximity, vector, cosine = measured.proximity, measured.vector, measured.cosine
    hits: list[Hit] = []
    for place, (i, by_review) in enumerate(chosen, 1):
        lifted = measured.episode_lift[i] > 0
        via = measured.episode_via[i] if lifted else int(proximity.via[i])
        hits.append(Hit(
            rank=place, path=paths[i],
            id=cast("str | None", rows[i][_ID]) if rows[i][_TYPE] in MANAGED_TYPES else None,
            title=title_of(paths[i]), score=float(fused.score[i]),
            relevance=float(fused.relevance[i]), decay=float(fused.decay[i]),
            graph=float(fused.graph[i]), review=by_review,
            signals=HitSignals(
                relevance=float(relevance[i]), decay=float(measured.decay[i]),
                graph=float(proximity.signal[i]), bm25=float(found.bm25[i]),
                decay_score=float(measured.score[i]) if measured.decays[i] else None,
                review_priority=float(priority[i]),
                linked_to=title_of(paths[via]) if via >= 0 else None,
                vector=float(vector[i]) if vector is not None else 0.0,
                cosine=_finite(cosine[i]) if cosine is not None else None,
                time=measured.time_lift[i], date=measured.date_lift[i],
            ),
            text=capped_text(bodies.get(paths[i], "")),
            vector=float(fused.vector[i]) if fused.vector is not None else 0.0,
        ))
    return hits


def _spread(
    conn: sqlite3.Connection, order: list[int], paths: Sequence[str], k: int,
    semantic: SemanticQuery | None, near_cosine: float,
) -> Spread:
    """``order`` with near-duplicates of a better hit behind the first ``k`` distinct ones
    (:mod:`vaultmem.core.recall.recall_diversity`): their words (title and body) from the index,
    their vectors' cosine when both have one."""
    window = order[: DIVERSITY_WINDOW * k]
    bodies = _bodies(conn, [paths[i] for i in window])
    words = {i: content_tokens(f"{title_of(paths[i])} {bodies.get(paths[i], '')}")
             for i in window}
    empty: frozenset[str] = frozenset()
    cosine = None
    if semantic is not None:
        found = semantic

        def cosine(i: int, j: int) -> float | None:
            return found.cosine_between(paths[i], paths[j])

    return spread_near_duplicates(order, k, lambda i: words.get(i, empty), cosine, near_cosine)


def _bodies(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, str]:
    """The indexed body of each note at ``paths`` (from the FTS table: no file is read)."""
    if not paths:
        return {}
    marks = ", ".join("?" * len(paths))
    rows = conn.execute(
        f"SELECT n.path, f.body FROM notes n JOIN notes_fts f ON f.rowid = n.nid "
        f"WHERE n.path IN ({marks})",
        tuple(paths),
    )
    return {str(path): str(body or "") for path, body in rows}


def _timestamp(value: object) -> float | None:
    """An index ``created`` cell as POSIX seconds (``None`` when absent or not a number)."""
    return float(value) if isinstance(value, int | float) else None


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None
