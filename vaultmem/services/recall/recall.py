"""Recall: notes ranked for a query by BM25, decay, graph proximity, review blend ("Recall").

See docs/user-guide.md, "Recall". :func:`recall_notes` is ``Vault.recall``; :func:`review_queue`
is ``Vault.review``. Steps:

1. **Words.** The query is cut into words (:func:`~vaultmem.core.recall.text_tokens.query_terms`)
   and each word is quoted for FTS5, so no query is ever FTS5 syntax (quotes, ``-``, ``:``, ``*``,
   ``NEAR(`` are searched as text; a query without words returns nothing).
2. **Candidates** from ``notes_fts`` (porter stemming, diacritics folded), ranked by
   ``bm25(notes_fts, 5, 1, 3)`` (title, body, tags) under a row budget
   (:mod:`vaultmem.services.recall.recall_candidates`). ``benchmarks.scenarios recall`` (generated
   vaults, index current): p95 ≈ 6 ms at 11,000 notes, 14–17 ms at 110,000.
3. **Signals**: decay scores and review priorities of the candidates
   (:func:`~vaultmem.core.scoring.float_scores.row_scores`, the formulas of ``list`` and the
   passes, in Python floats: recall starts without numpy); graph proximity from the resolved links
   of the strong hits (either direction); linked notes that did not match the words, and episode
   neighbours, join as candidates (:mod:`vaultmem.services.recall.recall_neighbours`) — Mnemon's
   graph traversal.
4. **Fusion, near-duplicates and review blending** (:mod:`vaultmem.core.recall.recall_fusion`;
   Mnemon, Mnemex): near-duplicates of a better hit move behind the distinct hits
   (:mod:`vaultmem.core.recall.recall_diversity`); a query asking *when* lifts the notes that
   mention a time (:mod:`vaultmem.core.recall.recall_time`); a review slot goes to a danger-zone
   memory only when its score is within :data:`~vaultmem.core.recall.recall_fusion.REVIEW_CLOSENESS`
   of the hit it displaces.
5. **Vectors** (only when ``[embeddings]`` names a provider and notes have vectors;
   :mod:`vaultmem.services.semantic.embeddings`): the query's nearest notes join the candidates and
   every candidate gets the vector signal of :mod:`vaultmem.core.recall.vector_fusion`. Without a
   provider this step does nothing and recall is keyword-based as above.

Measured with ``python -m benchmarks.recall_eval`` (206 questions over the SRD and kepano
vaults and imported memories; recall@1/5/10, MRR): keyword-only 0.563/0.874/0.917/0.696, full
fusion with the default weights 0.650/0.908/0.927/0.746.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import sqlite3
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

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
    dates_asked,
)
from vaultmem.core.recall.recall_diversity import Spread, spread_near_duplicates
from vaultmem.core.recall.recall_fusion import (
    REVIEW_CLOSENESS,
    REVIEW_MIN_RELEVANCE,
    STRONG_HIT,
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
from vaultmem.core.recall.recall_time import TIME_LIFT, asks_when, mentions_time
from vaultmem.core.recall.text_tokens import content_tokens, query_terms
from vaultmem.core.recall.vector_fusion import (
    keyword_agreement,
    matched_share,
    unmatched_share,
    vector_signal,
)
from vaultmem.core.scoring.float_scores import row_scores
from vaultmem.core.scoring.reinforcement import touch_changes
from vaultmem.core.scoring.score_formulas import COLUMN_ORDER
from vaultmem.errors import InputError, UnsafeNoteError
from vaultmem.services.index.template_folders import template_folders
from vaultmem.services.recall.recall_candidates import (
    CANDIDATES,
    dated_candidates,
    fts_candidates,
    rows_at,
)
from vaultmem.services.recall.recall_filters import (
    SCAFFOLDING_WORDS,
    RecallFilters,
)
from vaultmem.services.recall.recall_neighbours import (
    Episodes,
    episode_neighbours,
    graph_candidates,
    successors,
)

if TYPE_CHECKING:  # embeddings (numpy) load only when a provider is configured
    from vaultmem.services.memories.memory_view import MemoryRow
    from vaultmem.services.semantic.embeddings import SemanticQuery
    from vaultmem.services.vault_context import VaultContext

_ID, _TYPE, _STATUS, _CREATED = (
    COLUMN_ORDER.index(name) for name in ("id", "type", "status", "created"))
_OPTIONS = ("status", "layer", "tag", "folder", "since", "include_archived", "weights", "touch",
            "sync", "include_superseded", "include_notes", "kind")


def _asks_for_scaffolding(terms: Sequence[str]) -> bool:
    return any(t.lower() in SCAFFOLDING_WORDS for t in terms)


def _checked_k(vault: VaultContext, k: object) -> int:
    """``k`` (default ``[recall] k``); raises :class:`InputError` unless a whole number ≥ 1."""
    value = vault.settings.recall.k if k is None else k
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"k must be a whole number ≥ 1, not {value!r}")
    return value


def recall_weights(
    vault: VaultContext, overrides: Mapping[str, float] | None = None
) -> FusionWeights:
    """The vault's ``[recall]`` weights with ``overrides``; raises :class:`InputError`."""
    try:
        return FusionWeights.from_settings(
            vault.settings.recall, vault.settings.embeddings.weight_vector
        ).with_overrides(overrides)
    except ValueError as err:
        raise InputError(str(err)) from None


