"""Resolve a link target to a note path the way Obsidian does (docs/user-guide.md,
"Index and graph").

Paths are vault-relative POSIX strings of ``.md`` notes and attachments (``"Folder/Note.md"``,
``"img/Photo.png"``), as the store finds them on disk; the caller leaves out ignored paths
(docs/user-guide.md, "The vault"). Targets are :attr:`vaultmem.core.links.links.Link.target`
strings: no ``#subpath``, no ``|display``, markdown links already URL-decoded. Pure: no file I/O.

Order of the rules in :meth:`LinkResolver.resolve`:

1. ``./x`` and ``../x`` are joined to the linking note's folder and must then match a path
   exactly; a path that climbs above the vault root resolves to nothing.
2. ``/x`` matches the vault path ``x`` exactly, and so does any target that equals a full vault
   path (``[[Folder/Note]]``, or ``[[Note]]`` for a note at the root).
3. A bare name (no ``/``) that only one note has resolves to that note.
4. Otherwise the candidates are the notes whose path ends with the link path on a ``/``
   boundary; those inside the linking note's folder (at any depth) come first, then the rest,
   each shortest path first, ties broken by the path's text.

Everywhere: ``.md`` is appended when the link names neither a note (``.md``) nor an attachment
of a format Obsidian opens (:data:`ATTACHMENT_EXTENSIONS`: ``[[v1.2 notes]]`` looks up
``v1.2 notes.md``, ``![[Photo.avif]]`` looks up ``Photo.avif``); comparison is
case-insensitive after NFC normalisation; empty segments and ``.`` segments are dropped.
Frontmatter ``aliases`` are not link targets.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator

__all__ = ["ATTACHMENT_EXTENSIONS", "LinkResolver", "fold_path", "is_attachment", "note_key"]

#: Lower-case extensions (no dot) of the files Obsidian opens besides notes: images, audio,
#: video, PDF, canvases and bases. Links to them are graph edges to files (docs/user-guide.md).
ATTACHMENT_EXTENSIONS: frozenset[str] = frozenset(
    {"avif", "bmp", "gif", "jpeg", "jpg", "png", "svg", "webp"}  # images
    | {"flac", "m4a", "mp3", "ogg", "wav", "webm", "3gp"}  # audio
    | {"mkv", "mov", "mp4", "ogv"}  # video
    | {"pdf", "canvas", "base"}
)


def is_attachment(path: str) -> bool:
    """True when ``path`` (a link target or a file path) ends in an :data:`ATTACHMENT_EXTENSIONS`
    extension, case-insensitively: ``"img/A.PNG"`` yes, ``"v1.2 notes"`` and ``"a.md"`` no."""
    dot = path.rfind(".")
    if dot == -1 or dot < path.rfind("/"):
        return False
    return path[dot + 1 :].lower() in ATTACHMENT_EXTENSIONS


def fold_path(path: str) -> str:
    """``path`` in the form links are compared in: NFC-normalised, then lower-cased."""
    if not path.isascii():
        path = unicodedata.normalize("NFC", path)
    return path.lower()


def note_key(target: str) -> str:
    """The lower-cased file name a link looks up: ``"Folder/My Note"`` → ``"my note.md"``.

    The base name after the last ``/``, folded with :func:`fold_path`, with ``.md`` appended
    unless it already ends in ``.md`` or names an attachment (``"img/A.png"`` → ``"a.png"``).
    The index stores unresolved links under this key so they resolve once a note of that name
    appears; :meth:`LinkResolver.add` files notes under the same key.
    """
    return _with_md(fold_path(target[target.rfind("/") + 1 :]))


def _with_md(folded: str) -> str:
    return folded if folded.endswith(".md") or is_attachment(folded) else folded + ".md"


def _clean_segments(path: str) -> list[str] | None:
    """``path`` split at ``/``, ``""``/``"."`` dropped, ``".."`` applied; None above the root."""
    out: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                return None
            out.pop()
        else:
            out.append(part)
    return out


def _folder(path: str) -> str:
    return path[: path.rfind("/") + 1] if "/" in path else ""


class LinkResolver:
    """Which note a link opens, for a changing set of notes ("Index and graph").

    Holds ``note_key(path)`` → the paths filed under it: :meth:`add` and :meth:`remove` cost
    O(notes sharing the base name), :meth:`resolve` the same. 100,000 notes take about 16 MB
    beside the path strings. Not thread-safe.
    """

    __slots__ = ("_by_key", "_count")

    def __init__(self, paths: Iterable[str] = ()) -> None:
        """Start with ``paths``, vault-relative POSIX paths of ``.md`` notes and attachments."""
        self._by_key: dict[str, tuple[str, ...]] = {}
        self._count = 0
        for path in paths:
            self.add(path)

    def add(self, path: str) -> None:
        """Add the note at ``path``; adding a path twice keeps one."""
        key = note_key(path)
        bucket = self._by_key.get(key, ())
        if path not in bucket:
            self._by_key[key] = (*bucket, path)
            self._count += 1

    def remove(self, path: str) -> None:
        """Forget the note at ``path``; a path never added is ignored."""
        key = note_key(path)
        bucket = self._by_key.get(key, ())
        if path in bucket:
            self._count -= 1
            rest = tuple(p for p in bucket if p != path)
            if rest:
                self._by_key[key] = rest
            else:
                del self._by_key[key]

    def __contains__(self, path: object) -> bool:
        """True when exactly this path (same case, same bytes) was added."""
        return isinstance(path, str) and path in self._by_key.get(note_key(path), ())

    def __len__(self) -> int:
        return self._count

    def named(self, key: str) -> int:
        """How many paths are filed under ``key`` (a :func:`note_key`). A target without ``/``
        whose key names at most one path resolves the same from every note."""
        return len(self._by_key.get(key, ()))

    def resolves_alike(self, target: str) -> bool:
        """Whether :meth:`resolve` gives ``target`` the same path (or None) from every note: a
        target that is not relative (``./x``, ``../x``) and whose :func:`note_key` names at most
        one path. Only the linking note's folder tells candidates apart, and there is at most
        one. (A caller may then resolve such a target once per vault.)"""
        target = target.strip()  # (as resolve reads it)
        return self.named(note_key(target)) <= 1 and not target.startswith(("./", "../"))

    def __iter__(self) -> Iterator[str]:
        for bucket in self._by_key.values():
            yield from bucket

    def resolve(self, target: str, source_path: str) -> str | None:
        """The path Obsidian would open for ``target`` written in the note at ``source_path``.

        ``target`` is a :attr:`Link.target` (no ``#``/``|`` parts); ``source_path`` the linking
        note's vault-relative path (it need not be in the resolver). Returns a path exactly as
        it was added, or ``None`` when no note matches (an unresolved link). Only notes filed
        under ``note_key(target)`` are looked at, so a resolver built from just those paths
        answers the same.
        """
        target = target.strip()
        if target[target.rfind("/") + 1 :] in ("", ".", ".."):
            return None  # a folder, not a note
        if target.startswith(("./", "../")):
            segments = _clean_segments(_folder(source_path) + target)
            return None if not segments else self._exact("/".join(segments))
        segments = _clean_segments(target)
        if not segments:
            return None
        as_written = "/".join(segments)
        linkpath = _with_md(fold_path(as_written))
        bucket = self._by_key.get(note_key(linkpath))
        if not bucket:
            return None
        if len(segments) == 1 and len(bucket) == 1 and not target.startswith("/"):
            return bucket[0]  # the common case: a unique bare name
        folded = [(fold_path(p), p) for p in bucket]
        exact = _exact_in(folded, linkpath, as_written)
        if exact is not None or target.startswith("/"):
            return exact
        if len(segments) == 1:
            matching = folded
        else:
            tail = "/" + linkpath
            matching = [(f, p) for f, p in folded if f.endswith(tail)]
            if not matching:
                return None
        here = fold_path(_folder(source_path))
        return min(matching, key=lambda fp: (not fp[0].startswith(here), len(fp[0]), fp))[1]

    def _exact(self, path: str) -> str | None:
        linkpath = _with_md(fold_path(path))
        bucket = self._by_key.get(note_key(linkpath), ())
        return _exact_in([(fold_path(p), p) for p in bucket], linkpath, path)


def _exact_in(folded: list[tuple[str, str]], linkpath: str, as_written: str) -> str | None:
    """The path whose folded form is ``linkpath``; among case variants the same spelling first."""
    hits = [p for f, p in folded if f == linkpath]
    if len(hits) > 1:
        lowered = as_written.lower()
        spelled = as_written if _with_md(lowered) == lowered else as_written + ".md"
        return spelled if spelled in hits else min(hits)
    return hits[0] if hits else None
