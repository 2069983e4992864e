"""Finishing what a killed write left: aside copies put back or dropped, temp files removed.

A write owns a note by renaming it aside (:mod:`vaultmem.store.note_files`); a kill between
that rename and the end of the write leaves the aside file, which may be the only copy of a
person's note, and the new text's temp file. :func:`recover_interrupted_writes` decides from the
files themselves whether each write had landed. See docs/user-guide.md, "Many writers".
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from vaultmem.store.note_files import ASIDE_SUFFIX, TEMP_SUFFIX, put_back


def _listing(folder: Path) -> list[os.DirEntry[str]]:
    with os.scandir(folder) as entries:
        return list(entries)


def _landed(aside: Path, original: Path, temp: Path, search: Path) -> bool:
    """Whether the write that set ``aside`` aside had put its new file in place.

    Decided from the new file, never from a link count alone (a ``cp -al`` backup gives the
    aside a second name outside the vault): an edit landed when ``original`` is its temp file;
    a move when its new file (the temp, or the aside itself for a move without a new text)
    has another name below ``search``.
    """
    new_file = aside
    if os.path.lexists(temp):
        if os.path.lexists(original) and os.path.samefile(temp, original):
            return True
        new_file = temp
    info = os.lstat(new_file)
    return info.st_nlink > 1 and _other_name(new_file, info, search)


def _other_name(aside: Path, info: os.stat_result, search: Path) -> bool:
    """Whether the file ``aside`` (``info``) has another name below ``search`` (dot-folders,
    the sidecar and ``.git``, skipped; the inode from the listing, one stat per match)."""
    folders = [search]
    while folders:
        try:
            entries = _listing(folders.pop())
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                if entry.is_dir(follow_symlinks=False):
                    folders.append(Path(entry.path))
                elif (
                    entry.inode() == info.st_ino
                    and entry.path != str(aside)
                    and entry.stat(follow_symlinks=False).st_dev == info.st_dev
                ):
                    return True
    return False


def recover_interrupted_writes(
    folder: Path, *, recursive: bool = False, search: Path | None = None
) -> list[Path]:
    """Finish what a killed write left in ``folder``; returns the notes restored or kept aside.

    An aside file (``.<name>.<token>.vaultmem-old``) may be the only copy of a person's note:
    when its write had landed (its new file is in place: the note's name is its temp file, or,
    for a move, its file has another name below ``search``, default ``folder``), it is
    dropped; when the note's name is free, it is put back there; when a new file took the
    name, it is kept as a visible ``(Conflicted copy vaultmem …)`` note unless identical. Temp
    files are then removed. Call it only while holding the vault lock (no vaultmem write is in
    flight).
    """
    restored: list[Path] = []
    folders = [folder]
    while folders:
        here = folders.pop()
        try:
            entries = _listing(here)
        except OSError:
            continue
        asides = [e for e in entries if e.name.endswith(ASIDE_SUFFIX) and e.name.startswith(".")]
        for entry in asides:
            aside = Path(entry.path)
            stem = entry.name[1 : -len(ASIDE_SUFFIX)]
            name, _, token = stem.rpartition(".")
            if not name:
                continue
            original = aside.with_name(name)
            temp = aside.with_name(f".{name}.{token}{TEMP_SUFFIX}")
            try:
                if _landed(aside, original, temp, search or folder):
                    os.unlink(aside)
                else:
                    put_back(aside, original)
                    restored.append(original)
            except OSError:
                continue
        for entry in _listing(here) if asides else entries:
            if entry.name.startswith(".") and entry.name.endswith(TEMP_SUFFIX):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
            elif recursive and not entry.name.startswith("."):
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(Path(entry.path))
    return restored
