"""What ``remember`` checks before writing: exact duplicates, surprise, semantic neighbours.

- **Content-hash dedup** (Engram; ``docs/user-guide.md``, "Consolidation"): a new memory whose
  content equals an existing active or promoted memory's after normalisation (case, punctuation,
  whitespace; :func:`~vaultmem.core.notes.content_hash.normalised_content_hash`) is not written; the
  existing memory is reinforced instead (``touch``). Candidates come from the FTS index (notes
  holding every word of the content), so no file is read.
- **Surprise** (engram), only with embeddings: the new memory's cosine to its ``surprise_k`` (5)
  nearest memories gives ``surprise = 1 − mean cosine``; importance moves by
  ``surprise_max · clip(2·surprise − 1, −1, 1)`` (±0.3: mean cosine 0 → +0.3, 0.5 → 0, 1 → −0.3)
  unless the caller gave an importance. A neighbour at cosine ≥ ``near_duplicate`` (0.92) is
  written to the new note as ``near_duplicate: "[[…]]"``; the surprise is stored as
  ``surprise:`` for auditing (both are fixed at write time, not derived scores).
- **Semantic auto-links** (Mnemon), only with embeddings: memories at cosine ≥
  ``auto_link_cosine`` (0.80) join the token-overlap links in ``related:`` (at most
  ``[links] auto_link_max`` in all).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultmem.core.notes.content_hash import normalised_content_hash
from vaultmem.core.notes.note_parse import title_of
from vaultmem.core.recall.text_tokens import fts_all, word_tokens

if TYPE_CHECKING:
    from vaultmem.services.semantic.embeddings import SemanticQuery
    from vaultmem.services.vault_context import VaultContext

DEDUP_WORDS = 8
"""At most this many distinct words of the content select the duplicate candidates."""
DEDUP_CANDIDATES = 50
"""At most this many notes holding every selected word are compared by hash."""
NEIGHBOURS = 50
"""Nearest notes looked at for surprise and links (memories among them count)."""


def duplicate_of(vault: VaultContext, content: str) -> str | None:
    """Path of an active or promoted memory whose content equals ``content`` after
    normalisation, or ``None``. Notes vaultmem must not write (conflict markers, other
    problems) are not candidates: the new memory is written beside them. The index must be
    current."""
    words = list(dict.fromkeys(word_tokens(content)))[:DEDUP_WORDS]
    if not words:
        return None
    wanted = normalised_content_hash(content)
    rows = vault.index.conn.execute(
        f"""
        SELECT n.path, f.body FROM notes_fts f CROSS JOIN notes n ON n.nid = f.rowid
        WHERE notes_fts MATCH ? AND n.type = 'memory' AND n.status IN ('active', 'promoted')
          AND n.problems = '[]'
        ORDER BY n.path LIMIT {DEDUP_CANDIDATES}
        """,
        (fts_all(words),),
    ).fetchall()
    for path, body in rows:
        if normalised_content_hash(str(body or "")) == wanted:
            return str(path)
    return None


@dataclass(slots=True)
class Novelty:
    """What the vectors say about a new memory (all empty without embeddings)."""

    surprise: float | None = None
    importance_delta: float = 0.0
    near_duplicate: str | None = None
    related: list[str] = field(default_factory=list)

    def fields(self) -> dict[str, object]:
        """Properties to write into the new note."""
        out: dict[str, object] = {}
        if self.surprise is not None:
            out["surprise"] = round(self.surprise, 3)
        if self.near_duplicate is not None:
            out["near_duplicate"] = f"[[{self.near_duplicate}]]"
        return out


def _memory_neighbours(vault: VaultContext, found: SemanticQuery) -> list[tuple[str, float]]:
    near = found.nearest(NEIGHBOURS)
    if not near:
        return []
    paths = [p for p, _ in near]
    marks = ", ".join("?" * len(paths))
    memories = {
        str(r[0])
        for r in vault.index.conn.execute(
            f"SELECT path FROM notes WHERE path IN ({marks}) AND type = 'memory' "
            "AND status IN ('active', 'promoted')",
            paths,
        )
    }
    return [(p, c) for p, c in near if p in memories]


def assess(vault: VaultContext, content: str, title: str | None = None) -> Novelty:
    """Surprise, near-duplicate and semantic links of a memory about to be written."""
    settings = vault.settings.embeddings
    if not settings.enabled:  # keywords only: no vectors, and numpy is not loaded
        return Novelty()
    import numpy as np

    from vaultmem.services.semantic.embeddings import semantic_query

    text = f"{title}\n{content}".strip() if title else content
    found = semantic_query(vault, text)
    if found is None:
        return Novelty()
    neighbours = _memory_neighbours(vault, found)
    if not neighbours:
        return Novelty()
    nearest = np.array([c for _, c in neighbours[: max(1, settings.surprise_k)]])
    surprise = float(np.clip(1.0 - nearest.mean(), 0.0, 1.0))
    delta = settings.surprise_max * float(np.clip(2.0 * surprise - 1.0, -1.0, 1.0))
    best_path, best_cos = neighbours[0]
    near_dup = title_of(best_path) if best_cos >= settings.near_duplicate else None
    related = [title_of(p) for p, c in neighbours if c >= settings.auto_link_cosine]
    return Novelty(surprise, delta, near_dup, related[: max(0, vault.settings.links.auto_link_max)])


def merge_related(token_links: Sequence[str], semantic: Sequence[str], limit: int) -> list[str]:
    """Token-overlap links first, then semantic ones not already there; at most ``limit``."""
    out = list(dict.fromkeys([*token_links, *semantic]))
    return out[: max(0, limit)]
