"""Walking the vault: which files are notes and attachments the index tracks, and their stats.

A walk never reads a file: it lists folders (through their descriptors where the system allows)
and stats each note, skipping dot paths, ``[index] exclude`` patterns and linked folders; a
linked note is kept only when its target lies inside the vault (docs/user-guide.md, "The
vault").
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmem.core.links.link_resolution import is_attachment
from vaultmem.core.settings import Settings
from vaultmem.store.confinement import resolves_inside

if TYPE_CHECKING:
    from os import _ScandirIterator


def is_utf8_name(name: str) -> bool:
    """Whether a file name (or path) read from the file system is valid UTF-8.

    Python decodes the bytes of a name that is not with surrogate escapes (``café`` written in
    Latin-1 becomes ``'caf\\udce9'``). Such a file is not indexed: no index row can hold its
    name, and Obsidian cannot open it or link to it either.
    """
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(name: str) -> str:
    """``name`` printable: bytes that are not UTF-8 shown as ``\\xNN`` (``caf\\xe9.md``)."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def is_ignored(relpath: str, settings: Settings) -> bool:
    """Ignored ("The vault"): dot path parts, non-``.md`` files, names that are not UTF-8
    (:func:`is_utf8_name`) and ``[index] exclude`` patterns."""
    parts = relpath.split("/")
    if any(part.startswith(".") for part in parts) or not relpath.lower().endswith(".md"):
        return True
    if not is_utf8_name(relpath):
        return True
    return any(fnmatch.fnmatchcase(relpath, pattern) for pattern in settings.index.exclude)


def is_tracked_attachment(relpath: str, settings: Settings) -> bool:
    """An attachment the index tracks (so links to it resolve): a file of a format Obsidian
    opens besides notes, outside dot folders and ``[index] exclude`` patterns, whose name is
    UTF-8."""
    if not is_attachment(relpath) or any(part.startswith(".") for part in relpath.split("/")):
        return False
    if not is_utf8_name(relpath):
        return False
    return not any(fnmatch.fnmatchcase(relpath, pattern) for pattern in settings.index.exclude)


UNSTATED = (-1, -1)
"""What :func:`scan_vault` gives each note instead of its (size, mtime_ns) when told not to stat."""


def scan_vault(
    root: Path,
    settings: Settings,
    *,
    folder: str = "",
    attachments: set[str] | None = None,
    linked: set[str] | None = None,
    misnamed: list[str] | None = None,
    stats: bool = True,
) -> dict[str, tuple[int, int]]:
    """Every note of the vault: vault-relative POSIX path → (size, mtime_ns). Never reads files.

    ``stats`` False: the notes are not stat'ed and each is given :data:`UNSTATED` (a cold
    index, which stats each note as it reads it, needs only the paths: a stat is 1.5 µs).

    ``folder`` (vault-relative) limits the walk to the notes below it; paths stay vault-relative
    so ``[index] exclude`` patterns match as they do in a full walk. ``attachments``, when
    given, receives the path of every attachment the walk passes (never stat'ed). Linked
    folders are not entered; a linked note is kept only when its target lies inside the vault,
    and ``linked``, when given, receives its path (what a pass leaves in place). Files and
    folders whose names are not UTF-8 are passed over (:func:`is_utf8_name`); ``misnamed``, when
    given, receives their paths, undecodable bytes shown as ``\\xNN``.
    """
    found: dict[str, tuple[int, int]] = {}
    excludes = settings.index.exclude
    start = folder.strip("/")
    stack = [(str(root / start), start + "/" if start else "", True)]
    while stack:
        folder, prefix, first = stack.pop()
        try:
            entries, fd = _listing(folder, follow=first)
        except OSError:
            continue
        with _closing(fd), entries:
            for entry in entries:
                name = entry.name
                if name[0] == ".":
                    continue
                if not name.isascii() and not is_utf8_name(name):
                    if misnamed is not None and _would_be_tracked(entry):
                        misnamed.append(shown_name(prefix + name))
                    continue
                try:
                    if name[-3:].lower() == ".md":
                        # a plain file first (nearly every entry of a vault): one check
                        plain = entry.is_file(follow_symlinks=False)
                        if plain or (entry.is_symlink() and entry.is_file()):
                            rel = prefix + name
                            if excludes and any(fnmatch.fnmatchcase(rel, p) for p in excludes):
                                continue
                            if not plain:
                                if not resolves_inside(root, rel):
                                    continue  # a link out of the vault is never read
                                if linked is not None:
                                    linked.add(rel)
                            if stats:
                                info = entry.stat()
                                found[rel] = (info.st_size, info.st_mtime_ns)
                            else:
                                found[rel] = UNSTATED
                            continue
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((folder + os.sep + name, prefix + name + "/", False))
                    elif attachments is not None and is_attachment(name) and entry.is_file():
                        rel = prefix + name
                        if excludes and any(fnmatch.fnmatchcase(rel, p) for p in excludes):
                            continue
                        attachments.add(rel)
                except OSError:
                    continue
    return found


def _would_be_tracked(entry: os.DirEntry[str]) -> bool:
    """A folder, a note or an attachment: what the walk would look at but for its name."""
    name = entry.name
    try:
        return (
            entry.is_dir(follow_symlinks=False)
            or name[-3:].lower() == ".md"
            or is_attachment(name)
        )
    except OSError:
        return False


NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_LIST_BY_FD = os.scandir in os.supports_fd
_FOLDER_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _listing(folder: str, *, follow: bool) -> tuple[_ScandirIterator[str], int | None]:
    """``os.scandir`` of ``folder`` and the descriptor it lists (``None``: listed by path).

    Where the system allows it the folder is opened and listed through its descriptor, so each
    entry's ``stat`` is looked up relative to it (``fstatat``) instead of walking the whole path
    again: about an eighth less time per note at 100,000 notes. A folder opened with ``follow``
    False that became a symbolic link since its parent was listed is not entered (``OSError``).
    """
    if not _LIST_BY_FD:
        return os.scandir(folder), None
    fd = os.open(folder, _FOLDER_FLAGS | (0 if follow else NOFOLLOW))
    try:
        return os.scandir(fd), fd
    except BaseException:
        os.close(fd)
        raise


@contextmanager
def _closing(fd: int | None) -> Iterator[None]:
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)
