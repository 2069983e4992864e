"""Index stamps: the (size, mtime) a sync compares, and when a stamp cannot be trusted yet.

A sync reads a note only when its size or mtime differ from the stamp stored in the index. A note
read within one file-system clock tick of its last write is *racily clean*: a second same-size
write in that tick would leave the stamp unchanged. Such a note gets a *pending* stamp, and the
next sync reads it once more — the "racy git" problem and git's fix
(docs/user-guide.md, "Index and graph").
"""

from __future__ import annotations

import time

RACY_NS = 20_000_000
"""A note whose mtime is within this many nanoseconds of the moment it was read is *racily
clean*: a second write in the same file-system clock tick (ext4 and most Linux file systems stamp
mtimes with a coarse clock of 1-10 ms), with the same size, would leave size and mtime unchanged.
Its stamp is stored as pending (:func:`racy_stamp`) so the next sync reads it once more — the
"racy git" problem and its fix (git's Documentation/technical/racy-git.txt)."""
COARSE_RACY_NS = 2_000_000_000
"""The same window for an mtime on a whole second: file systems that stamp whole seconds (FAT and
exFAT use two)."""


clock_ns = time.time_ns
"""The wall clock racy checks compare mtimes with (a seam for tests)."""


def racy_stamp(mtime_ns: int) -> int:
    """The stamp stored for a racily clean note: never equal to a real mtime the walk reports for
    it, so the next sync reads it again (see :data:`RACY_NS`)."""
    return -mtime_ns - 1


def real_mtime(stored_mtime_ns: int) -> int:
    """The file's mtime a stored stamp stands for (the inverse of :func:`racy_stamp`)."""
    return -stored_mtime_ns - 1 if stored_mtime_ns < 0 else stored_mtime_ns


def is_pending(stored_mtime_ns: int, mtime_ns: int) -> bool:
    """Whether ``stored_mtime_ns`` is the pending stamp of a note whose file has ``mtime_ns``."""
    return stored_mtime_ns == racy_stamp(mtime_ns)


def is_racy(mtime_ns: int, read_at_ns: int) -> bool:
    """Whether a later write could share ``mtime_ns`` with the bytes read at ``read_at_ns``.

    A write after the read gets an mtime no earlier than the read's clock tick, so an mtime older
    than one tick before the read cannot be repeated. One in the future can (a writer whose clock
    runs ahead, a share whose server stamps the files): it is racy until the clock passes it, as
    in git.
    """
    window = COARSE_RACY_NS if mtime_ns % 1_000_000_000 == 0 else RACY_NS
    return mtime_ns >= read_at_ns - window
