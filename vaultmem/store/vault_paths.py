"""Confinement: every path vaultmem writes, moves or deletes lies inside the vault.

One check, used by every writer (journal, passes, ``remember``, settings folders): a
vault-relative POSIX path is accepted only when it is relative, has no ``..`` or empty part, no
part starting with a dot (``.git/``, ``.obsidian/``, ``.vaultmem/``, hidden files), and still
lies inside the vault once symlinks are resolved (a folder that is a symlink to elsewhere is
refused). See docs/user-guide.md, "Many writers".

Inside :func:`checked_folders_scope` (one lifecycle pass), a folder found to be a real directory
— no symlink on the way down to it — is remembered and not walked again for the next note in
it; the note's own path is still checked every time.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path, PureWindowsPath

from vaultmem.errors import UnsafePathError


def confined(root: Path, relative: str) -> Path:
    """``root / relative`` after checking it stays inside the vault ``root``.

    ``relative`` is a vault-relative POSIX path (``STM/Note.md``). Returns the absolute path
    (symlinks of the note itself are not followed in the result, so a rename moves the link).
    Raises :class:`~vaultmem.errors.UnsafePathError` naming the path when it is empty, absolute
    (POSIX or Windows), holds ``..``, ``\\`` or a NUL, has a dot-part, or resolves outside
    ``root`` (or into a dot-folder) through a symlink.
    """
    if not isinstance(relative, str):
        raise UnsafePathError(repr(relative), "not a vault-relative path")
    parts = _checked_parts(relative)
    base = _resolved(str(root)) if root.is_absolute() else root.resolve()
    # the folder holding the note must resolve inside the vault (a symlinked folder could
    # point anywhere); the note itself, if a symlink, must point inside too. ``base`` is
    # resolved, so a folder none of whose parts below it is a link is inside as it stands.
    # Strings, not Paths, until the end: this runs several times for every note a pass moves.
    folder = str(base)
    target = os.path.join(folder, *parts)
    known = _CHECKED_FOLDERS.get()
    parent = os.path.dirname(target)
    if known is None or parent not in known:
        real_folders = True  # every folder down to the note exists and is no link
        for part in parts[:-1]:
            folder = os.path.join(folder, part)
            try:
                mode = os.lstat(folder).st_mode
            except OSError:
                real_folders = False
                continue
            if stat.S_ISLNK(mode):
                _inside(relative, base, os.path.realpath(parent))
                real_folders = False
                break
            real_folders = real_folders and stat.S_ISDIR(mode)
        if real_folders and known is not None:
            known.add(parent)
    if os.path.islink(target):
        _inside(relative, base, os.path.realpath(target))
    return Path(target)


_CHECKED_FOLDERS: ContextVar[set[str] | None] = ContextVar("checked_folders", default=None)


@contextmanager
def checked_folders_scope() -> Iterator[None]:
    """Within the block, :func:`confined` walks each folder of the vault once.

    A folder (absolute path) whose every part was found an existing directory that is no
    symlink is remembered until the block ends; a folder that did not exist yet, or has a
    symlink on the way, is checked again on every call. For one command that holds the vault
    lock (a lifecycle pass), which moves thousands of notes between a few folders: each
    note's own path is still checked on every call. Nested blocks share the outer one's memory.
    """
    if _CHECKED_FOLDERS.get() is not None:
        yield
        return
    token = _CHECKED_FOLDERS.set(set())
    try:
        yield
    finally:
        _CHECKED_FOLDERS.reset(token)


@functools.lru_cache(maxsize=16384)
def _checked_parts(relative: str) -> tuple[str, ...]:
    """The parts of a vault-relative path, after the checks that need no file system."""
    if not relative.strip():
        raise UnsafePathError(repr(relative), "not a vault-relative path")
    if "\x00" in relative or "\\" in relative:
        raise UnsafePathError(relative, "holds a NUL or a backslash")
    if relative.startswith("/"):
        raise UnsafePathError(relative, "is absolute, not inside the vault")
    # a Windows drive or root needs a colon here, backslashes and a leading slash being refused
    if ":" in relative:
        if PureWindowsPath(relative).is_absolute():
            raise UnsafePathError(relative, "is absolute, not inside the vault")
        if PureWindowsPath(relative).drive:
            raise UnsafePathError(relative, "names a drive, not a place inside the vault")
    parts = relative.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise UnsafePathError(relative, "has an empty, '.' or '..' part")
        if part.startswith("."):
            raise UnsafePathError(relative, "lies in a dot-folder or is a hidden file")
    return tuple(parts)


@functools.lru_cache(maxsize=64)
def _resolved(root: str) -> Path:
    return Path(root).resolve()


def _inside(relative: str, base: Path, resolved: str) -> None:
    try:
        inside = Path(resolved).relative_to(base)
    except ValueError:
        raise UnsafePathError(relative, "resolves outside the vault (a symlink)") from None
    if any(part.startswith(".") for part in inside.parts):
        raise UnsafePathError(relative, "resolves into a dot-folder (a symlink)")


def in_folders(relative: str, folders: tuple[str, ...]) -> bool:
    """Whether vault-relative ``relative`` lies below one of ``folders`` (vault-relative)."""
    for folder in folders:
        prefix = folder.strip("/")
        if prefix and relative.startswith(prefix + "/"):
            return True
    return False
