"""Recall: notes ranked for a query by BM25, decay, graph proximity, review blend ("Recall").

See docs/user-guide.md, "Recall". :func:`recall_notes` is ``Vault.recall``; :func:`review_queue`
is ``Vault.review``. :func:`recall_notes` reads the query, its words and filters here; the ranking
runs top to bottom in :func:`~vaultmem.services.recall.ranking.rank` (candidates → signals →
fusion → page). What happens:

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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vaultmem.core.recall.recall_dates import dates_asked
from vaultmem.core.recall.recall_fusion import FusionWeights, Hit, HitSignals
from vaultmem.core.recall.recall_time import asks_when
from vaultmem.core.recall.text_tokens import query_terms
from vaultmem.core.scoring.reinforcement import touch_changes
from vaultmem.errors import InputError, UnsafeNoteError
from vaultmem.services.index.template_folders import template_folders
from vaultmem.services.recall.ranking import rank
from vaultmem.services.recall.recall_filters import SCAFFOLDING_WORDS, RecallFilters

if TYPE_CHECKING:  # embeddings (numpy) load only when a provider is configured
    from vaultmem.services.memories.memory_view import MemoryRow
    from vaultmem.services.vault_context import VaultContext

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
    ``text``. A query with no words (only punctuation) returns ``[]`` (without embeddings).
    Raises :class:`InputError`, before anything is read, for a query that is not text or is
    empty or blank, unknown options and bad values (:meth:`RecallFilters.from_options`).
    """
    if not isinstance(query, str):
        raise InputError(f"the query must be text, not {query!r}")
    if not query.strip():
        raise InputError(f"empty query {query!r}: give a few words to look for")
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise InputError(f"unknown recall option {unknown[0]!r}; known: {', '.join(_OPTIONS)}")
    _check_touch(options.get("touch"))
    k = _checked_k(vault, k)
    weights = recall_weights(vault, options.get("weights"))
    terms = query_terms(query)
    filters = RecallFilters.from_options(
        options, template_folders(vault.root), asks_for_scaffolding=_asks_for_scaffolding(terms),
        root=vault.root,
    )
    if options.get("sync", True):
        vault.catch_up()
    semantic = None
    if weights.vector > 0 and query.strip() and vault.settings.embeddings.enabled:
        from vaultmem.services.semantic.embeddings import semantic_query

        semantic = semantic_query(vault, query)
    if not terms and semantic is None:
        return []
    hits = rank(vault, terms, filters, weights, k, now, semantic, asks_when(query),
                dates_asked(query, now))
    _warn_wrong_types(vault, [hit.path for hit in hits])
    touch = options.get("touch")
    if touch:
        chosen = touched_hits(hits, touch)
        for hit in chosen:  # as Vault.touch refuses one: it would stay in the archive
            row = vault.index.note_row(hit.path) or {}
            if row.get("status") == "archived":
                raise InputError(
                    f"--touch: {hit.path} is archived; nothing touched (name another hit "
                    "with --touch-hit)"
                )
        _touch(vault, chosen, now)
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


def _check_touch(touch: object) -> None:
    """Raise :class:`InputError` for a ``touch`` that names no hit (nothing is touched
    silently): accepted are ``True`` (the first memory), ``False``/``None`` (none), a rank from
    1, an id, title or path, or a non-empty list of them."""
    if touch is None or isinstance(touch, bool):
        return
    items = touch if isinstance(touch, list | tuple) else [touch]
    if not items:
        raise InputError("touch: an empty list names no hit; give ranks, ids or titles")
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int | str):
            raise InputError(f"touch: {item!r} is not a rank, id or title")
        if (item < 1) if isinstance(item, int) else not item.strip():
            raise InputError(f"touch: {item!r} names no hit (ranks start at 1)")


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
