"""A small run of ``benchmarks/racing_writers.py``: a pass while a thread appends to and deletes
the notes it moves — no edit lost, no delete undone, every other note exactly once."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # benchmarks/ is not installed; plain `pytest` lacks the repo
    sys.path.insert(0, str(REPO))

from benchmarks import racing_writers  # noqa: E402
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


def test_the_race_notes_are_found_while_a_folder_vanishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass removes the box folders it empties while the racing writer lists the notes; a
    folder gone between listing and reading is passed over (it once killed the writer)."""
    (tmp_path / "STM").mkdir()
    (tmp_path / "STM" / "race note 0001.md").write_text("x", "utf-8")
    gone = tmp_path / "Boxes" / "box-a"
    gone.mkdir(parents=True)
    (gone / "race note 0002.md").write_text("x", "utf-8")
    real_scandir = os.scandir

    def vanishing(path: object = ".") -> object:
        if str(path) == str(gone) and gone.exists():
            for child in gone.iterdir():
                child.unlink()
            gone.rmdir()
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", vanishing)
    found = racing_writers._memory_files(tmp_path)
    assert [p.name for p in found] == ["race note 0001.md"]


def test_a_racing_writer_that_dies_fails_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise OSError("the writer broke")

    base = tmp_path / "base"
    prepare(base, 10)
    monkeypatch.setattr(racing_writers, "_race", broken)
    with pytest.raises(RuntimeError, match="racing writer stopped early") as raised:
        race_once(base, tmp_path, 0, 0.001)
    assert isinstance(raised.value.__cause__, OSError)
