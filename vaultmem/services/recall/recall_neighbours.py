"""Recall neighbours: notes reached from the strong hits through links, episodes and
corrections.

Part of :mod:`vaultmem.services.recall.recall` (docs/user-guide.md, "Recall"): graph proximity from
the resolved links of the strong hits (either direction) with linked notes joining as
candidates; the turns before and after a hit in its episode; the successor of a superseded
memory.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from vaultmem.core.recall.recall_fusion import (
    strong_hits,
)
from vaultmem.services.recall.recall_candidates import rows_at

if TYPE_CHECKING:
    from vaultmem.services.recall.recall_filters import RecallFilters

EXPAND_MAX = 20
"""At most this many linked notes that did not match the words join the candidates."""
EPISODE_EXPAND_MAX = 40
"""At most this many episode neighbours join the candidates (the turns before and after each of
:data:`~vaultmem.core.recall.recall_context.EPISODE_SEEDS` strong hits)."""


_LINK_ROWS_MAX = 2000


class Episodes(NamedTuple):
    """Episode neighbours of the strong hits: rows to add, and (hit, neighbour, before) paths."""

    extra: list[tuple[object, ...]]
    pairs: list[tuple[str, str, int]]


def episode_neighbours(
    conn: sqlite3.Connection,
    filters: RecallFilters,
    paths: Sequence[str],
    seeds: Sequence[bool],
) -> Episodes:
    """The turns right after and right before each strong hit in its episode.

    A turn's ``previous: "[[…]]"`` property is a frontmatter link ("Index and graph"), so the turn
    after a hit is a note whose ``previous`` link resolves to the hit, and the turn before is where
    the hit's own ``previous`` link resolves. Neighbours that are not candidates yet join (filters
    applied); ``before`` is 1 for the turn before.
    """
    hits = [paths[i] for i, seed in enumerate(seeds) if seed]
    if not hits:
        return Episodes([], [])
    marks = ", ".join("?" * len(hits))
    rows = conn.execute(
        f"""
        SELECT l.resolved, s.path, 0 FROM links l JOIN notes s ON s.nid = l.nid
        WHERE l.kind = 'frontmatter' AND s.previous IS NOT NULL
          AND l.resolved_nid IN (SELECT nid FROM notes WHERE path IN ({marks}))
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
    wanted = sorted({j for _, j, _ in pairs} - known)[:EPISODE_EXPAND_MAX]
    where, params = filters.sql()
    extra = rows_at(conn, wanted, where, params) if wanted else []
    return Episodes(extra, pairs)


def successors(
    conn: sqlite3.Connection, paths: Sequence[str], statuses: Sequence[object],
    index: Mapping[str, int],
) -> list[int]:
    """Per candidate, the candidate index of its successor (``superseded_by``), else −1."""
    out = [-1] * len(paths)
    superseded = [str(p) for p, st in zip(paths, statuses, strict=True) if st == "superseded"]
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


def graph_candidates(
    conn: sqlite3.Connection,
    filters: RecallFilters,
    paths: Sequence[str],
    relevance: Sequence[float],
) -> tuple[list[tuple[object, ...]], list[int], list[int]]:
    """Rows of linked notes to add, and the links among all candidates as index pairs.

    Returns (extra rows, sources, targets): ``sources[e]`` links to ``targets[e]``, both indices
    into ``paths`` followed by the extra rows.
    """
    seed_paths = [paths[i] for i, seed in enumerate(strong_hits(relevance, paths)) if seed]
    edges = _links_of(conn, seed_paths)
    wanted = _neighbours(edges, seed_paths, paths, relevance)
    where, params = filters.sql()
    extra = rows_at(conn, wanted, where, params) if wanted else []
    index = {p: i for i, p in enumerate([*paths, *(str(row[0]) for row in extra)])}
    pairs = [(index[a], index[b]) for a, b in edges if a in index and b in index]
    return extra, [a for a, _ in pairs], [b for _, b in pairs]


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
        WHERE l.resolved_nid IN (SELECT nid FROM notes WHERE path IN ({marks}))
          AND l.resolved != s.path
        ORDER BY 1, 2 LIMIT {_LINK_ROWS_MAX}
        """,
        (*seed_paths, *seed_paths),
    )
    return [(str(a), str(b)) for a, b in rows]


def _neighbours(
    edges: Sequence[tuple[str, str]],
    seed_paths: Sequence[str],
    paths: Sequence[str],
    relevance: Sequence[float],
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
