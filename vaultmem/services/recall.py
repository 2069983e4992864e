"""Recall: notes ranked for a query by BM25, decay, graph proximity, review blend ("Recall").

See docs/user-guide.md, "Recall". :func:`recall_notes` is ``Vault.recall``; :func:`review_queue`
is ``Vault.review``. Steps:

1. **Words.** The query is cut into words (:func:`~vaultmem.core.text_tokens.query_terms`) and
   each word is quoted for FTS5, so no query is ever FTS5 syntax (quotes, ``-``, ``:``, ``*``,
   ``NEAR(`` are searched as text; a query without words returns nothing).
2. **Candidates** from ``notes_fts`` (porter stemming, diacritics folded), ranked by
   ``bm25(notes_fts, 5, 1, 3)`` (title, body, tags); the best :data:`CANDIDATES` are kept. BM25
   costs about a microsecond per matching row and FTS5 cannot stop early, so at most
   :data:`SCORE_BUDGET` rows are ranked (target: p95 ≤ 20 ms at 100,000 notes); when the
   words match more, the commonest words stop selecting rows (see :func:`_scored_matches`).
   Only the top rows are then looked up in ``notes`` (fields, filters). ``benchmarks.scenarios
   recall`` (generated vaults, index current): p95 ≈ 6 ms at 11,000 notes, 14–17 ms at 110,000.
3. **Signals**: decay scores and review priorities in one numpy pass
   (:func:`~vaultmem.core.scoring.score_columns`); graph proximity from the resolved links of the
   strong hits (either direction); linked notes that did not match the words join as candidates
   (at most :data:`EXPAND_MAX`, filters applied) — Mnemon's graph traversal.
4. **Fusion and review blending** (:mod:`vaultmem.core.recall_fusion`; Mnemon, Mnemex).
5. **Vectors** (only when ``[embeddings]`` names a provider and notes have vectors;
   :mod:`vaultmem.services.embeddings`): the query's nearest notes join the candidates and every
   candidate gets the vector signal of :mod:`vaultmem.core.vector_fusion`. Without a provider
   this step does nothing and recall is keyword-based as above.

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
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from vaultmem.core.excerpts import capped_text
from vaultmem.core.fields import LAYERS, MANAGED_TYPES, STATUSES
from vaultmem.core.note_parse import title_of
from vaultmem.core.recall_context import (
    cap_superseded,
    episode_contribution,
    episode_signal,
    plain_note_decay,
)
from vaultmem.core.recall_fusion import (
    REVIEW_MIN_RELEVANCE,
    STRONG_HIT,
    UNRANKED_BM25,
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
from vaultmem.core.reinforcement import touch_changes
from vaultmem.core.scoring import COLUMN_ORDER, MemoryColumns, score_columns
from vaultmem.core.text_tokens import (
    STOPWORDS,
    fts_all,
    fts_any,
    fts_in_columns,
    fts_string,
    query_terms,
)
from vaultmem.core.timestamps import parse_datetime
from vaultmem.core.vector_fusion import matched_share, vector_signal
from vaultmem.errors import InputError, UnsafeNoteError
from vaultmem.services.embeddings import SemanticQuery, semantic_query
from vaultmem.services.index_sync import templates_folder
from vaultmem.services.memory_view import MemoryRow, rows_of

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext

BM25_WEIGHTS = (5.0, 1.0, 3.0)
"""``bm25(notes_fts, title, body, tags)`` column weights: a word in the title counts 5×."""
CANDIDATES = 60
"""At most this many FTS rows (best BM25 first) are fused and ranked (the eval is the same from
40 to 200; fewer rows to look up is faster)."""
SCORE_BUDGET = 800
"""At most this many matching rows are scored by BM25 per query (see the module docstring)."""
OVERSAMPLE = 1.5
"""Without narrowing filters, this many times the needed rows are ranked before the archive rule."""
MIN_MATCHES = 20
"""A narrower expression is used only when it still matches this many rows."""
COMMON_WORDS_MAX = 3
"""When every word of a query is too common for the budget, only this many are searched."""
EXPAND_MAX = 20
"""At most this many linked notes that did not match the words join the candidates."""
_LINK_ROWS_MAX = 2000

_MANAGED_SQL = "COALESCE(n.type, '') IN (" + ", ".join(f"'{t}'" for t in MANAGED_TYPES) + ")"
_COLUMNS_SQL = ", ".join(f"n.{c}" for c in COLUMN_ORDER if c != "edges") + ", 0"
_OPTIONS = ("status", "layer", "tag", "folder", "since", "include_archived", "weights", "touch",
            "sync", "include_superseded", "include_notes", "kind")
KINDS = ("memory", "note", "box", "trace", "template")
"""``kind`` filter values: vaultmem's memories, a person's own notes, boxes, traces, and the
scaffolding notes (templates and the dashboard)."""
DASHBOARD = "Memory dashboard.md"
"""vaultmem's dashboard note (vault-relative path), scaffolding rather than knowledge."""
DEFAULT_TEMPLATES = "Templates"
"""vaultmem's own template folder; Obsidian's (``.obsidian/templates.json``) counts too."""


