"""Start-up and merge time of git's merge driver, beside same-run baselines.

    python -m benchmarks.merge_driver [--runs 20]

git starts ``vaultmem merge-driver %O %A %B %P`` once per memory note in a merge, so its cost is
one process start per note. Printed per run (median of ``--runs`` processes, milliseconds):
the driver merging a touched note (three-way, counters and times merged, body by
``git merge-file``), and two baselines measured in the same run: a bare ``python -c pass`` and
``vaultmem --version`` (the whole CLI imported, what the driver avoids).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOTE = """---
id: 01BENCHMARKMEMORY00000000X
type: memory
status: active
created: 2026-11-20T09:00:00
last_used: {last}
use_count: {count}
tags: [editor, ui]
---
Prefers dark themes in every editor.
{extra}"""


def _median_ms(command: list[str], runs: int, before: object = None) -> float:
    times = []
    for _ in range(runs):
        if callable(before):
            before()
        start = time.perf_counter()
        subprocess.run(command, check=False, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args(argv).runs
    with tempfile.TemporaryDirectory() as folder:
        base, ours, theirs = (Path(folder) / name for name in ("base", "ours", "theirs"))
        base.write_text(NOTE.format(last="2026-11-20T09:00:00", count=1, extra=""))
        theirs.write_text(NOTE.format(last="2026-11-22T09:00:00", count=3, extra="B's line\n"))

        def reset() -> None:
            ours.write_text(NOTE.format(last="2026-11-21T09:00:00", count=4, extra=""))

        driver = _median_ms(
            [sys.executable, "-m", "vaultmem", "merge-driver", str(base), str(ours), str(theirs)],
            runs,
            reset,
        )
        merged = ours.read_text()
    bare = _median_ms([sys.executable, "-c", "pass"], runs)
    full = _median_ms([sys.executable, "-m", "vaultmem", "--version"], runs)
    assert "use_count: 6" in merged and "B's line" in merged, merged
    print(f"{'figure':<44} {'median ms':>10}")
    print(f"{'merge-driver, one touched note':<44} {driver:>10.1f}")
    print(f"{'baseline: python -c pass':<44} {bare:>10.1f}")
    print(f"{'baseline: vaultmem --version (whole CLI)':<44} {full:>10.1f}")
    print(f"driver / whole CLI: {driver / full:.2f}")


if __name__ == "__main__":
    main()
