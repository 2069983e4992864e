"""Reading an open file descriptor to its end without a Python file object.

A file object costs five more system calls per open (an ``ioctl``, two ``lseek``, two
``fstat``); the index reads every note of a vault and a pass reads each note it moves up to three
times, so both read through :func:`read_to_end`. Kept apart from the write path
(:mod:`vaultmem.store.note_files`) so reading the index does not import it.
"""

from __future__ import annotations

import os

__all__ = ["read_to_end"]


def read_to_end(fd: int, size: int = 0) -> bytes:
    """Every byte from ``fd``'s position to its end; ``size``: the expected length in bytes, when
    known (one ``os.read`` then takes it all). Raises ``OSError`` as ``os.read`` does."""
    chunks = []
    while chunk := os.read(fd, max(size + 1, 1 << 16)):
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)
