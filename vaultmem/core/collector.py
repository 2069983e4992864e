"""Pausing Python's cyclic garbage collector while bulk work makes many small objects.

A cold index or a lifecycle pass over thousands of notes allocates objects by the hundred
thousand (parsed notes, rows, moves) that reference counting frees without help; the cyclic
collector would walk every live object again and again meanwhile (about 5 % of a pass of 6,000
moves, measured with ``gc.callbacks`` in ``benchmarks``' apply scenario). Cycles made in the
block are collected once it ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Within the block the cyclic collector does not run (nested blocks are fine)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
