"""Reading an open file descriptor to its end without a Python file object.

A file object costs five more system calls per open (an ``ioctl``, two ``lseek``, two
``fstat``); the index reads every note of a vault and a pass reads each note it moves up to three
times, so both read through :func:`read_to_end`. Kept apart from the write path
(:mod:`vaultmem.store.note_files`) so reading the index does not import it.
"""

from __future__ import annotations

import os

__all__ = ["note_size_limit", "oversized", "read_to_end", "set_note_size_limit", "stable_read"]

_LIMIT = [10 * 1024 * 1024]
"""The note size limit in bytes (``[index] max_note_mb``, default 10 MB); one per process."""


def set_note_size_limit(megabytes: float) -> None:
    """Set the size (MB, 1 MB = 2^20 bytes) over which a note is never read (a vault's
    ``[index] max_note_mb``: the vault being opened sets it)."""
    _LIMIT[0] = int(megabytes * 1024 * 1024)


def note_size_limit() -> int:
    """The size in bytes over which a note is never read (see :func:`set_note_size_limit`)."""
    return _LIMIT[0]


def oversized(size: int) -> str | None:
    """The problem of a note of ``size`` bytes over the limit (never read whole: a 20 GB
    sparse file would exhaust memory), else ``None``."""
    if size <= _LIMIT[0]:
        return None
    return f"{size / 2**20:.1f} MB, over the note size limit ([index] max_note_mb): not read"


def read_to_end(fd: int, size: int = 0) -> bytes:
    """Every byte from ``fd``'s position to its end; ``size``: the expected length in bytes, when
    known (one ``os.read`` then takes it all). Raises ``OSError`` as ``os.read`` does."""
    chunks = []
    while chunk := os.read(fd, max(size + 1, 1 << 16)):
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


READ_ATTEMPTS = 3
"""A note written in place while it is read is read again, at most this many times in all."""


def stable_read(fd: int) -> tuple[bytes, os.stat_result]:
    """The bytes of an open note (file descriptor ``fd``) and the stat taken *before* reading.

    An editor that rewrites a file in place can change it while it is read: then the size or the
    mtime differ between a stat before and after, or the bytes are not the size stat said, and it
    is read again. The stat kept is the one before the read, so a write that lands after it gives
    the note a newer mtime than the index holds and the next sync reads it again (never old bytes
    filed under the new mtime).

    A note over the size limit (:func:`oversized`) is not read: no bytes, and its stat.

    One ``read`` asks for a byte more than stat said: fewer or more bytes than the size, or a
    stat that changed, and the note is read again (a read to the end to be sure no byte follows
    would cost each note a second ``read``; the second stat catches a file that grew).
    """
    for _ in range(READ_ATTEMPTS - 1):
        before = os.fstat(fd)
        if oversized(before.st_size):  # never read (a 20 GB sparse file): no bytes
            return b"", before
        data = os.read(fd, before.st_size + 1)
        after = os.fstat(fd)
        same = (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns)
        if same and len(data) == before.st_size:
            return data, before
        os.lseek(fd, 0, os.SEEK_SET)
    before = os.fstat(fd)
    if oversized(before.st_size):
        return b"", before
    return read_to_end(fd, before.st_size), before
