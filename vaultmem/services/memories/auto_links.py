"""Semantic auto-links at ``remember`` (Mnemon, "Token overlap > 0.10"; user guide "Recall").

Without embeddings, a new memory is linked to the managed memories whose **content tokens**
overlap its own by Jaccard > ``[links] auto_link_overlap`` (0.10): at most ``auto_link_max`` (5),
highest overlap first, ties by path. Content tokens are lower-cased words without English
stopwords (:func:`~vaultmem.core.recall.text_tokens.content_tokens`) of the note bodies.

Candidates come from the FTS index, never from reading files: the new memory's most distinctive
words (those found in the fewest notes, at most :data:`QUERY_TERMS`) are searched among the
active memories (``type: memory``, not archived), the best :data:`CANDIDATES` by BM25 are taken
and their bodies read from ``notes_fts``; the overlap is then computed exactly on those. A
memory sharing none of those words, or ranked below the cut, is not linked — overlap above 0.10
with none of the rarest words of the new memory is unlikely.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vaultmem.core.notes.note_parse import title_of
from vaultmem.core.recall.text_tokens import content_tokens, fts_any, fts_string, jaccard

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext

QUERY_TERMS = 24
"""At most this many of the new memory's words (the rarest in the vault) find candidates."""
CANDIDATES = 200
"""Candidates (best BM25 first) whose overlap is computed."""
SCORE_BUDGET = 5000
"""At most this many matching rows are ranked by BM25 (bounds the cost in huge vaults)."""

_ACTIVE_MEMORY = "n.type = 'memory' AND n.status != 'archived'"


def related_memories(vault: VaultContext, content: str, tags: Sequence[str]) -> list[str]:
    """Titles of the memories to write in a new memory's ``related:``, best overlap first.

    ``content`` is the new memory's body. ``tags`` are not part of the overlap (Mnemon compares
    content); they are accepted so a tag-aware rule can be added without changing callers.
    The vault's index must be current (``write_draft`` syncs first). Returns ``[]`` when the
    content has no content tokens or nothing overlaps enough.
    """
    del tags  # see the docstring: overlap is on content only
    settings = vault.settings.links
    if settings.auto_link_max < 1:
        return []
    mine = content_tokens(content)
    if not mine:
        return []
    conn = vault.index.conn
    terms = _rarest(conn, sorted(mine), QUERY_TERMS)
    if not terms:
        return []
    scored: list[tuple[float, str]] = []
    for path, body in _candidates(conn, terms):
        overlap = jaccard(mine, content_tokens(body))
        if overlap > settings.auto_link_overlap:
            scored.append((overlap, path))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [title_of(path) for _, path in scored[: settings.auto_link_max]]


def _rarest(conn: sqlite3.Connection, tokens: Sequence[str], limit: int) -> list[str]:
    """The ``limit`` tokens found in the fewest notes (but in at least one), ties by token.

    Counts stop at :data:`SCORE_BUDGET`: words more common than that tie (and are least useful).
    """
    counted: list[tuple[int, str]] = []
    for token in tokens:
        (count,) = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM notes_fts WHERE notes_fts MATCH ? "
            f"LIMIT {SCORE_BUDGET})",
            (fts_string(token),),
        ).fetchone()
        if count:
            counted.append((int(count), token))
    counted.sort()
    return [token for _, token in counted[:limit]]


def _candidates(conn: sqlite3.Connection, terms: Sequence[str]) -> list[tuple[str, str]]:
    """(path, body) of the best :data:`CANDIDATES` active memories matching any of ``terms``."""
    best = conn.execute(
        f"""
        SELECT nid, path FROM (
            SELECT n.nid AS nid, n.path AS path, bm25(notes_fts) AS rank_bm25
            FROM notes_fts CROSS JOIN notes n ON n.nid = notes_fts.rowid  -- FTS5 outside
            WHERE notes_fts MATCH ? AND {_ACTIVE_MEMORY}
            LIMIT {SCORE_BUDGET}
        ) ORDER BY rank_bm25, path LIMIT {CANDIDATES}
        """,
        (fts_any(terms),),
    ).fetchall()
    if not best:
        return []
    out: list[tuple[str, str]] = []
    for nid, path in best:  # one rowid lookup each: FTS5 plans ``rowid IN (…)`` poorly
        row = conn.execute("SELECT body FROM notes_fts WHERE rowid = ?", (nid,)).fetchone()
        if row is not None:
            out.append((str(path), str(row[0] or "")))
    return sorted(out)