@dataclass(frozen=True, slots=True)
class RecallFilters:
    """Which notes recall may return ("Recall"). ``status``/``layer`` select managed notes only.

    ``tag`` matches the tag or a nested one (``project`` matches ``project/alpha``), case-
    insensitively; ``folder`` a vault folder prefix; ``since`` notes used or created at or after
    it. Archived memories are left out unless ``include_archived`` (or ``status="archived"``),
    superseded ones unless ``include_superseded`` (or ``status="superseded"``). Scaffolding —
    box and trace notes, templates (``templates`` folders) and the dashboard — never takes a
    slot unless ``include_notes`` or a ``kind`` (one of :data:`KINDS`) asks for it; templates
    and the dashboard also compete when the query names them (``asks_for_scaffolding``: a word
    of :data:`SCAFFOLDING_WORDS`). A person's own notes are always searchable.
    """

    status: str | None = None
    layer: str | None = None
    tag: str | None = None
    folder: str | None = None
    since: dt.datetime | None = None
    include_archived: bool = False
    include_superseded: bool = False
    include_notes: bool = False
    kind: str | None = None
    templates: tuple[str, ...] = (DEFAULT_TEMPLATES,)
    asks_for_scaffolding: bool = False

    @classmethod
    def from_options(
        cls, options: Mapping[str, Any], templates: tuple[str, ...] = (DEFAULT_TEMPLATES,),
        *, asks_for_scaffolding: bool = False,
    ) -> RecallFilters:
        """Validate ``recall``'s filter options; raises :class:`InputError`."""
        status, layer = options.get("status"), options.get("layer")
        if status is not None and status not in STATUSES:
            raise InputError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        if layer is not None and layer not in LAYERS:
            raise InputError(f"layer must be one of {', '.join(LAYERS)}, not {layer!r}")
        kind = options.get("kind")
        if kind is not None and kind not in KINDS:
            raise InputError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        since = options.get("since")
        if since is not None:
            try:
                since = parse_datetime(since)
            except ValueError:
                raise InputError(f"since is not a datetime: {since!r}") from None
        tag = options.get("tag")
        tag = str(tag).strip().lstrip("#") or None if tag is not None else None
        folder = options.get("folder")
        folder = str(folder).strip().strip("/") or None if folder is not None else None
        return cls(status=status, layer=layer, tag=tag, folder=folder, since=since,
                   include_archived=bool(options.get("include_archived", False)),
                   include_superseded=bool(options.get("include_superseded", False)),
                   include_notes=bool(options.get("include_notes", False)), kind=kind,
                   templates=templates, asks_for_scaffolding=asks_for_scaffolding)

    @property
    def narrows(self) -> bool:
        """True when a filter besides the archive and scaffolding rules is set."""
        return any(v is not None for v in (self.status, self.layer, self.tag, self.folder,
                                           self.since, self.kind))

    def _template_sql(self) -> tuple[str, list[object]]:
        """Condition over ``notes n``: a template or the dashboard."""
        clauses = ["n.path = ?"]
        params: list[object] = [DASHBOARD]
        for folder in self.templates:
            prefix = folder + "/"
            clauses.append("substr(n.path, 1, ?) = ?")
            params += [len(prefix), prefix]
        return " OR ".join(clauses), params

    def sql(self) -> tuple[str, list[object]]:
        """A condition over ``notes n`` and its parameters."""
        clauses: list[str] = []
        params: list[object] = []
        if not self.include_archived and self.status != "archived":
            clauses.append(f"NOT ({_MANAGED_SQL} AND n.status = 'archived')")
        if not self.include_superseded and self.status != "superseded":
            clauses.append(f"NOT ({_MANAGED_SQL} AND n.status = 'superseded')")
        template, template_params = self._template_sql()
        if self.kind == "template":
            clauses.append(template)
            params += template_params
        elif self.kind is not None:
            clauses.append(f"NOT ({template})")
            params += template_params
            clauses.append("COALESCE(n.type, '') = ?")
            params.append("" if self.kind == "note" else self.kind)
        elif not self.include_notes:
            clauses.append("COALESCE(n.type, '') NOT IN ('box', 'trace')")
            if not self.asks_for_scaffolding:
                clauses.append(f"NOT ({template})")
                params += template_params
        for column in ("status", "layer"):
            value = getattr(self, column)
            if value is not None:
                clauses.append(f"{_MANAGED_SQL} AND n.{column} = ?")
                params.append(value)
        if self.tag:
            clauses.append(
                "EXISTS (SELECT 1 FROM tags t WHERE t.nid = n.nid AND (t.tag = ? COLLATE NOCASE "
                "OR (t.tag >= ? COLLATE NOCASE AND t.tag < ? COLLATE NOCASE)))"
            )
            params += [self.tag, self.tag + "/", self.tag + "0"]
        if self.folder:
            prefix = self.folder + "/"
            clauses.append("substr(n.path, 1, ?) = ?")
            params += [len(prefix), prefix]
        if self.since is not None:
            clauses.append("(n.last_used >= ? OR n.created >= ?)")
            params += [self.since.timestamp()] * 2
        return " AND ".join(f"({c})" for c in clauses) or "1", params


