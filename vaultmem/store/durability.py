"""Durability of what vaultmem writes: folder fsyncs, file-system flushes, deferred closes.

A note's bytes are made durable before the note is linked in place
(:mod:`vaultmem.store.note_files`); a rename or a create is made durable by an fsync of its
folder. Inside :func:`batched_dir_syncs` (a lifecycle pass, an undo) those folder fsyncs are
collected and done once each at the end (one ``syncfs`` when there are many), and the last
descriptors of removed files are closed on a helper thread. See docs/user-guide.md, "Passes and
imports in batches".
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path


class _Closer:
    """Closes the last descriptors of removed files on one helper thread, fed through a queue.

    Closing the last descriptor of a removed file frees it: on ext4 about 60 µs of file-system
    work (the same as an ``unlink``), more where the journal must be waited on. Done aside, it
    overlaps with the next notes' work instead of stalling each one; handing descriptors over
    costs the caller a queue put, never a thread start or a wait (a thread started per batch of
    descriptors once cost a pass of 6,000 moves a quarter of a second in starts and joins).
    A pass hands them over a batch at a time (:meth:`add_many`): one put wakes the thread per
    batch, not per descriptor (each wake-up is a hand-over of the interpreter lock between the
    two threads). At most :attr:`limit` descriptors wait at a time (:data:`MAX_PENDING`, or half
    the process's open-file limit if that is less); beyond, the caller closes its own, so a
    slow file system never runs the process out of descriptors. With 256 at most, the pass
    thread closed most of a big pass's old files itself (a second of 4 at 6,000 moves): the
    thread is often behind for a while, on a machine whose cores are busy. (Two to four
    closing threads close twice as fast on an idle machine, but did not make a pass faster on a
    busy one and cost more kernel time: one it is.) :meth:`settle` waits for the thread to close
    what it was given and end (no thread is left running then).
    """

    MAX_PENDING = 4096

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[list[int] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._handed = 0  # descriptors handed over (written by the caller's thread only)
        self.closed = 0
        """Descriptors the thread has closed (written by the thread only)."""
        self.limit = min(self.MAX_PENDING, max(1, _open_file_limit() // 2))
        """Descriptors waiting to be closed at most (see the class)."""

    def add(self, fd: int) -> None:
        self.add_many([fd])

    def add_many(self, fds: list[int]) -> None:
        room = max(0, self.limit - (self._handed - self.closed))
        for fd in fds[room:]:  # the thread is behind: the caller closes these itself
            with contextlib.suppress(OSError):
                os.close(fd)
        handed = fds[:room]
        if not handed:
            return
        self._handed += len(handed)
        self._queue.put(handed)
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._close_queued, name="vaultmem-close", daemon=True
            )
            self._thread.start()

    def _close_queued(self) -> None:
        """The closer thread: close each descriptor of each list taken from the queue until a
        ``None``."""
        while (fds := self._queue.get()) is not None:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
                self.closed += 1

    def settle(self) -> None:
        """Wait until the helper thread has closed every descriptor handed over, and ended."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None


def _open_file_limit() -> int:
    """The process's soft limit of open files (a large number where there is none to read)."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):  # no such limit to read (Windows)
        return 1 << 16
    return 1 << 16 if soft == resource.RLIM_INFINITY else int(soft)


def settle_closes() -> None:
    """Inside :func:`batched_dir_syncs`: wait until no helper thread is closing descriptors.

    Call before starting worker processes (forking a process that runs a second thread is
    avoided by the index sync, which would then start slower workers).
    """
    closer = _DEFERRED_CLOSES.get()
    if closer is not None:
        closer.settle()


_DEFERRED_CLOSES: ContextVar[_Closer | None] = ContextVar("deferred_closes", default=None)


def defer_close(fd: int) -> bool:
    """Inside :func:`batched_dir_syncs`: leave the file descriptor ``fd`` (of a removed file) to
    be closed on a helper thread and return True; outside it, False (the caller closes it)."""
    return defer_closes([fd])


def defer_closes(fds: list[int]) -> bool:
    """:func:`defer_close` for many descriptors at once (one hand-over to the thread)."""
    closer = _DEFERRED_CLOSES.get()
    if closer is None:
        return False
    closer.add_many(fds)
    return True


_DEFERRED: ContextVar[set[str] | None] = ContextVar("deferred_dir_syncs", default=None)


@contextmanager
def batched_dir_syncs() -> Iterator[None]:
    """Within the block, folder fsyncs are collected and done once each at the end.

    A pass that moves thousands of notes would otherwise fsync the same few folders thousands
    of times. Note contents are still made durable before they are linked in place, so no note
    is ever torn; only the durability of the renames themselves against power loss waits for
    the end. The last descriptors of removed old versions are closed aside too
    (:func:`~vaultmem.store.note_files._drop_aside`).
    """
    if _DEFERRED.get() is not None:
        yield
        return
    pending: set[str] = set()  # (strings: a pass adds two folders per note, each hashed)
    closer = _Closer()
    token = _DEFERRED.set(pending)
    closes_token = _DEFERRED_CLOSES.set(closer)
    try:
        yield
    finally:
        _DEFERRED_CLOSES.reset(closes_token)
        _DEFERRED.reset(token)
        closer.settle()
        folders = sorted(pending)
        present = next((f for f in folders if os.path.isdir(f)), None)
        if len(folders) < _SYNCFS_FOLDERS or present is None or not sync_file_system(present):
            for folder in folders:
                fsync_dir(folder)


_SYNCFS_FOLDERS = 16
"""From this many folders to fsync, one flush of the whole file system is cheaper."""


def sync_file_system(folder: str | Path) -> bool:
    """Flush the file system holding ``folder`` (Linux ``syncfs``); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return False
    try:
        return bool(call(fd) == 0)
    finally:
        os.close(fd)


def fsync_dir(folder: str | Path) -> None:
    """fsync a folder so a rename or create in it survives a crash (no-op where unsupported)."""
    pending = _DEFERRED.get()
    if pending is not None:
        pending.add(os.fspath(folder))
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
