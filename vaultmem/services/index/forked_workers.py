"""Batches of work done by forked worker processes, the results handed back in order.

A cold index reads and parses notes in worker processes while this process stores them
(:mod:`vaultmem.services.index.index_bulk`). ``concurrent.futures.ProcessPoolExecutor`` does that
too, but importing it (with ``multiprocessing``, ``logging``, ``socket``, ``tempfile``,
``pickle`` …) took 12 ms: a tenth of the cold index of a 1,000-note vault. Forking needs none of
it. Each worker is a copy of this process, so it already holds the parser and whatever the work
needs; worker ``k`` of ``n`` does batches ``k``, ``k + n``, ``k + 2n`` … and writes each result,
serialised with :mod:`marshal`, to a pipe of its own; this process reads the pipes in turn, so
results come back in batch order. A worker blocks while its pipe is full: it is never more
than about a batch ahead, and results never pile up in memory.

Only where forking is safe: on Linux (and other systems with ``fork`` that are not macOS,
whose system libraries do not survive it), from a process that runs no other thread (a fork
copies every lock, including one another thread holds). :func:`can_fork` says so; elsewhere
callers use spawned processes.

A worker whose work raises sends the exception back (pickled, with its traceback as a note)
and this process raises it; a worker that dies (killed, out of memory) raises
:class:`WorkerLostError` here. When this process stops reading early — an error, ``close()``
of the iterator, an interrupt — the workers are killed and reaped; and when this process
dies, the kernel kills them (:func:`die_with_parent`).
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import os
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO, NoReturn, TypeVar, cast

from vaultmem.errors import VaultmemError

Batch = TypeVar("Batch")
Result = TypeVar("Result")

_HEADER = struct.Struct("<Q?")
"""Before each result: its length in bytes, and whether it is a result (else an exception)."""

PIPE_BYTES = 1 << 20
"""Each worker's pipe is asked to hold this much (Linux; the default is 64 KiB), so a worker
can write a batch of rows and start on its next while this process still stores the last."""


class WorkerLostError(VaultmemError):
    """A worker process ended without sending the result of its batch (killed, or crashed)."""


def can_fork() -> bool:
    """Whether worker processes may be forked from this process now (see the module text)."""
    return hasattr(os, "fork") and sys.platform != "darwin" and threading.active_count() == 1


def die_with_parent(parent_pid: int) -> None:
    """Worker start-up: exit as soon as the parent process is gone (a killed pass or sync).

    On Linux the kernel sends SIGKILL when the parent dies (``prctl(PR_SET_PDEATHSIG)``);
    elsewhere, and as a second line, a thread checks every half second that the parent is
    still ``parent_pid``.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(0)
    threading.Thread(target=_exit_with_parent, args=(parent_pid,), daemon=True).start()


def _exit_with_parent(parent_pid: int) -> None:
    while True:
        time.sleep(0.5)
        if os.getppid() != parent_pid:
            os._exit(0)


def forked_map(
    work: Callable[[Batch], Result],
    batches: Sequence[Batch],
    workers: int,
    *,
    pickled: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> Iterator[Result]:
    """``work(batch)`` for each of ``batches``, in order, computed by ``workers`` forked
    processes (at most one per batch).

    ``meanwhile`` is called once in this process after the workers have started and before
    the first result is read: work of this process's own that overlaps with theirs (what it
    raises stops the workers and is raised).

    ``work`` must return what :mod:`marshal` can write (tuples, lists, dicts, strings, bytes,
    numbers, ``None``), or with ``pickled`` what :mod:`pickle` can (any object of a module both
    processes hold; importing pickle costs 1.5 ms). Raises what ``work`` raised in a worker,
    :class:`WorkerLostError` when a worker died, ``ValueError`` (marshal) or a pickling error
    when a result cannot be sent; only call it when :func:`can_fork` says so.
    """
    parent = os.getpid()
    children: list[tuple[int, BinaryIO]] = []
    done = False
    try:
        for first in range(min(workers, len(batches))):
            read_end, write_end = os.pipe()
            try:
                pid = os.fork()
            except OSError:
                os.close(read_end)
                os.close(write_end)
                raise
            if pid == 0:  # the worker: never returns
                mine = batches[first::workers]
                _serve(work, mine, read_end, write_end, children, parent, pickled)
            os.close(write_end)
            children.append((pid, open(read_end, "rb")))  # noqa: SIM115 (closed below)
        if meanwhile is not None:
            meanwhile()
        for index in range(len(batches)):
            pid, pipe = children[index % len(children)]
            yield cast(Result, _receive(pid, pipe, index, pickled))
        done = True
    finally:
        for pid, pipe in children:
            pipe.close()
            if not done:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _serve(
    work: Callable[[Batch], object],
    batches: Sequence[Batch],
    read_end: int,
    write_end: int,
    siblings: list[tuple[int, BinaryIO]],
    parent: int,
    pickled: bool,
) -> NoReturn:
    """A worker's life: each batch's result to ``write_end``; then ``os._exit`` (never the
    parent's clean-up: its open index and buffered output belong to the parent)."""
    status = 1
    try:
        os.close(read_end)
        for _, pipe in siblings:  # the other workers' pipes: only the parent reads them
            os.close(pipe.fileno())
        die_with_parent(parent)
        dumps: Callable[[Any], bytes] = marshal.dumps
        if pickled:
            import pickle

            dumps = functools.partial(pickle.dumps, protocol=pickle.HIGHEST_PROTOCOL)
        with contextlib.suppress(OSError, AttributeError):  # Linux only; a hint
            import fcntl

            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        with open(write_end, "wb") as out:
            for batch in batches:
                try:
                    data, ok = dumps(work(batch)), True
                except Exception as err:  # sent to the parent, which raises it
                    data, ok = _pickled(err), False
                out.write(_HEADER.pack(len(data), ok))
                out.write(data)
                out.flush()
                if not ok:
                    break
        status = 0
    finally:
        os._exit(status)


def _pickled(err: Exception) -> bytes:
    """``err`` pickled, its traceback added as a note (an exception that cannot be pickled
    becomes a ``RuntimeError`` with its text). Imported here: only a failure pays for them."""
    import pickle
    import traceback

    err.add_note("in a worker process:\n" + "".join(traceback.format_exception(err)).rstrip())
    try:
        return pickle.dumps(err)
    except Exception:  # noqa: BLE001 (any failure to pickle: its text still goes back)
        return pickle.dumps(RuntimeError("".join(traceback.format_exception(err))))


def _receive(pid: int, pipe: BinaryIO, index: int, pickled: bool) -> object:
    header = pipe.read(_HEADER.size)
    if len(header) == _HEADER.size:
        size, ok = _HEADER.unpack(header)
        data = pipe.read(size)
        if len(data) == size:
            if ok and not pickled:
                return marshal.loads(data)
            import pickle

            if ok:
                return pickle.loads(data)
            raise pickle.loads(data)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
    raise WorkerLostError(
        f"worker process {pid} ended ({how}) before it sent the result of batch {index + 1}"
    )


__all__ = ["PIPE_BYTES", "WorkerLostError", "can_fork", "die_with_parent", "forked_map"]