SCAFFOLDING_WORDS = frozenset({"template", "templates", "dashboard"})
"""A query with one of these words asks for scaffolding: templates and the dashboard compete."""


def _asks_for_scaffolding(terms: Sequence[str]) -> bool:
    return any(t.lower() in SCAFFOLDING_WORDS for t in terms)


def template_folders(vault: VaultContext) -> tuple[str, ...]:
    """vaultmem's template folder and Obsidian's (``.obsidian/templates.json``), if set."""
    obsidian = templates_folder(vault.root)
    return tuple(dict.fromkeys(f for f in (DEFAULT_TEMPLATES, obsidian) if f))


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
        options, template_folders(vault), asks_for_scaffolding=_asks_for_scaffolding(terms)
    )
    if options.get("sync", True):
        vault.catch_up()
    semantic = semantic_query(vault, query) if weights.vector > 0 and query.strip() else None
    if not terms and semantic is None:
        return []
    hits = _rank(vault, terms, filters, weights, k, now, semantic)
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
    k: int, now: dt.datetime, semantic: SemanticQuery | None = None,
) -> list[Hit]:
    """Candidates → signals → fused order → blended top ``k`` as :class:`Hit` objects."""
    conn = vault.index.conn
    rows, bm25_values = (
        _fts_candidates(conn, terms, filters, max(CANDIDATES, k)) if terms else ([], [])
    )
    if semantic is not None:  # the query's nearest notes join the candidates
        known = {str(row[0]) for row in rows}
        size = max(vault.settings.embeddings.vector_candidates, k)
        floor = vault.settings.embeddings.vector_floor
        wanted = [p for p, cos in semantic.nearest(size + len(known))
                  if p not in known and cos > floor][:size]
        where, params = filters.sql()
        near = _rows_at(conn, wanted, where, params) if wanted else []
        rows = [*rows, *near]
        bm25_values = [*bm25_values, *([0.0] * len(near))]
    if not rows:
        return []
    paths = [str(row[0]) for row in rows]
    relevance = relevance_signal(np.array(bm25_values, dtype=np.float64))
    sources: list[int] = []
    targets: list[int] = []
    if weights.graph > 0:
        extra, sources, targets = _graph(conn, filters, paths, relevance)
        rows += extra
        paths += [str(row[0]) for row in extra]
        relevance = np.concatenate([relevance, np.zeros(len(extra))])
    seeds = strong_hits(relevance, paths)
    context = _Episodes()
    if weights.episode > 0:
        context = _episodes(conn, filters, paths, seeds)
        rows += context.extra
        paths += [str(row[0]) for row in context.extra]
        relevance = np.concatenate([relevance, np.zeros(len(context.extra))])
        seeds = np.concatenate([seeds, np.zeros(len(context.extra), dtype=bool)])
    bm25 = np.concatenate([bm25_values, np.zeros(len(paths) - len(bm25_values))])
    columns = MemoryColumns.from_rows(rows)
    scores = score_columns(columns, now.timestamp(), vault.settings)
    decays = np.asarray(columns.type == "memory", dtype=bool)
    ratio = weights.relevance / weights.decay if weights.decay > 0 else math.inf
    alive = decays & (scores.score >= vault.settings.thresholds.forget)
    decay = plain_note_decay(decay_signal(scores.score, decays), alive, relevance, ratio,
                             plain=~decays, relevant=STRONG_HIT)
    proximity = graph_signal(relevance, seeds,
                             np.array(sources, dtype=np.intp), np.array(targets, dtype=np.intp))
    cosine = semantic.cosine_of(paths) if semantic is not None else None
    vector = (
        matched_share(
            vector_signal(cosine, semantic.top, vault.settings.embeddings.vector_floor),
            bm25 != 0.0,
            # vectors alone (relevance weight 0): no BM25 order to protect, the full signal
            vault.settings.embeddings.matched_vector_share if weights.relevance > 0 else 1.0)
        if semantic is not None and cosine is not None else None
    )
    index = {p: i for i, p in enumerate(paths)}
    pairs = [(index[h], index[j], before) for h, j, before in context.pairs
             if h in index and j in index]
    episode, episode_via = episode_signal(
        relevance, seeds, np.array([p[0] for p in pairs], dtype=np.intp),
        np.array([p[1] for p in pairs], dtype=np.intp),
        np.array([p[2] for p in pairs], dtype=np.intp),
    )
    lift = episode_contribution(episode, relevance, weights.episode)
    fused = fuse(relevance, decay, proximity.signal, weights, vector)
    fused = replace(fused, graph=fused.graph + lift, score=fused.score + lift)
    capped = cap_superseded(fused.score, _successors(conn, columns, index))
    fused = replace(fused, score=capped)
    priority = np.where(decays & (columns.status == "active"), scores.review_priority, 0.0)
    primary = [int(i) for i in ranking(fused.score, paths)]
    due = [i for i in primary if priority[i] > 0 and relevance[i] >= REVIEW_MIN_RELEVANCE]
    due.sort(key=lambda i: -priority[i])  # stable: equal priorities keep the fused order
    hits: list[Hit] = []
    chosen = list(blend_results(primary, due, k, weights.review_blend))
    bodies = _bodies(conn, [paths[i] for i, _ in chosen])
    for rank, (i, by_review) in enumerate(chosen, 1):
        via = int(episode_via[i]) if lift[i] > 0 else int(proximity.via[i])
        hits.append(Hit(
            rank=rank, path=paths[i],
            id=columns.id[i] if columns.type[i] in MANAGED_TYPES else None,
            title=title_of(paths[i]), score=float(fused.score[i]),
            relevance=float(fused.relevance[i]), decay=float(fused.decay[i]),
            graph=float(fused.graph[i]), review=by_review,
            signals=HitSignals(
                relevance=float(relevance[i]), decay=float(decay[i]),
                graph=float(proximity.signal[i]), bm25=float(bm25[i]),
                decay_score=float(scores.score[i]) if decays[i] else None,
                review_priority=float(priority[i]),
                linked_to=title_of(paths[via]) if via >= 0 else None,
                vector=float(vector[i]) if vector is not None else 0.0,
                cosine=_finite(cosine[i]) if cosine is not None else None,
            ),
            text=capped_text(bodies.get(paths[i], "")),
            vector=float(fused.vector[i]) if fused.vector is not None else 0.0,
        ))
    return hits


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


