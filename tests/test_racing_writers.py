"""A small run of ``benchmarks/racing_writers.py``: a pass while a thread appends to and deletes
the notes it moves — no edit lost, no delete undone, every other note exactly once."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # benchmarks/ is not installed; plain `pytest` lacks the repo
    sys.path.insert(0, str(REPO))

from benchmarks.racing_writers import prepare, race_once  # noqa: E402


def test_a_pass_racing_a_writer_loses_no_edit_and_undoes_no_delete(tmp_path: Path) -> None:
    base = tmp_path / "base"
    prepare(base, 120)
    edits = deletes = skipped = 0
    for run in range(2):
        tally = race_once(base, tmp_path, run, 0.001)
        assert (tally.lost, tally.resurrected) == (0, 0), tally
        assert (tally.missing, tally.duplicated) == (0, 0), tally
        edits, deletes, skipped = (
            edits + tally.edits,
            deletes + tally.deletes,
            skipped + tally.skipped,
        )
    # the writer really raced the pass: it edited and deleted, and the pass had to back off
    assert edits > 50 and deletes > 5 and skipped > 0
