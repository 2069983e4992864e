"""Reading any note of the vault in full, a page at a time: ``read_note`` (MCP).

A note is named by its id, title or vault-relative path (as ``show`` takes it); a path the index
does not know (a note in an ignored folder, say) is read if it is a ``.md`` file inside the
vault. Nothing outside the vault is ever read: the path is checked by
:func:`~vaultmem.store.vault_paths.confined` (no ``..``, absolute paths or dot-folders such as
``.obsidian/`` and ``.vaultmem/``) and, once symbolic links are resolved, by
:func:`~vaultmem.store.confinement.confined_path`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultmem.core.notes.note_parse import parse_note, title_of
from vaultmem.errors import InputError, NoteNotFoundError
from vaultmem.services.memories.memory_lookup import resolve_ref
from vaultmem.store.confinement import confined_path
from vaultmem.store.note_files import read_note
from vaultmem.store.vault_paths import confined

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext

PAGE_CHARS = 20_000
"""Characters of a note ``read_note`` returns by default (``limit``)."""
MAX_PAGE_CHARS = 200_000
"""The largest ``limit``."""


def _path_of(vault: VaultContext, ref: str) -> str:
    try:
        return resolve_ref(vault, ref)
    except NoteNotFoundError as err:  # any note is read: the error names notes, not memories
        missing = NoteNotFoundError(ref, err.suggestions, what="note with id, title or path")
        rel = ref.strip().replace("\\", "/")
        if "/" not in rel and not rel.lower().endswith(".md"):
            raise missing from None
        rel = rel if rel.lower().endswith(".md") else rel + ".md"
        path = confined(vault.root, rel)  # UnsafePathError: outside, .., dot-folders
        if not path.is_file():
            raise missing from None
        return rel


def read_note_page(
    vault: VaultContext, ref: str, *, offset: int = 0, limit: int = PAGE_CHARS
) -> dict[str, object]:
    """The note ``ref`` names, its whole text from character ``offset``, at most ``limit``
    characters.

    Returns ``path``, ``title``, ``kind`` (``memory``, ``box``, ``trace`` or ``note``: a
    person's own), ``chars`` (the whole text's length), ``offset``, ``text`` and
    ``next_offset`` (where the next page starts; ``None`` at the end). Raises
    :class:`NoteNotFoundError`/:class:`~vaultmem.errors.AmbiguousNoteError` for the lookup,
    :class:`~vaultmem.errors.UnsafePathError` for a path outside the vault (or in a dot-folder),
    :class:`~vaultmem.errors.NoteError` for a link leading outside it, :class:`InputError` for a
    bad ``offset``/``limit``.
    """
    if offset < 0:
        raise InputError(f"offset must be 0 or more, not {offset}")
    if not 1 <= limit <= MAX_PAGE_CHARS:
        raise InputError(f"limit must be 1..{MAX_PAGE_CHARS}, not {limit}")
    rel = _path_of(vault, ref)
    text = read_note(confined_path(vault.root, rel)).text
    if offset > len(text):
        raise InputError(f"offset {offset} is past the end of {rel} ({len(text)} characters)")
    kind = parse_note(rel, text).fields.type
    end = min(len(text), offset + limit)
    return {
        "path": rel,
        "title": title_of(rel),
        "kind": kind if kind in ("memory", "box", "trace") else "note",
        "chars": len(text),
        "offset": offset,
        "text": text[offset:end],
        "next_offset": end if end < len(text) else None,
    }


__all__ = ["MAX_PAGE_CHARS", "PAGE_CHARS", "read_note_page"]
