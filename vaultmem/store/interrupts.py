"""Ctrl-C (SIGINT) and SIGTERM during a pass or an undo: finish the step in hand, then stop.

Inside :func:`finish_step_on_signal` the first such signal only sets a flag; the journaled loops
call :func:`stop_if_requested` between two file operations, which raises
:class:`~vaultmem.errors.InterruptedRunError` (one line, exit 1 in the CLI). A second signal
stops at once, as it would without vaultmem — the journal still lets the next command finish or
undo what was started.

:func:`wait_for_flag` waits on a flag in a way Ctrl-C cannot leave stuck (``vaultmem watch``).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from vaultmem.errors import InterruptedRunError

_received: list[int] = []
_depth = [0]


@contextmanager
def finish_step_on_signal() -> Iterator[None]:
    """Defer SIGINT/SIGTERM to the next :func:`stop_if_requested` (main thread only; nestable)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if _depth[0]:  # already deferred by an outer block
        _depth[0] += 1
        try:
            yield
        finally:
            _depth[0] -= 1
        return
    previous: dict[int, Any] = {}

    def defer(signum: int, _frame: FrameType | None) -> None:
        _received.append(signum)
        if len(_received) > 1:  # asked twice: stop now
            for number, handler in previous.items():
                signal.signal(number, handler)
            os.kill(os.getpid(), signum)

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, defer)
    _depth[0] = 1
    try:
        yield
    finally:
        _depth[0] = 0
        for number, handler in previous.items():
            signal.signal(number, handler)
        _received.clear()


def stop_if_requested(next_step: str) -> None:
    """Raise :class:`InterruptedRunError` if a deferred signal arrived; ``next_step`` tells how
    to go on (e.g. "run `vaultmem undo` again to finish undoing")."""
    if _received:
        name = signal.Signals(_received[0]).name
        raise InterruptedRunError(
            f"stopped by {name} after finishing the step in hand; {next_step}"
        )


LONGEST_NAP_SECONDS = 0.25
"""The longest sleep between two looks at a flag in :func:`wait_for_flag` (Ctrl-C ends a
sleep at once; this bounds how late a worker's end is noticed, at four wake-ups a second)."""


def wait_for_flag(flag: threading.Event, timeout: float | None = None) -> bool:
    """Wait until ``flag`` is set, or ``timeout`` seconds pass; True when it is set.

    For the main thread, where Ctrl-C may strike at any instruction. ``Event.wait`` takes the
    event's internal lock; a ``KeyboardInterrupt`` raised just after the lock is taken, before
    the ``with`` block that releases it begins, leaves it held (CPython gh-74174), and the thread
    that later sets the event then blocks forever (``watch`` hung on Ctrl-C that way). Here
    only ``time.sleep`` is interrupted and nothing is ever held: naps of 1 ms doubling up to
    :data:`LONGEST_NAP_SECONDS` between looks at ``flag.is_set()``, which takes no lock.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    nap = 0.001
    while not flag.is_set():
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            nap = min(nap, left)
        time.sleep(nap)
        nap = min(nap * 2, LONGEST_NAP_SECONDS)
    return True
