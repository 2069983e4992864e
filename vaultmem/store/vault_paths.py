"""Confinement: every path vaultmem writes, moves or deletes lies inside the vault.

One check, used by every writer (journal, passes, ``remember``, settings folders): a
vault-relative POSIX path is accepted only when it is relative, has no ``..`` or empty part, no
part starting with a dot (``.git/``, ``.obsidian/``, ``.vaultmem/``, hidden files), and still
lies inside the vault once symlinks are resolved (a folder that is a symlink to elsewhere is
refused). See docs/user-guide.md, "Many writers".
"""

from __future__ import annotations

import functools
import os
from pathlib import Path, PureWindowsPath
from stat import S_ISLNK

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
    base = _resolved(str(root)) if root.is_absolute() else root.resolve()
    # the folders as _confined_folders checks them; the note itself, if a symlink, must point
    # inside too
    path, target = _confined_folders(base, relative)
    if os.path.islink(target):
        _inside(relative, base, os.path.realpath(target))
    return path


def confined_free(root: Path, relative: str) -> Path | None:
    """:func:`confined` for a place a note is to be moved to: ``root / relative`` if nothing
    is there (no file, folder or link, not even a broken one), ``None`` if something is.

    One ``lstat`` of the place answers both what :func:`confined` asks of it (is it a link?)
    and whether it is free. Raises :class:`~vaultmem.errors.UnsafePathError` as
    :func:`confined` does for the path's folders.
    """
    if not isinstance(relative, str):
        raise UnsafePathError(repr(relative), "not a vault-relative path")
    base = _resolved(str(root)) if root.is_absolute() else root.resolve()
    path, target = _confined_folders(base, relative)
    try:
        os.lstat(target)
    except OSError:  # nothing there (or nothing that can be looked at: the move says why)
        return path
    return None


def _confined_folders(base: Path, relative: str) -> tuple[Path, str]:
    """``base / relative`` (as a path and a string) after checking its name and that the
    folder holding it resolves inside the vault ``base`` (resolved)."""
    # the folder holding the note must resolve inside the vault (a symlinked folder could
    # point anywhere). ``base`` is resolved, so a folder none of whose parts below it is a
    # link is inside as it stands. The links are looked for at every call (a folder may have
    # become one since the last); only the names, which depend on nothing on disk, are worked
    # out once (_layout).
    path, folders, target = _layout(base, relative)
    for folder in folders:
        try:
            linked = S_ISLNK(os.lstat(folder).st_mode)
        except OSError:  # not there (nor then is anything below it): not a link
            break
        if linked:
            _inside(relative, base, os.path.realpath(os.path.dirname(target)))
            break
    return path, target


def confined_in(folder: Path, relative: str) -> Path:
    """``folder`` joined with the file name of ``relative``, a path in the folder ``folder``
    that :func:`confined` accepted already (a batch writing many new notes into one folder):
    ``relative`` is checked as :func:`confined` checks it without the file system (raises
    :class:`~vaultmem.errors.UnsafePathError`), its folder's links are not looked for again.
    For a new file only: a file already there, which could be a link, is not looked at."""
    if not isinstance(relative, str):
        raise UnsafePathError(repr(relative), "not a vault-relative path")
    return folder / _checked_parts(relative)[-1]


@functools.lru_cache(maxsize=8192)  # a pass or an undo confines each path several times
def _layout(base: Path, relative: str) -> tuple[Path, tuple[str, ...], str]:
    """``base / relative``, the folders holding it below ``base`` (outermost first) and it as
    strings, made once (:func:`_checked_parts` raises :class:`UnsafePathError` for a path it
    refuses): a :class:`~pathlib.Path` costs more to make than the symlink checks on it."""
    parts = _checked_parts(relative)
    folders: list[str] = []
    folder = str(base)
    for part in parts[:-1]:
        folder = os.path.join(folder, part)
        folders.append(folder)
    path = base.joinpath(*parts)
    return path, tuple(folders), str(path)


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