def recall_notes(
    vault: VaultContext, query: str, *, k: int | None, now: dt.datetime, **options: Any
) -> list[Hit]:
    """The ``k`` best notes for ``query`` at ``now`` (docs/user-guide.md, "Recall"), best first.

    ``options``: the filters of :class:`RecallFilters`; ``weights`` (a mapping overriding
    ``relevance``, ``decay``, ``graph``, ``review_blend``, ``episode``, ``vector``); ``touch``
    (reinforce the returned memories, "Scores"); ``sync`` (default True: bring the index up to
    date first unless a live watcher keeps it fresh — ``vault.catch_up()``; False: use the index
    as it is). ``k`` defaults to ``[recall] k`` (10). Each hit carries its note's body as
    ``text``. A query with no words returns ``[]`` (without embeddings). Raises
    :class:`InputError` for unknown options or bad values.
    """
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise InputError(f"unknown recall option {unknown[0]!r}; known: {', '.join(_OPTIONS)}")
    k = _checked_k(vault, k)
    weights = recall_weights(vault, options.get("weights"))
    terms = query_terms(query)
    filters = RecallFilters.from_options(
        options, template_folders(vault.root), asks_for_scaffolding=_asks_for_scaffolding(terms)
    )
    if options.get("sync", True):
        vault.catch_up()
    semantic = None
    if weights.vector > 0 and query.strip() and vault.settings.embeddings.enabled:
        from vaultmem.services.semantic.embeddings import semantic_query

        semantic = semantic_query(vault, query)
    if not terms and semantic is None:
        return []
    hits = _rank(vault, terms, filters, weights, k, now, semantic, asks_when(query),
                 dates_asked(query, now))
    _warn_wrong_types(vault, [hit.path for hit in hits])
    touch = options.get("touch")
    if touch:
        _touch(vault, touched_hits(hits, touch), now)
    return hits


def _warn_wrong_types(vault: VaultContext, paths: Sequence[str]) -> None:
    """Add the index's field warnings of ``paths`` to ``vault.warnings`` (one line per note and
    key: the CLI prints each once)."""
    if not paths:
        return
    marks = ", ".join("?" * len(paths))
    rows = vault.index.conn.execute(
        f"SELECT path, warnings FROM notes WHERE path IN ({marks}) AND warnings != '[]' "
        "ORDER BY path", tuple(paths),
    )
    for path, text in rows:
        vault.warnings.extend(line for w in json.loads(text)
                              if (line := f"{path}: {w}") not in vault.warnings)