@dataclass(frozen=True, slots=True)
class _Episodes:
    """Episode neighbours of the strong hits: rows to add, and (hit, neighbour, before) paths."""

    extra: list[tuple[object, ...]] = field(default_factory=list)
    pairs: list[tuple[str, str, int]] = field(default_factory=list)


def _episodes(
    conn: sqlite3.Connection, filters: RecallFilters, paths: Sequence[str], seeds: np.ndarray,
) -> _Episodes:
    """The turns right after and right before each strong hit in its episode.

    A turn's ``previous: "[[…]]"`` property is a frontmatter link ("Index and graph"), so the turn
    after a hit is a note whose ``previous`` link resolves to the hit, and the turn before is where
    the hit's own ``previous`` link resolves. Neighbours that are not candidates yet join (filters
    applied); ``before`` is 1 for the turn before.
    """
    hits = [paths[int(i)] for i in np.flatnonzero(seeds)]
    if not hits:
        return _Episodes()
    marks = ", ".join("?" * len(hits))
    rows = conn.execute(
        f"""
        SELECT l.resolved, s.path, 0 FROM links l JOIN notes s ON s.nid = l.nid
        WHERE l.kind = 'frontmatter' AND l.resolved IN ({marks}) AND s.previous IS NOT NULL
          AND instr(lower(s.previous), lower(l.target)) > 0
        UNION
        SELECT s.path, l.resolved, 1 FROM links l JOIN notes s ON s.nid = l.nid
        WHERE l.kind = 'frontmatter' AND s.path IN ({marks}) AND s.previous IS NOT NULL
          AND l.resolved IS NOT NULL AND instr(lower(s.previous), lower(l.target)) > 0
        ORDER BY 1, 2 LIMIT {_LINK_ROWS_MAX}
        """,
        (*hits, *hits),
    ).fetchall()
    pairs = [(str(h), str(j), int(b)) for h, j, b in rows if h != j]
    known = set(paths)
    wanted = sorted({j for _, j, _ in pairs} - known)[:EXPAND_MAX]
    where, params = filters.sql()
    extra = _rows_at(conn, wanted, where, params) if wanted else []
    return _Episodes(extra, pairs)


