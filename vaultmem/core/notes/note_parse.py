"""One note's text → everything the index and the services need to know about it.

Pure: the caller reads the file and passes its text. A note whose frontmatter does not parse,
that holds git conflict markers, that was not valid UTF-8, or that is a sync-conflict copy is
still indexed (as plain text, with its ``problems``) and is never written to (docs/user-guide.md,
"The vault", "The memory note").
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # the parser's modules load on the first parse (_load_parser)
    from collections.abc import Callable

    from vaultmem.core.links.links import Link, extract_links
    from vaultmem.core.notes.fields import FieldWarning, MemoryFields, read_fields
    from vaultmem.core.notes.note_reading import (
        FrontmatterError,
        find_conflict_markers,
        parse_frontmatter,
        split_frontmatter,
    )

CONFLICT_PROBLEM = "git conflict markers"
"""Start of the problem recorded for a note holding conflict markers (``doctor`` kind
``conflict-markers``; ``list`` and ``recall`` flag such notes ``conflicted``)."""
CONFLICT_FIX = (
    "resolve the marked lines, or run `vaultmem doctor --fix` to merge conflicted properties"
)

_CONFLICT_COPY = re.compile(
    r"\(conflicted copy [^)]*\)\.md$|\.sync-conflict-[\w-]*\.md$"
    r"|(^|/)conflict-files-obsidian-git\.md$",
    re.I,
)


class ParsedNote(NamedTuple):
    """A parsed note; ``path`` is vault-relative POSIX, ``title`` the file name without ``.md``.

    Immutable (``note._replace(...)`` gives a changed copy). A named tuple rather than a frozen
    dataclass: making the class costs every process that reads notes 0.1 ms instead of 0.6.
    """

    path: str
    title: str
    frontmatter: dict[str, Any]
    fields: MemoryFields
    body: str
    links: tuple[Link, ...]
    problems: tuple[str, ...]
    warnings: tuple[FieldWarning, ...]

    @property
    def writable(self) -> bool:
        """False when vaultmem must never write this note (it has problems)."""
        return not self.problems


def title_of(path: str) -> str:
    """Obsidian's title of a note: its file name without the ``.md`` extension."""
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def is_conflict_copy(path: str) -> bool:
    """Sync tools' conflict copies (``(conflicted copy …)``, Syncthing's ``.sync-conflict-…``)
    and obsidian-git's conflict file ("Syncing with git")."""
    # each holds "conflict" in some case: an ASCII path without it (nearly all) skips the
    # search (the expression ignores case as Unicode does: "İ" is an "i" to it)
    if path.isascii() and "conflict" not in path.lower():
        return False
    return bool(_CONFLICT_COPY.search(path))


_parser_loaded = False


def _load_parser() -> None:
    """Bind the parser's functions as names of this module, once, on the first parse: recall
    needs only :func:`title_of`; and four ``import`` statements run for every note cost 1.6 µs
    each time (0.16 s of CPU over a 100,000-note cold index). Typed by the imports above."""
    global _parser_loaded
    from vaultmem.core.links.links import extract_links
    from vaultmem.core.notes.fields import read_fields
    from vaultmem.core.notes.note_reading import (
        FrontmatterError,
        find_conflict_markers,
        parse_frontmatter,
        split_frontmatter,
    )

    globals().update(
        read_fields=read_fields, extract_links=extract_links, FrontmatterError=FrontmatterError,
        find_conflict_markers=find_conflict_markers, parse_frontmatter=parse_frontmatter,
        split_frontmatter=split_frontmatter,
    )  # fmt: skip
    _parser_loaded = True


def parse_note(
    path: str,
    text: str,
    *,
    fallback_time: dt.datetime | None = None,
    extra_problems: tuple[str, ...] = (),
) -> ParsedNote:
    """Parse ``text`` of the note at vault-relative ``path``; never raises on bad content.

    ``fallback_time`` stands in for a missing ``created`` (the file's mtime);
    ``extra_problems`` lets the reader add what it saw (e.g. "not UTF-8").

    A note holding git conflict markers is read from its "ours" side (the lines before each
    ``=======``), so it stays listed and findable, with the problem recorded: it is never
    written until the markers are gone.
    """
    if not _parser_loaded:
        _load_parser()
    problems = list(extra_problems)
    markers = find_conflict_markers(text)
    if markers:
        lines = ", ".join(str(n) for n in markers[:5])
        problems.append(f"{CONFLICT_PROBLEM} at line {lines}; {CONFLICT_FIX}")
        from vaultmem.core.notes.note_merge import conflict_sides  # difflib: only for such a note

        text = conflict_sides(text)[0]
    if is_conflict_copy(path):
        problems.append("sync conflict copy")
    yaml_text, body = split_frontmatter(text)
    linked_body = body
    frontmatter: dict[str, Any] = {}
    if yaml_text is not None:
        try:
            frontmatter = parse_frontmatter(yaml_text)
        except FrontmatterError as err:
            problems.append(str(err))
            body = text  # searchable as it stands; its links still come from the body alone
    fields, warnings = read_fields(frontmatter, fallback_time=fallback_time)
    if not fields.managed:  # vaultmem's keys mean nothing in a person's own notes
        warnings = []
    try:
        # frontmatter links are "[[…]]" strings: skip walking the values when there are none
        holds_links = yaml_text is not None and "[[" in yaml_text
        links = tuple(extract_links(linked_body, frontmatter if holds_links else None))
    except RecursionError:  # pathological nesting; the note is still searchable
        links = ()
        problems.append("links could not be parsed")
    # (positional: the named tuple's keyword arguments cost every note read 1.5 µs)
    return ParsedNote(
        path, title_of(path), frontmatter, fields, body, links, tuple(problems), tuple(warnings)
    )


def as_alias(note: ParsedNote, alias_of: str, indexed: Callable[[str], bool]) -> ParsedNote:
    """``note`` read through a symbolic link to the note at ``alias_of`` ("" when not a link).

    A link to a note the index holds (``indexed(alias_of)``) is only another name for it: no
    memory fields, text or links of its own, so that note is never counted, found, moved or
    merged twice. A link to a note the index skips (an excluded folder) stays the note.
    """
    if alias_of and indexed(alias_of):
        from vaultmem.core.notes.fields import MemoryFields

        return note._replace(fields=MemoryFields(), body="", links=(), warnings=())
    return note
