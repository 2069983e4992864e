"""Progress of long work (a lifecycle pass, consolidation) for whoever shows it.

The services report ``(label, done, total)`` steps; an interface that wants them (the CLI's
progress bar on a terminal) listens for the length of one call with :func:`progress_to`. With
no listener a report costs one context-variable read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

ProgressListener = Callable[[str, int, int], None]
"""Called with (label, done, total): ``done`` of ``total`` steps of the work named ``label``
(a pass name such as ``"prune"``, or ``"consolidate"``) are finished."""

_listener: ContextVar[ProgressListener | None] = ContextVar("vaultmem_progress", default=None)


@contextmanager
def progress_to(listener: ProgressListener) -> Iterator[None]:
    """Send the progress reports made inside the ``with`` block (this thread) to ``listener``."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def report_progress(label: str, done: int, total: int) -> None:
    """``done`` of ``total`` steps of ``label`` are finished (nothing when no one listens)."""
    listener = _listener.get()
    if listener is not None:
        listener(label, done, total)


def progress_of(label: str) -> Callable[[int, int], None] | None:
    """A ``(done, total)`` callback reporting as ``label``, or ``None`` when no one listens (so
    a loop over 100,000 notes makes no call at all)."""
    listener = _listener.get()
    if listener is None:
        return None
    return lambda done, total: listener(label, done, total)


__all__ = ["ProgressListener", "progress_of", "progress_to", "report_progress"]