def _successors(
    conn: sqlite3.Connection, columns: MemoryColumns, index: Mapping[str, int]
) -> np.ndarray:
    """Per candidate, the candidate index of its successor (``superseded_by``), else −1."""
    out = np.full(len(columns), -1, dtype=np.intp)
    superseded = [str(p) for p, st in zip(columns.path, columns.status, strict=True)
                  if st == "superseded"]
    if not superseded:
        return out
    marks = ", ".join("?" * len(superseded))
    rows = conn.execute(
        f"""
        SELECT s.path, l.resolved FROM links l JOIN notes s ON s.nid = l.nid
        WHERE l.kind = 'frontmatter' AND s.path IN ({marks}) AND s.superseded_by IS NOT NULL
          AND l.resolved IS NOT NULL AND instr(lower(s.superseded_by), lower(l.target)) > 0
        """,
        tuple(superseded),
    )
    for path, successor in rows:
        if str(successor) in index and str(successor) != str(path):
            out[index[str(path)]] = index[str(successor)]
    return out


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _graph(
    conn: sqlite3.Connection, filters: RecallFilters, paths: Sequence[str],
    relevance: np.ndarray,
) -> tuple[list[tuple[object, ...]], list[int], list[int]]:
    """Rows of linked notes to add, and the links among all candidates as index pairs.

    Returns (extra rows, sources, targets): ``sources[e]`` links to ``targets[e]``, both indices
    into ``paths`` followed by the extra rows.
    """
    seed_paths = [paths[int(i)] for i in np.flatnonzero(strong_hits(relevance, paths))]
    edges = _links_of(conn, seed_paths)
    wanted = _neighbours(edges, seed_paths, paths, relevance)
    where, params = filters.sql()
    extra = _rows_at(conn, wanted, where, params) if wanted else []
    index = {p: i for i, p in enumerate([*paths, *(str(row[0]) for row in extra)])}
    pairs = [(index[a], index[b]) for a, b in edges if a in index and b in index]
    return extra, [a for a, _ in pairs], [b for _, b in pairs]


