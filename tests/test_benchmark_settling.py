"""The benchmark waits, and says so, while the file system creates files slowly.

On ext4 without a journal, files deleted in the last minutes make every file creation nearby
slow (:mod:`benchmarks.creation_rate`); the apply and import scenarios create a file per note,
so before each of their runs the benchmark probes the rate of file creation and waits, up to a
limit, for it to be normal again. These tests drive the waiting with a scripted probe and clock
(the slow state cannot be made on demand), and the probe itself on a real folder.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # benchmarks/ is not installed; plain `pytest` lacks the repo
    sys.path.insert(0, str(REPO))

from benchmarks import run as bench_run  # noqa: E402
from benchmarks.creation_rate import (  # noqa: E402
    HEALTHY_RATE,
    PROBE_FILES,
    creation_rate,
    wait_for_creation,
)


class _Script:
    """A probe returning the given rates in turn, and a clock that only sleeping advances."""

    def __init__(self, rates: list[float]) -> None:
        self.rates = list(rates)
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.log: list[str] = []

    def probe(self, folder: Path) -> float:
        return self.rates.pop(0)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now

    def wait(self, limit: float) -> Any:
        return wait_for_creation(Path("."), limit, self.log.append, probe=self.probe,
                                 sleep=self.sleep, clock=self.clock, step=30.0)


def test_a_fast_file_system_is_probed_once_and_not_waited_for() -> None:
    script = _Script([40_000.0])
    settled = script.wait(420)
    assert (settled.waited_seconds, settled.first_rate, settled.last_rate) == (0, 40_000, 40_000)
    assert script.sleeps == [] and script.log == [] and script.rates == []


def test_slow_creation_is_waited_out_and_reported() -> None:
    script = _Script([3_000.0, 5_000.0, 40_000.0, 99.0])
    settled = script.wait(420)
    assert script.sleeps == [30.0, 30.0]  # probed again after each step, stopped once normal
    assert settled.as_result() == {
        "settle_waited_seconds": 60.0, "settle_first_rate": 3_000.0, "settle_last_rate": 40_000.0,
    }
    assert script.rates == [99.0]
    assert script.log[0].startswith("  file creation runs at 3,000/s here")
    assert "waiting up to 420 s" in script.log[0]
    assert script.log[1] == "  waited 60 s: 40,000 files/s (recovered)"


def test_the_wait_stops_at_its_limit_even_if_creation_stays_slow() -> None:
    script = _Script([2_000.0] * 10)
    settled = script.wait(70)
    assert script.sleeps == [30.0, 30.0, 10.0]  # the last step is cut to the limit
    assert settled.waited_seconds == 70.0 and settled.last_rate == 2_000.0
    assert script.log[-1] == "  waited 70 s: 2,000 files/s (still slow)"


def test_a_limit_of_zero_probes_but_never_waits() -> None:
    script = _Script([HEALTHY_RATE / 10])
    settled = script.wait(0)
    assert settled.waited_seconds == 0 and settled.first_rate == HEALTHY_RATE / 10
    assert script.sleeps == [] and script.log == []


def test_the_probe_creates_empty_files_in_a_hidden_folder_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "note.md").write_text("kept")
    rate = creation_rate(tmp_path)
    assert rate > 0
    (probe,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert probe.name.startswith(".creation-probe-")  # a dot-folder: vaultmem ignores it
    files = sorted(probe.iterdir())
    assert len(files) == PROBE_FILES and all(f.stat().st_size == 0 for f in files)
    assert (tmp_path / "note.md").read_text() == "kept"


def test_each_run_carries_its_own_wait_in_the_order_the_runs_ran(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events: list[str] = []
    seconds = iter([3.0, 2.5, 4.0])
    waits = iter([
        {"settle_waited_seconds": 90.0, "settle_first_rate": 2_500.0},
        {"settle_waited_seconds": 0.0, "settle_first_rate": 60_000.0},
        {"settle_waited_seconds": 0.0, "settle_first_rate": 50_000.0},
    ])

    def scenario(name: str, vault: Path, **_: Any) -> dict[str, Any]:
        events.append("run")
        return {"seconds": next(seconds), "creates_per_second": 70_000.0, "moves": 6_000}

    def before() -> dict[str, float]:
        events.append("settle")
        return next(waits)

    monkeypatch.setattr(bench_run, "run_scenario", scenario)
    result = bench_run._median_of("apply", Path("."), 3, before)
    assert events == ["settle", "run"] * 3
    assert result["seconds"] == 3.0 and result["settle_waited_seconds"] == 90.0
    assert [r["settle_waited_seconds"] for r in result["in_order"]] == [90.0, 0.0, 0.0]
    row = bench_run.apply_figures({
        **result, "moves_per_second": 2_000.0, "cpu_seconds": 4.0, "kernel_seconds": 1.0,
        "applied": {"seal": 6_000}, "renames_per_second": 40_000.0,
    })[0]
    assert ("runs in order: 2,000 moves/s after 70,000/s; waited 90 s for file creation "
            "(2,500 files/s at first), 2,400 moves/s after 70,000/s, 1,500 moves/s after "
            "70,000/s") in row.baseline


def test_the_import_row_says_when_it_waited() -> None:
    result = {
        "seconds": 2.0, "cpu_seconds": 2.5, "kernel_seconds": 1.0, "imported": 5_000,
        "per_second": 2_500.0, "fsync_writes_per_second": 4_000.0,
        "plain_writes_per_second": 36_000.0,
    }
    assert "waited" not in bench_run.import_figures(result)[0].baseline
    waited = bench_run.import_figures(
        {**result, "settle_waited_seconds": 120.4, "settle_first_rate": 3_100.0}
    )[0]
    assert waited.baseline.endswith(
        "write only 36,000 files/s; waited 120 s for file creation (3,100 files/s at first)"
    )


def test_the_wait_has_a_documented_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench_run.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--settle-seconds S" in text and "0: never wait" in text