def touched_hits(hits: Sequence[Hit], touch: object) -> list[Hit]:
    """The hits ``recall --touch`` reinforces: ``True`` = the first memory among ``hits``; an int
    or a list of ranks (from 1), ids, titles or paths = those hits.

    Raises :class:`InputError` naming a rank or name that is not among ``hits`` (nothing is
    touched then).
    """
    memories = [hit for hit in hits if hit.signals.decay_score is not None]
    if touch is True:
        return memories[:1]
    wanted = touch if isinstance(touch, list | tuple) else [touch]
    chosen: list[Hit] = []
    for item in wanted:
        found = None
        if isinstance(item, int) and not isinstance(item, bool):
            found = next((h for h in hits if h.rank == item), None)
        elif isinstance(item, str):
            key = item.strip().lower()
            if key.isdigit():
                found = next((h for h in hits if h.rank == int(key)), None)
            found = found or next(
                (h for h in hits if key in {str(h.id).lower(), h.title.lower(), h.path.lower()}),
                None,
            )
        if found is None:
            raise InputError(f"--touch {item!r} is not among the {len(hits)} hits; nothing touched")
        if found.signals.decay_score is None:
            raise InputError(f"--touch {item!r}: {found.path} is not a memory; nothing touched")
        if found not in chosen:
            chosen.append(found)
    return chosen


def _touch(vault: VaultContext, hits: Sequence[Hit], now: dt.datetime) -> None:
    """Reinforce ``hits`` (``recall --touch``, "Recall"), chosen by :func:`touched_hits`.

    Goes straight to :meth:`Vault.edit` with the paths recall already resolved (``Vault.touch``
    would sync the whole index once per hit). A memory vaultmem must not write (conflict
    markers, unparsable YAML) is skipped with a warning in ``vault.warnings``.
    """
    for hit in hits:
        if hit.signals.decay_score is None:
            continue
        try:
            vault.edit(hit.path, lambda fields: touch_changes(fields, now), now=now)
        except UnsafeNoteError as err:
            vault.warnings.append(f"not reinforced: {err}")