def _fts_candidates(
    conn: sqlite3.Connection, terms: Sequence[str], filters: RecallFilters, limit: int
) -> tuple[list[tuple[object, ...]], list[float]]:
    """The best ``limit`` rows for ``terms`` (columns in ``COLUMN_ORDER``) and their bm25 values.

    Narrowing filters join ``notes`` in the scoring query (only passing rows are scored); the
    archive rule alone is applied afterwards to the best rows, taking more of the scored rows
    when it drops some.
    """
    where, params = filters.sql()
    scored = _scored_matches(conn, terms, (where, params) if filters.narrows else None)
    first = math.ceil(limit * OVERSAMPLE)
    rows, bm25 = _rows_for(conn, scored[:first], where, params, limit)
    if len(rows) < limit < len(scored):
        rows, bm25 = _rows_for(conn, scored, where, params, limit)
    return rows, bm25


def _scored_matches(
    conn: sqlite3.Connection, terms: Sequence[str],
    condition: tuple[str, Sequence[object]] | None,
) -> list[tuple[int, float]]:
    """(nid, bm25) of the matches for ``terms``, best first (ties by nid), at most the budget.

    Each word's document count is read, capped at ``SCORE_BUDGET + 1``. When the counts sum to
    at most :data:`SCORE_BUDGET` every match is scored (exact BM25). Otherwise the commonest words
    — the ones BM25's IDF weighs least — stop selecting rows: ``(rare words) AND (all words)``
    matches the notes holding a rare word and still scores every word. When even the rarest word
    is too common (a vault where every query word is in hundreds of notes), only the first
    :data:`COMMON_WORDS_MAX` words as typed are used and the first of: all of them; any of them
    in title or tags; any of them — that matches at least :data:`MIN_MATCHES` rows is scored over
    its first ``budget / (words + 1)`` rows (FTS5's order, not the best). If those words are
    all stopwords ("the", "and be"), the matches are taken without BM25 (:data:`UNRANKED_BM25`):
    it would weigh them at about 0 and costs a scan of every note holding each word.
    Each step is scored as it is counted, so no match list is read twice. Measured on
    ``benchmarks/recall_eval`` with the budget forced down to 300: the rare-word expression
    keeps recall@10 and MRR within 0.01 of exact BM25.
    """
    budget = SCORE_BUDGET
    counted = sorted((_count(conn, fts_string(t), budget + 1), t) for t in terms)
    found = [(count, t) for count, t in counted if count]
    if not found:
        return []
    words = [t for _, t in found]
    anywhere = fts_any(words)
    if sum(count for count, _ in found) <= budget:
        return _scored(conn, anywhere, condition, budget)
    rare: list[str] = []
    total = 0
    for count, t in found:
        if total + count > budget:
            break
        rare.append(t)
        total += count
    if rare:
        return _scored(conn, f"({fts_any(rare)}) AND ({anywhere})", condition, budget)
    # Every word is common. BM25 reads each word's whole match list once (IDF) and the rows kept
    # are FTS5's first, not the best: use the first few words as typed, fewer rows the more.
    common = [t for t in terms if t in set(words)][:COMMON_WORDS_MAX]
    cap = max(MIN_MATCHES, budget // (len(common) + 1))
    if all(t in STOPWORDS for t in common):  # "the", "and be": taken unranked (UNRANKED_BM25)
        for expression in (fts_all(common), fts_any(common)):
            nids = conn.execute(*_match_sql(expression, condition, cap, rank=False)).fetchall()
            if len(nids) >= MIN_MATCHES or expression == fts_any(common):
                return [(int(nid), UNRANKED_BM25) for (nid,) in nids]
    if len(common) > 1:
        scored = _scored(conn, fts_all(common), condition, cap)
        if len(scored) >= MIN_MATCHES:
            return scored
    some = fts_any(common)
    scored = _scored(conn, fts_in_columns(("title", "tags"), some), condition, cap)
    if len(scored) >= MIN_MATCHES:
        return scored
    return _scored(conn, some, condition, cap)


def _scored(
    conn: sqlite3.Connection, expression: str, condition: tuple[str, Sequence[object]] | None,
    cap: int,
) -> list[tuple[int, float]]:
    """(nid, bm25) of the first ``cap`` rows matching ``expression`` and ``condition``, best first.

    The rows are taken in FTS5's order (by nid) and sorted here, so ``cap`` bounds the work.
    """
    rows = conn.execute(*_match_sql(expression, condition, cap, rank=True))
    return _best([(int(nid), float(r)) for nid, r in rows])


def _match_sql(
    expression: str, condition: tuple[str, Sequence[object]] | None, cap: int, *, rank: bool
) -> tuple[str, tuple[object, ...]]:
    """SQL and parameters for the first ``cap`` (nid[, bm25]) rows matching ``expression``."""
    w_title, w_body, w_tags = BM25_WEIGHTS
    bm25 = f", bm25(notes_fts, {w_title!r}, {w_body!r}, {w_tags!r})" if rank else ""
    if condition is None:
        sql = f"SELECT rowid{bm25} FROM notes_fts WHERE notes_fts MATCH ? LIMIT {int(cap)}"
        return sql, (expression,)
    # CROSS JOIN keeps FTS5 outside: with notes outside, FTS5 would re-run the match per row
    sql = (f"SELECT n.nid{bm25} FROM notes_fts CROSS JOIN notes n ON n.nid = notes_fts.rowid "
           f"WHERE notes_fts MATCH ? AND {condition[0]} LIMIT {int(cap)}")
    return sql, (expression, *condition[1])


def _best(scored: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Best bm25 first (FTS5's values are negative: lower is better), ties by nid."""
    return sorted(scored, key=lambda pair: (pair[1], pair[0]))


def _rows_for(
    conn: sqlite3.Connection, ranked: Sequence[tuple[int, float]], where: str,
    params: Sequence[object], limit: int,
) -> tuple[list[tuple[object, ...]], list[float]]:
    """Rows of the ranked notes that pass ``where``, in ranked order, at most ``limit``."""
    if not ranked:
        return [], []
    found: dict[int, tuple[object, ...]] = {}
    for start in range(0, len(ranked), 500):
        chunk = [nid for nid, _ in ranked[start : start + 500]]
        marks = ", ".join("?" * len(chunk))
        found.update(
            (int(row[0]), tuple(row[1:]))
            for row in conn.execute(
                f"SELECT n.nid, {_COLUMNS_SQL} FROM notes n WHERE n.nid IN ({marks}) AND {where}",
                (*chunk, *params),
            )
        )
    kept = [(found[nid], r) for nid, r in ranked if nid in found][:limit]
    return [row for row, _ in kept], [r for _, r in kept]


def _count(conn: sqlite3.Connection, expression: str, cap: int) -> int:
    """Rows matching ``expression``, counted up to ``cap``."""
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM notes_fts WHERE notes_fts MATCH ? LIMIT {int(cap)})",
        (expression,),
    )
    return int(row.fetchone()[0])


def _links_of(conn: sqlite3.Connection, seed_paths: Sequence[str]) -> list[tuple[str, str]]:
    """(source, target) of links between notes from or into ``seed_paths`` (self-links and
    links to attachments left out)."""
    if not seed_paths:
        return []
    marks = ", ".join("?" * len(seed_paths))
    rows = conn.execute(
        f"""
        SELECT s.path, l.resolved FROM links l JOIN notes s ON s.nid = l.nid
        WHERE s.path IN ({marks}) AND l.resolved_nid IS NOT NULL AND l.resolved != s.path
        UNION
        SELECT s.path, l.resolved FROM links l JOIN notes s ON s.nid = l.nid
        WHERE l.resolved IN ({marks}) AND l.resolved != s.path
        ORDER BY 1, 2 LIMIT {_LINK_ROWS_MAX}
        """,
        (*seed_paths, *seed_paths),
    )
    return [(str(a), str(b)) for a, b in rows]


def _neighbours(
    edges: Sequence[tuple[str, str]], seed_paths: Sequence[str], paths: Sequence[str],
    relevance: np.ndarray,
) -> list[str]:
    """Linked notes that are not candidates yet: the :data:`EXPAND_MAX` nearest the best seeds."""
    seeds = set(seed_paths)
    strength = {p: float(relevance[i]) for i, p in enumerate(paths) if p in seeds}
    known = set(paths)
    best: dict[str, float] = {}
    for a, b in edges:
        for seed, other in ((a, b), (b, a)):
            if seed in strength and other not in known:
                best[other] = max(best.get(other, 0.0), strength[seed])
    return sorted(best, key=lambda p: (-best[p], p))[:EXPAND_MAX]


def _rows_at(
    conn: sqlite3.Connection, paths: Sequence[str], where: str, params: Sequence[object]
) -> list[tuple[object, ...]]:
    """Rows (``COLUMN_ORDER``) of the notes at ``paths`` that pass the filters, in path order."""
    marks = ", ".join("?" * len(paths))
    rows = conn.execute(
        f"SELECT {_COLUMNS_SQL} FROM notes n WHERE n.path IN ({marks}) AND {where} ORDER BY n.path",
        (*paths, *params),
    )
    return [tuple(row) for row in rows]


def review_queue(vault: VaultContext, *, k: int | None, now: dt.datetime) -> list[MemoryRow]:
    """Active memories in the danger zone, highest review priority first (Mnemex; "Scores").

    Priority = 1 − 4(x − 0.5)² for x the decay score's position inside ``[thresholds]``
    ``danger_zone_min``..``danger_zone_max``; memories outside the zone are not listed. Ties by
    path. ``k`` defaults to ``[recall] k``; raises :class:`InputError` for ``k < 1``.
    """
    k = _checked_k(vault, k)
    table = vault.table(now=now, where="n.type = 'memory' AND n.status = 'active'")
    priority = table.scores.review_priority
    due = np.flatnonzero(priority > 0)
    paths = table.columns.path[due].astype(str)
    order = due[np.lexsort((paths, -priority[due]))][:k]
    return rows_of(table, order, vault.index)



__all__ = ["Hit", "HitSignals", "RecallFilters", "recall_notes", "recall_weights", "review_queue"]
