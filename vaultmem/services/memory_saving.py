"""Saving one new memory: ``remember`` and the draft it writes.

``remember`` makes a draft (:mod:`vaultmem.services.remembering`) and, under the vault lock,
reinforces an active memory with the same content instead of writing a copy, writes a
correction when the draft supersedes another memory (docs/user-guide.md, "Corrections"), and
with embeddings lets surprise adjust the importance and links close memories
(:mod:`vaultmem.services.memory_novelty`). :func:`write_draft` writes a validated draft as a new
note in STM, with its auto-links in ``related:`` (docs/user-guide.md, "The memory note").
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from vaultmem.core.timestamps import utc_now
from vaultmem.errors import InputError
from vaultmem.services.corrections import CorrectionWriter
from vaultmem.services.memory_creation import NoteCreator, create_memory
from vaultmem.services.memory_edits import NoteEditor
from vaultmem.services.memory_lookup import load_memory
from vaultmem.store.vault_lock import vault_lock

if TYPE_CHECKING:
    from vaultmem.services.memory_view import Memory
    from vaultmem.services.remembering import MemoryDraft


class MemorySaver(CorrectionWriter, NoteEditor, NoteCreator, Protocol):
    """A vault that saves new memories (``Vault`` satisfies it)."""

    def touch(self, ref: str, *, boost: bool = False, now: dt.datetime | None = None) -> Memory:
        """Reinforce the memory ``ref``: ``last_used = now``, ``use_count += 1``."""
        ...


def remember(
    vault: MemorySaver,
    content: str,
    *,
    now: dt.datetime | None = None,
    link: bool = True,
    **options: Any,
) -> Memory:
    """Save a new memory in STM ("The memory note") and return it.

    ``options``: title, tags, category, importance (0..1) or imp (1..5), confidence,
    source, layer, pinned, strength, extra (other properties), supersedes (id or title of
    the memory this one corrects: see :mod:`vaultmem.services.corrections`). Raises
    :class:`InputError`. With ``dedup=True`` (default), content equal to an active memory's
    after normalisation reinforces that memory instead (returned, with a line in
    ``warnings``). With embeddings, surprise adjusts the importance (unless one was given)
    and close memories are linked (:mod:`vaultmem.services.memory_novelty`).
    """
    from vaultmem.services.corrections import remember_correction
    from vaultmem.services.memory_novelty import Novelty, assess, duplicate_of
    from vaultmem.services.remembering import make_draft

    when = now or utc_now()
    dedup = bool(options.pop("dedup", True))
    supersedes = options.pop("supersedes", None)
    if supersedes is not None:
        path = remember_correction(
            vault, content, str(supersedes), now=when, link=link, options=options
        )
        return load_memory(vault, path, when)
    draft = make_draft(content, **options)
    with vault_lock(vault.sidecar, timeout_seconds=vault.lock_wait_seconds):
        vault.index.check_writable()
        vault.catch_up()
        if dedup:
            existing = duplicate_of(vault, draft.content)
            if existing is not None:
                vault.warnings.append(
                    f"same content as {existing}: reinforced it instead of writing a copy"
                )
                return vault.touch(existing, now=when)
        novelty = assess(vault, draft.content, draft.title) if link else Novelty()
        explicit = options.get("importance") is not None or options.get("imp") is not None
        draft = replace(
            draft,
            importance=draft.importance
            if explicit
            else min(1.0, max(0.0, round(draft.importance + novelty.importance_delta, 3))),
            extra={**draft.extra, **novelty.fields()},
        )
        path = write_draft(
            vault, draft, now=when, link=link, synced=True, semantic_links=novelty.related
        )
    if novelty.surprise is not None:  # a provider answered: embed the new note now
        from vaultmem.services.embeddings import embed_new

        embed_new(vault, path, when)
    return load_memory(vault, path, when)


def write_draft(
    vault: MemorySaver,
    draft: MemoryDraft,
    *,
    now: dt.datetime,
    link: bool = True,
    synced: bool = False,
    semantic_links: Sequence[str] = (),
) -> str:
    """Write a validated :class:`MemoryDraft` as a new note; returns its path.

    With ``link``, managed memories similar to it (semantic auto-links, "Recall") are written
    to its ``related:`` property. ``synced`` = the caller holds the vault lock and has just
    synced the index (bulk imports), so it is not synced again.
    """
    from vaultmem.services.auto_links import related_memories
    from vaultmem.services.memory_novelty import merge_related

    with vault_lock(vault.sidecar, timeout_seconds=vault.lock_wait_seconds):
        vault.index.check_writable()
        if not synced:
            vault.catch_up()
        if draft.id is not None:
            taken = vault.index.paths_by_id(draft.id)
            if taken:
                raise InputError(f"id {draft.id} is already used by {taken[0]}")
        fields = draft.frontmatter(now)
        if link:
            related = merge_related(
                related_memories(vault, draft.content, draft.tags),
                semantic_links,
                vault.settings.links.auto_link_max,
            )
            if related:
                fields["related"] = [f"[[{title}]]" for title in related]
        return create_memory(vault, draft.content, fields, title=draft.title)


__all__ = ["MemorySaver", "remember", "write_draft"]
