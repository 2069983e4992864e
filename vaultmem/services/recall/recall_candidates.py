"""Recall candidates: the FTS5 rows a query matches, ranked by BM25 under a row budget.

Part of :mod:`vaultmem.services.recall.recall` (docs/user-guide.md, "Recall"). BM25 costs about a
microsecond per matching row and FTS5 cannot stop early, so at most :data:`SCORE_BUDGET` rows
are ranked; when the words match more, the commonest words stop selecting rows
(:func:`scored_matches`). Only the top rows are then looked up in ``notes``.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING

from vaultmem.core.recall.recall_fusion import (
    UNRANKED_BM25,
)
from vaultmem.core.recall.text_tokens import (
    STOPWORDS,
    fts_all,
    fts_any,
    fts_in_columns,
    fts_string,
)
from vaultmem.core.scoring.score_formulas import COLUMN_ORDER

if TYPE_CHECKING:
    from vaultmem.services.recall.recall_filters import RecallFilters

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


COLUMNS_SQL = ", ".join(f"n.{c}" for c in COLUMN_ORDER if c != "edges") + ", 0"


def fts_candidates(
    conn: sqlite3.Connection, terms: Sequence[str], filters: RecallFilters, limit: int
) -> tuple[list[tuple[object, ...]], list[float]]:
    """The best ``limit`` rows for ``terms`` (columns in ``COLUMN_ORDER``) and their bm25 values.

    Narrowing filters join ``notes`` in the scoring query (only passing rows are scored); the
    archive rule alone is applied afterwards to the best rows, taking more of the scored rows
    when it drops some.
    """
    where, params = filters.sql()
    scored = scored_matches(conn, terms, (where, params) if filters.narrows else None)
    first = math.ceil(limit * OVERSAMPLE)
    rows, bm25 = _rows_for(conn, scored[:first], where, params, limit)
    if len(rows) < limit < len(scored):
        rows, bm25 = _rows_for(conn, scored, where, params, limit)
    return rows, bm25


DATED_POOL = 2000
"""Of the notes created inside a question's dates that match none of its words, at most this
many (oldest first) are compared with the query's vector to pick the ones that join."""


def dated_candidates(
    conn: sqlite3.Connection, terms: Sequence[str], filters: RecallFilters,
    windows: Sequence[tuple[float, float]], known: Collection[str], limit: int,
    closeness: Callable[[Sequence[str]], Iterable[float]] | None = None,
) -> tuple[list[tuple[object, ...]], list[float]]:
    """Up to ``limit`` rows of notes created inside ``windows`` (``start ≤ created < end``,
    POSIX seconds) that are not in ``known`` paths, and their bm25 values: the ones matching
    ``terms`` first, best BM25 first, then the others (bm25 0): the closest by ``closeness``
    (e.g. the query's cosine per path, NaN for none) among :data:`DATED_POOL`, or the oldest
    without it.
    """
    if not windows or limit <= 0:
        return [], []
    where, params = filters.sql()
    inside = " OR ".join("(n.created >= ? AND n.created < ?)" for _ in windows)
    spans = [bound for window in windows for bound in window]
    condition = f"({inside}) AND ({where})"
    values = [*spans, *params]
    scored = scored_matches(conn, terms, (condition, values)) if terms else []
    rows, bm25 = _rows_for(conn, scored, condition, values, limit + len(known))
    kept = [(row, b) for row, b in zip(rows, bm25, strict=True) if str(row[0]) not in known]
    kept = kept[:limit]
    taken = {str(row[0]) for row, _ in kept} | set(known)
    if len(kept) < limit:
        pool = [str(path) for (path,) in conn.execute(
            f"SELECT n.path FROM notes n WHERE {condition} ORDER BY n.created, n.path "
            f"LIMIT {int(DATED_POOL + len(taken))}", values) if str(path) not in taken]
        if closeness is not None and pool:
            near = [float(c) for c in closeness(pool)]
            order = sorted(range(len(pool)),
                           key=lambda i: (-(near[i] if near[i] == near[i] else -2.0), i))
            pool = [pool[i] for i in order]
        chosen = pool[: limit - len(kept)]
        found = {str(row[0]): row for row in rows_at(conn, chosen, where, params)} if chosen else {}
        kept += [(found[p], 0.0) for p in chosen if p in found]
    return [row for row, _ in kept], [b for _, b in kept]


def rows_at(
    conn: sqlite3.Connection, paths: Sequence[str], where: str, params: Sequence[object]
) -> list[tuple[object, ...]]:
    """Rows (``COLUMN_ORDER``) of the notes at ``paths`` that pass the filters, in path order."""
    marks = ", ".join("?" * len(paths))
    rows = conn.execute(
        f"SELECT {COLUMNS_SQL} FROM notes n WHERE n.path IN ({marks}) AND {where} ORDER BY n.path",
        (*paths, *params),
    )
    return [tuple(row) for row in rows]


def scored_matches(
    conn: sqlite3.Connection,
    terms: Sequence[str],
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
    conn: sqlite3.Connection,
    expression: str,
    condition: tuple[str, Sequence[object]] | None,
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
    sql = (
        f"SELECT n.nid{bm25} FROM notes_fts CROSS JOIN notes n ON n.nid = notes_fts.rowid "
        f"WHERE notes_fts MATCH ? AND {condition[0]} LIMIT {int(cap)}"
    )
    return sql, (expression, *condition[1])


def _best(scored: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """Best bm25 first (FTS5's values are negative: lower is better), ties by nid."""
    return sorted(scored, key=lambda pair: (pair[1], pair[0]))


def _rows_for(
    conn: sqlite3.Connection,
    ranked: Sequence[tuple[int, float]],
    where: str,
    params: Sequence[object],
    limit: int,
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
                f"SELECT n.nid, {COLUMNS_SQL} FROM notes n WHERE n.nid IN ({marks}) AND {where}",
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