def _rank(
    vault: VaultContext, terms: Sequence[str], filters: RecallFilters, weights: FusionWeights,
    k: int, now: dt.datetime, semantic: SemanticQuery | None = None, when: bool = False,
    dates: tuple[Window, ...] = (),
) -> list[Hit]:
    """Candidates → signals → fused order → blended top ``k`` as :class:`Hit` objects; ``when``:
    the query asks for a time (candidates mentioning one are lifted, :mod:`recall_time`);
    ``dates``: the windows of the dates it names (notes created inside join the candidates and
    are lifted, :mod:`recall_dates`)."""
    conn = vault.index.conn
    fusing = weights.relevance > 0 and any(
        (weights.decay, weights.graph, weights.episode, weights.vector))
    dates = dates if fusing else ()
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
        return []
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
    kinds = [row[_TYPE] for row in rows]
    statuses = [row[_STATUS] for row in rows]
    scored = row_scores(rows, now.timestamp(), vault.settings)
    score = [s for s, _ in scored]
    decays = [kind == "memory" for kind in kinds]
    ratio = weights.relevance / weights.decay if weights.decay > 0 else math.inf
    forget = vault.settings.thresholds.forget
    alive = [d and s >= forget for d, s in zip(decays, score, strict=True)]
    decay = plain_note_decay(decay_signal(score, decays), alive, relevance, ratio,
                             plain=[not d for d in decays], relevant=STRONG_HIT)
    proximity = graph_signal(relevance, seeds, sources, targets)
    cosine = [float(c) for c in semantic.cosine_of(paths)] if semantic is not None else None
    vector = None
    if semantic is not None and cosine is not None:
        tuning = vault.settings.embeddings
        # vectors alone (relevance weight 0): no BM25 order to protect, the full signal
        keywords = weights.relevance > 0
        agreement = keyword_agreement(cosine, relevance, semantic.top) if keywords else 0.0
        vector = matched_share(
            vector_signal(cosine, semantic.top, tuning.vector_floor),
            [b != 0.0 for b in bm25],
            tuning.matched_vector_share if keywords else 1.0,
            unmatched_share(agreement, tuning.agreement_damping, tuning.agreement_start))
    index = {p: i for i, p in enumerate(paths)}
    pairs = [(index[h], index[j], before) for h, j, before in context.pairs
             if h in index and j in index]
    episode, episode_via = episode_signal(
        relevance, lenders, [p[0] for p in pairs], [p[1] for p in pairs], [p[2] for p in pairs]
    )
    episode_lift = episode_contribution(episode, relevance, weights.episode)
    time_lift = [0.0] * len(paths)
    # a question asking when: memories that say when (pure BM25 keeps BM25's order)
    if when and fusing:
        texts = _bodies(conn, paths)
        time_lift = [TIME_LIFT if mentions_time(texts.get(p, "")) else 0.0 for p in paths]
    date_lift = [DATE_LIFT if dates and created_within(_timestamp(row[_CREATED]), dates)
                 else 0.0 for row in rows]
    lift = [e + t + d for e, t, d in zip(episode_lift, time_lift, date_lift, strict=True)]
    fused = fuse(relevance, decay, proximity.signal, weights, vector)
    fused = fused._replace(graph=[g + x for g, x in zip(fused.graph, lift, strict=True)],
                    score=[s + x for s, x in zip(fused.score, lift, strict=True)])
    capped = cap_superseded(fused.score, successors(conn, paths, statuses, index))
    fused = fused._replace(score=capped)
    priority = [p if d and st == "active" else 0.0
                for (_, p), d, st in zip(scored, decays, statuses, strict=True)]
    primary, held = _spread(conn, ranking(fused.score, paths), paths, k, semantic,
                            vault.settings.embeddings.near_duplicate)
    due = [i for i in primary if priority[i] > 0 and relevance[i] >= REVIEW_MIN_RELEVANCE
           and i not in held]
    due.sort(key=lambda i: -priority[i])  # stable: equal priorities keep the fused order
    hits: list[Hit] = []
    chosen = list(blend_results(primary, due, k, weights.review_blend, fused.score,
                                 REVIEW_CLOSENESS))
    bodies = _bodies(conn, [paths[i] for i, _ in chosen])
    for rank, (i, by_review) in enumerate(chosen, 1):
        via = int(episode_via[i]) if episode_lift[i] > 0 else int(proximity.via[i])
        hits.append(Hit(
            rank=rank, path=paths[i],
            id=cast("str | None", rows[i][_ID]) if kinds[i] in MANAGED_TYPES else None,
            title=title_of(paths[i]), score=float(fused.score[i]),
            relevance=float(fused.relevance[i]), decay=float(fused.decay[i]),
            graph=float(fused.graph[i]), review=by_review,
            signals=HitSignals(
                relevance=float(relevance[i]), decay=float(decay[i]),
                graph=float(proximity.signal[i]), bm25=float(bm25[i]),
                decay_score=float(score[i]) if decays[i] else None,
                review_priority=float(priority[i]),
                linked_to=title_of(paths[via]) if via >= 0 else None,
                vector=float(vector[i]) if vector is not None else 0.0,
                cosine=_finite(cosine[i]) if cosine is not None else None,
                time=time_lift[i], date=date_lift[i],
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


DIVERSITY_WINDOW = 3
"""Near-duplicates are looked for among the first ``DIVERSITY_WINDOW × k`` candidates."""


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


def review_queue(vault: VaultContext, *, k: int | None, now: dt.datetime) -> list[MemoryRow]:
    """Active memories in the danger zone, highest review priority first (Mnemex; "Scores").

    Priority = 1 − 4(x − 0.5)² for x the decay score's position inside ``[thresholds]``
    ``danger_zone_min``..``danger_zone_max``; memories outside the zone are not listed. Ties by
    path. ``k`` defaults to ``[recall] k``; raises :class:`InputError` for ``k < 1``.
    """
    import numpy as np

    from vaultmem.services.memories.memory_view import rows_of

    k = _checked_k(vault, k)
    table = vault.table(now=now, where="n.type = 'memory' AND n.status = 'active'")
    priority = table.scores.review_priority
    due = np.flatnonzero(priority > 0)
    paths = table.columns.path[due].astype(str)
    order = due[np.lexsort((paths, -priority[due]))][:k]
    return rows_of(table, order, vault.index)



__all__ = ["Hit", "HitSignals", "RecallFilters", "recall_notes", "recall_weights", "review_queue"]
