"""Saving one new memory: ``remember``, top to bottom in :func:`save_memory`.

The steps, each a function of its own module:

1. **Draft** — the content and options validated into a
   :class:`~vaultmem.services.memories.remembering.MemoryDraft`
   (:func:`~vaultmem.services.memories.remembering.make_draft`).
2. **Novelty** — under the vault lock, with the index current: content equal to an active
   memory's reinforces that memory instead of writing a copy
   (:func:`~vaultmem.services.memories.memory_novelty.duplicate_of`); with embeddings, surprise
   adjusts the importance and the closest memories become links
   (:func:`~vaultmem.services.memories.memory_novelty.assess`). A correction
   (``supersedes``) skips this step: its target is checked instead
   (:func:`~vaultmem.services.memories.corrections.superseded_target`).
3. **Links** — memories sharing its rarest words, merged with the semantic ones, go to
   ``related:`` (:func:`~vaultmem.services.memories.auto_links.related_memories`).
4. **Write** — a new note in STM, atomically, under a name never silently changed
   (:func:`~vaultmem.services.memories.memory_creation.create_memory`); a correction then marks
   the memory it supersedes (:func:`~vaultmem.services.memories.corrections.mark_superseded`).

docs/user-guide.md, "The memory note" and "Corrections".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from vaultmem.core.notes.fields import MemoryFields
from vaultmem.core.notes.properties import PROPERTIES, Merge
from vaultmem.core.notes.timestamps import utc_now
from vaultmem.errors import InputError
from vaultmem.services.memories.corrections import CorrectionWriter
from vaultmem.services.memories.memory_creation import NoteCreator, create_memory
from vaultmem.services.memories.memory_edits import NoteEditor
from vaultmem.services.memories.memory_lookup import load_memory
from vaultmem.store.vault_lock import vault_lock

if TYPE_CHECKING:
    from vaultmem.services.memories.memory_novelty import Novelty
    from vaultmem.services.memories.memory_view import Memory
    from vaultmem.services.memories.remembering import MemoryDraft


class MemorySaver(CorrectionWriter, NoteEditor, NoteCreator, Protocol):
    """A vault that saves new memories (``Vault`` satisfies it)."""

    def touch(self, ref: str, *, boost: bool = False, now: dt.datetime | None = None) -> Memory:
        """Reinforce the memory ``ref``: ``last_used = now``, ``use_count += 1``."""
        ...


OUTCOMES = ("written", "reinforced", "corrected")
"""What ``remember`` did: wrote a new memory, reinforced an active one with the same content
instead, or wrote a correction that superseded another memory."""


@dataclass(frozen=True, slots=True)
class Remembered:
    """The result of ``remember``: the memory written (or reinforced), what was done, the memory
    a correction superseded (path), the title clash met, if any, and — when a repeat reinforced
    a memory — what became of each option given (:func:`repeat_changes`)."""

    memory: Memory
    outcome: str
    superseded: str | None = None
    title_clash: dict[str, str] | None = None
    options: dict[str, str] | None = None

    def as_dict(self) -> dict[str, object]:
        """``outcome``, the memory's ``id``, ``path``, ``title``, ``related`` links,
        ``supersedes`` (its link to the memory it corrects), ``superseded`` (that memory's path),
        ``title_clash``, ``options`` (outcome ``reinforced``: each option given → ``applied…``,
        ``already so`` or ``not applied…``; else ``null``) and the whole ``memory`` (as ``show``
        gives it): the shape of ``remember --json`` and of the MCP tool ``remember``."""
        fields = self.memory.fields
        return {
            "outcome": self.outcome,
            "id": fields.id,
            "path": self.memory.path,
            "title": self.memory.title,
            "related": list(fields.related),
            "supersedes": fields.supersedes,
            "superseded": self.superseded,
            "title_clash": self.title_clash,
            "options": self.options,
            "memory": self.memory.as_dict(),
        }


SAVE_OPTIONS = (
    "title", "tags", "category", "importance", "imp", "confidence", "source", "layer", "pinned",
    "strength", "use_count", "created", "last_used", "id", "episode", "extra", "supersedes",
    "dedup",
)  # fmt: skip
"""The options of :func:`save_memory` (another name is refused, naming it)."""


def remember(
    vault: MemorySaver,
    content: str,
    *,
    now: dt.datetime | None = None,
    link: bool = True,
    **options: Any,
) -> Memory:
    """Save a new memory in STM ("The memory note") and return it (:func:`save_memory`)."""
    return save_memory(vault, content, now=now, link=link, **options).memory


def save_memory(
    vault: MemorySaver,
    content: str,
    *,
    now: dt.datetime | None = None,
    link: bool = True,
    **options: Any,
) -> Remembered:
    """Save a new memory in STM ("The memory note"); returns it with what was done.

    ``options``: title, tags, category, importance (0..1) or imp (1..5), confidence,
    source, layer, pinned, strength, episode (the conversation it belongs to), extra (other
    properties), supersedes (id or title of the memory this one corrects: see
    :mod:`vaultmem.services.memories.corrections`). Raises :class:`InputError`. With ``dedup=True``
    (default), content equal to an active memory's after normalisation reinforces that memory
    instead (outcome ``reinforced``, with a line in ``warnings``); the options given are then
    merged into it where they only add to it (pinned true, new tags, a higher importance) and
    the others are not applied, each said (:func:`repeat_changes`). With embeddings, surprise
    adjusts the importance (unless one was given) and close memories are linked
    (:mod:`vaultmem.services.memories.memory_novelty`).
    """
    from vaultmem.services.memories import corrections
    from vaultmem.services.memories.memory_novelty import Novelty, assess, duplicate_of
    from vaultmem.services.memories.remembering import make_draft

    unknown = sorted(set(options) - set(SAVE_OPTIONS))
    if unknown:
        known = ", ".join(SAVE_OPTIONS)
        raise InputError(f"unknown remember option {unknown[0]!r}; known: {known}")
    when = now or utc_now()
    dedup = bool(options.pop("dedup", True))
    supersedes = options.pop("supersedes", None)
    _add_episode(options, options.pop("episode", None))
    given = _given(options)
    clashes = len(vault.title_clashes)
    old = vault.resolve(str(supersedes)) if supersedes is not None else None
    category_given = options.get("category") is not None
    draft = make_draft(content, **options)  # 1. draft
    novelty = Novelty()
    with vault_lock(vault.sidecar, timeout_seconds=vault.lock_wait_seconds):
        vault.index.check_writable()
        vault.catch_up()
        if old is not None:  # a correction: its target is checked instead of its novelty
            old = corrections.superseded_target(vault, str(supersedes))
            draft = corrections.as_correction(draft, old, category_given=category_given)
        else:  # 2. novelty
            existing = duplicate_of(vault, draft.content) if dedup else None
            if existing is not None:
                return _reinforce(vault, existing, draft, given, when)
            if link:
                novelty = assess(vault, draft.content, draft.title)
            draft = with_novelty(draft, novelty, importance_given=_importance_given(options))
        path = write_draft(  # 3. links, 4. write
            vault, draft, now=when, link=link, synced=True, semantic_links=novelty.related
        )
        if old is not None:
            corrections.mark_superseded(vault, old, path, now=when)
    if novelty.surprise is not None:  # a provider answered: embed the new note now
        from vaultmem.services.semantic.embeddings import embed_new

        embed_new(vault, path, when)
    outcome = "written" if old is None else "corrected"
    return Remembered(load_memory(vault, path, when), outcome, old, _clash(vault, clashes))


def _add_episode(options: dict[str, Any], episode: object) -> None:
    """The conversation a memory belongs to goes to its ``episode`` property."""
    if episode is None:
        return
    if not isinstance(episode, str) or not episode.strip():
        raise InputError(f"episode must be a non-empty text, not {episode!r}")
    options["extra"] = {**(options.get("extra") or {}), "episode": episode.strip()}


MERGED_ON_REPEAT = frozenset({Merge.ANY_TRUE, Merge.SET, Merge.LARGER})
"""The merge rules (:data:`~vaultmem.core.notes.properties.PROPERTIES`) of the options a repeat
applies to the memory it reinforces, as git's merge driver merges two sides: those that only
add to it (``pinned`` true, new ``tags``, a higher ``importance``). Every other option is not
applied (the memory keeps its own value) and said so."""


def _given(options: dict[str, Any]) -> list[str]:
    """The names of the options given (not ``None``): ``imp`` as ``importance``, each key of
    ``extra`` (``episode`` included) as itself."""
    names: list[str] = []
    for key, value in options.items():
        if value is None:
            continue
        if key == "extra":
            names += [str(k) for k in value or {}]
        else:
            names.append("importance" if key == "imp" else key)
    return list(dict.fromkeys(names))


def _rule(key: str) -> Merge | None:
    """The merge rule of the property ``key`` (``None``: not a property, e.g. ``title``)."""
    found = PROPERTIES.get(key)
    return found.merge if found is not None else None


def repeat_changes(
    fields: MemoryFields, title: str, draft: MemoryDraft, given: Sequence[str]
) -> tuple[dict[str, object], dict[str, str]]:
    """What a repeat (``remember`` of content an active memory holds) does with each option
    ``given``: the changes to write to that memory (its ``fields``, its ``title``) and, per
    option, ``"applied"`` (with what changed), ``"already so"`` or ``"not applied"`` (with why).

    An option whose property merges by a rule of :data:`MERGED_ON_REPEAT` is merged by that
    rule; any other option (``title``, ``category``, ``layer``, ``confidence``…) is not applied
    unless the memory already has that value.
    """
    from vaultmem.core.notes.naming import safe_title

    changes: dict[str, object] = {}
    said: dict[str, str] = {}
    for key in given:
        wanted: Any = draft.extra.get(key) if key in draft.extra else getattr(draft, key, None)
        current: Any = getattr(fields, key) if key in MemoryFields._fields else None
        if key == "title":
            wanted, current = safe_title(str(wanted)), title
        rule = _rule(key)
        if rule not in MERGED_ON_REPEAT:
            kept = "" if current is None else f": it keeps {current!r}"
            said[key] = "already so" if current == wanted else "not applied" + kept
        elif rule is Merge.SET:  # tags: the new ones are added
            have = {str(t).lower() for t in current or ()}
            new = [t for t in wanted if str(t).lower() not in have]
            if new:
                changes[key] = [*(current or ()), *new]
            said[key] = "applied: added " + ", ".join(new) if new else "already so"
        elif rule is Merge.ANY_TRUE:  # pinned
            if wanted and not current:
                changes[key] = True
            said[key] = (
                "applied" if wanted and not current
                else "already so" if bool(wanted) == bool(current)
                else "not applied: it stays pinned; unpin unpins it"
            )
        elif current is None or wanted > current:  # importance: the higher
            changes[key] = wanted
            said[key] = f"applied: {current:g} → {wanted:g}" if current is not None else "applied"
        else:
            said[key] = "already so" if wanted == current else f"not applied: it keeps {current:g}"
    return changes, said


def _reinforce(
    vault: MemorySaver, path: str, draft: MemoryDraft, given: Sequence[str], when: dt.datetime
) -> Remembered:
    """Reinforce the memory at ``path``, which already says ``draft``'s content, merging the
    options ``given`` into it (:func:`repeat_changes`, one write with the touch); a warning
    line says what became of the options."""
    from vaultmem.core.notes.note_parse import title_of
    from vaultmem.core.scoring.reinforcement import touch_changes
    from vaultmem.services.memories.memory_edits import edit_note

    said: dict[str, str] = {}

    def compute(fields: MemoryFields) -> dict[str, object]:
        changes, outcome = repeat_changes(fields, title_of(path), draft, given)
        said.clear()  # (computed again when the note changed meanwhile)
        said.update(outcome)
        return {**touch_changes(fields, when), **changes}

    memory = edit_note(vault, path, compute, now=when)
    line = f"same content as {path}: reinforced it instead of writing a copy"
    applied = [
        f"{key} ({how.removeprefix('applied: ')})" if how != "applied" else key
        for key, how in said.items()
        if how.startswith("applied")
    ]
    dropped = [
        f"{key} ({how.removeprefix('not applied: ')})" if how != "not applied" else key
        for key, how in said.items()
        if how.startswith("not applied")
    ]
    if applied:
        line += "; applied: " + ", ".join(applied)
    if dropped:
        line += "; not applied: " + ", ".join(dropped)
    if any(how.startswith("not applied") and _rule(key) not in MERGED_ON_REPEAT
           for key, how in said.items()):
        line += " — to have those, remember it again with supersedes naming that memory"
    vault.warnings.append(line)
    return Remembered(memory, "reinforced", options=said)


def _importance_given(options: dict[str, Any]) -> bool:
    return options.get("importance") is not None or options.get("imp") is not None


def with_novelty(draft: MemoryDraft, novelty: Novelty, *, importance_given: bool) -> MemoryDraft:
    """``draft`` with what :func:`~vaultmem.services.memories.memory_novelty.assess` found: its
    importance moved by the surprise (unless one was given, clamped to 0..1) and the novelty
    properties added."""
    importance = draft.importance
    if not importance_given:
        importance = min(1.0, max(0.0, round(importance + novelty.importance_delta, 3)))
    return replace(draft, importance=importance, extra={**draft.extra, **novelty.fields()})


def _clash(vault: MemorySaver, before: int) -> dict[str, str] | None:
    """The title clash this save met (``vault.title_clashes`` grew), if any."""
    return vault.title_clashes[-1] if len(vault.title_clashes) > before else None


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
    to its ``related:`` property (:func:`draft_links`). ``synced`` = the caller holds the vault
    lock and has just synced the index (bulk imports), so it is not synced again.
    """
    with vault_lock(vault.sidecar, timeout_seconds=vault.lock_wait_seconds):
        vault.index.check_writable()
        if not synced:
            vault.catch_up()
        if draft.id is not None:
            taken = vault.index.paths_by_id(draft.id)
            if taken:
                raise InputError(f"id {draft.id} is already used by {taken[0]}")
        fields = draft.frontmatter(now)
        related = draft_links(vault, draft, semantic_links) if link else []
        if related:
            fields["related"] = [f"[[{title}]]" for title in related]
        return create_memory(vault, draft.content, fields, title=draft.title)


def draft_links(
    vault: MemorySaver, draft: MemoryDraft, semantic_links: Sequence[str] = ()
) -> list[str]:
    """Titles for the new memory's ``related:``: memories sharing its rarest words
    (:func:`~vaultmem.services.memories.auto_links.related_memories`) merged with
    ``semantic_links``, at most ``[links] auto_link_max``."""
    from vaultmem.services.memories.auto_links import related_memories
    from vaultmem.services.memories.memory_novelty import merge_related

    return merge_related(
        related_memories(vault, draft.content, draft.tags),
        semantic_links,
        vault.settings.links.auto_link_max,
    )


__all__ = [
    "MERGED_ON_REPEAT", "OUTCOMES", "MemorySaver", "Remembered", "draft_links", "remember",
    "repeat_changes", "save_memory", "with_novelty", "write_draft",
]  # fmt: skip
