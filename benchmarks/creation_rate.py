"""Waiting for a file system that creates files slowly, before the scenarios that create many.

On ext4 without a journal (this project's benchmark machine), creating a file skips, one by one,
every inode of its block group freed in the last 1 to 6 minutes (``recently_deleted`` in the
kernel's ``fs/ext4/ialloc.c``). After thousands of files were deleted nearby — the previous
benchmark run's clean-up, a test suite's temporary folders — each creation can take a hundred
times as long until those minutes have passed: a ``perf`` profile of a lifecycle pass in that
state had 37 % of its samples in ``recently_deleted`` and the block lookups it makes. The apply
and import scenarios create a file for every note they write, so their rates would measure that
state of the file system rather than vaultmem.

:func:`wait_for_creation` probes the rate at which empty files can be created and, while it is
below :data:`HEALTHY_RATE`, waits and probes again, up to a limit. What it waited, and the rates
it saw, go into the scenario's result and are printed beside its figure: the wait is reported,
never hidden (``python -m benchmarks.run --settle-seconds 0`` does not wait at all).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

PROBE_FILES = 200
"""Empty files one probe creates (left in place: deleting them would slow what follows)."""
HEALTHY_RATE = 15_000.0
"""Files per second from which creation counts as normal. This machine's root file system
created 36,000–89,000 empty files a second in quiet moments and 2,300–6,700 after mass
deletions (probes of 1,000 files just before a lifecycle pass, eight benchmark runs)."""
STEP_SECONDS = 30.0
"""Seconds between two probes while creation is slow."""
DEFAULT_LIMIT_SECONDS = 420.0
"""The longest wait by default: the kernel's window is 360 s at most (60 s, plus 300 s while
the inode's table block is dirty), and writeback of such a block takes up to 30 s more."""


@dataclass(frozen=True, slots=True)
class Settling:
    """What :func:`wait_for_creation` saw: seconds waited, the first and last probe (files/s)."""

    waited_seconds: float
    first_rate: float
    last_rate: float

    def as_result(self) -> dict[str, float]:
        """The fields a scenario's result carries (``settle_`` + each field name)."""
        return {f"settle_{key}": value for key, value in asdict(self).items()}


def creation_rate(folder: Path, files: int = PROBE_FILES) -> float:
    """Files per second at which ``files`` empty hidden files are created in a new folder made
    in ``folder`` (the files are left there; see :data:`PROBE_FILES`)."""
    probe = tempfile.mkdtemp(prefix=".creation-probe-", dir=folder)
    paths = [os.path.join(probe, f"{i}") for i in range(files)]
    started = time.perf_counter()
    for path in paths:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    seconds = time.perf_counter() - started
    return files / seconds if seconds > 0 else float("inf")


def wait_for_creation(
    folder: Path,
    limit_seconds: float,
    log: Callable[[str], None],
    *,
    probe: Callable[[Path], float] = creation_rate,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    healthy: float = HEALTHY_RATE,
    step: float = STEP_SECONDS,
) -> Settling:
    """Wait, at most ``limit_seconds``, until files are created in ``folder`` at ``healthy``
    files/s or more; probe every ``step`` seconds meanwhile.

    Returns the seconds waited (0 when the first probe is fast enough or ``limit_seconds`` is
    0) and the first and last rates probed. Logs one line when it starts waiting and one when
    it stops.
    """
    first = rate = probe(folder)
    started = clock()
    waited = 0.0
    if rate < healthy and limit_seconds > 0:
        log(f"  file creation runs at {rate:,.0f}/s here (normal: ≥ {healthy:,.0f}/s; files "
            f"deleted nearby in the last minutes slow it): waiting up to {limit_seconds:.0f} s")
        while rate < healthy and waited < limit_seconds:
            sleep(min(step, limit_seconds - waited))
            rate = probe(folder)
            waited = clock() - started
        outcome = "recovered" if rate >= healthy else "still slow"
        log(f"  waited {waited:.0f} s: {rate:,.0f} files/s ({outcome})")
    return Settling(round(waited, 1), first, rate)
