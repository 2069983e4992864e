"""Texts written ahead beside notes, and the temp and aside names every owned write uses.

An owned write (:mod:`vaultmem.store.note_files`) writes a note's new text to a temp file beside
it, ``.<name>.<token>.vaultmem-tmp``, and sets the note aside under the same token,
``.<name>.<token>.vaultmem-old``, so a kill leaves nothing ``recover_interrupted_writes`` does
not recognise. A pass or an undo writes a batch's texts ahead (:func:`stage_text`, on a helper
thread) and flushes them together; the write that links one checks it first, through the file
itself (:func:`open_staged`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from vaultmem.core.notes.content_hash import content_hash
from vaultmem.errors import NoteError
from vaultmem.store.raw_reads import read_to_end

TEMP_SUFFIX = ".vaultmem-tmp"
"""A new text being written: ``.<note name>.<token>.vaultmem-tmp`` beside the note."""
ASIDE_SUFFIX = ".vaultmem-old"
"""A note owned while it is replaced: ``.<note name>.<token>.vaultmem-old`` beside it."""
MAX_NAME_BYTES = 255 - len(f"..12345678{TEMP_SUFFIX}")
"""The longest note name (UTF-8 bytes, 232) vaultmem can write: its temp and aside names
must fit the file system's 255 bytes. A longer name is refused by every write."""


def read_sized(fd: int, size: int) -> bytes:
    """The bytes from ``fd``'s position to its end, ``size`` of them expected (an ``fstat``
    just before): one ``read`` of a byte more takes them all, where :func:`read_to_end` needs a
    second to see the end; a read that finds another size reads on to the end. (A write landing
    after the read is a later write: every caller compares a later ``fstat`` or hash.)"""
    data = os.read(fd, size + 1)
    if len(data) == size:
        return data
    return data + read_to_end(fd)


def temp_names(path: Path) -> tuple[Path, Path]:
    """A fresh (temp, aside) pair in ``path``'s folder: ``.<name>.<token>.vaultmem-tmp|-old``.

    Both carry the note's name and one token, so the next command can tell from the names alone
    which note an interrupted write concerned (``recover_interrupted_writes``).
    """
    token = secrets.token_hex(4)
    base = f".{path.name}.{token}"
    if len(path.name.encode("utf-8")) > MAX_NAME_BYTES:
        raise NoteError(
            path,
            f"name too long to write safely (over {MAX_NAME_BYTES} bytes); rename it shorter",
        )
    return path.with_name(base + TEMP_SUFFIX), path.with_name(base + ASIDE_SUFFIX)


def write_temp(temp: Path, data: bytes, mode: int, *, durable: bool = True) -> None:
    """Create ``temp`` (never an existing file) holding ``data`` with permission bits ``mode``;
    fsynced when ``durable``. Nothing is left behind when it fails.

    Not ``durable`` (a text written ahead): created with ``mode`` as the umask leaves it, not
    set exactly, as whoever links it checks and sets it (:func:`open_staged`)."""
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if durable else mode)
    try:
        try:
            view = memoryview(data)
            while view:  # plain os.write: no file object for a write of a few kilobytes
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
                os.fchmod(fd, mode)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


@dataclass(frozen=True, slots=True)
class StagedText:
    """A note's next text, written ahead to a temp file beside the note (:func:`stage_text`).

    ``temp`` and ``aside`` share one token, like the names :func:`move_note` makes itself, so
    a kill leaves nothing ``recover_interrupted_writes`` does not recognise. The text is not
    yet durable: whoever stages must flush the file system (one ``syncfs`` for a whole batch)
    before handing it to :func:`move_note` or :func:`create_note`, which link it in place.
    ``text`` is the text written (``size`` bytes, hashing to ``sha256``).
    """

    temp: Path
    aside: Path
    sha256: str
    made: tuple[Path, ...] = ()
    """Folders made for it, deepest first (removed again if it is discarded and they are empty)."""
    text: str = ""
    size: int = -1


def stage_text(
    path: Path, text: str, *, mode: int | None = None, present: set[str] | None = None
) -> StagedText:
    """Write ``text`` (UTF-8) to a fresh temp file beside ``path``, without fsync.

    ``mode`` defaults to ``path``'s permission bits (0o644 for a new note). Creates ``path``'s
    folder if missing. ``present``: folders (as strings) known to be there (a batch's), not
    looked at again; ``path``'s folder is added. Raises :class:`NoteError` (name too long) or
    ``OSError``.
    """
    data = text.encode("utf-8")
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = 0o644
    temp, aside = temp_names(path)
    made: list[Path] = []
    where = os.path.dirname(os.fspath(path))
    if present is None or where not in present:
        folder = path.parent
        while not os.path.exists(folder) and folder != folder.parent:
            made.append(folder)
            folder = folder.parent
        if made:  # the note's folder is usually there: no mkdir per note
            path.parent.mkdir(parents=True, exist_ok=True)
        if present is not None:
            present.add(where)
    write_temp(temp, data, mode, durable=False)
    return StagedText(temp, aside, content_hash(data), tuple(made), text, len(data))


def open_staged(staged: StagedText | None, path: Path, text: str) -> tuple[int, int] | None:
    """A descriptor of ``staged``'s temp file and its permission bits, when it holds exactly
    ``text`` beside ``path``; else ``None`` (and the temp file is removed).

    Checked through the file itself, not trusted from when it was staged: a temp file is
    private by name only (its size, then its bytes' hash). The caller closes the descriptor,
    after setting the mode through it where it differs from the note's.
    """
    if staged is None:
        return None
    fd = -1
    beside = os.path.dirname(os.fspath(staged.temp)) == os.path.dirname(os.fspath(path))
    if staged.text == text and beside:
        try:
            fd = os.open(staged.temp, os.O_RDONLY)
            info = os.fstat(fd)
            if info.st_size == staged.size:
                data = read_sized(fd, staged.size)
                if content_hash(data) == staged.sha256:
                    return fd, stat.S_IMODE(info.st_mode)
        except OSError:
            pass
    if fd >= 0:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(staged.temp)
    return None


def set_mode(fd: int, has: int, mode: int) -> None:
    """Give the open file ``fd`` (with permission bits ``has``) the bits ``mode``, and close it."""
    try:
        if has != mode:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)


def discard_staged(staged: StagedText) -> None:
    """Remove a staged text that was not used (nothing happens if it is gone), and the folders
    made for it if they are empty (a box none of whose members moved leaves no folder)."""
    with contextlib.suppress(OSError):
        os.unlink(staged.temp)
    for folder in staged.made:
        try:
            os.rmdir(folder)  # refuses a folder that is not empty: nothing else is touched
        except OSError:
            break
