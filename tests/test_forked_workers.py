"""Forked worker processes (vaultmem.services.index.forked_workers): results in order, failures
raised here, and no worker left behind however the reading ends."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from vaultmem.services.index.forked_workers import (
    PIPE_BYTES,
    WorkerLostError,
    can_fork,
    forked_map,
)

pytestmark = pytest.mark.skipif(not can_fork(), reason="forked workers need fork (Linux)")


def _pids(record: Path) -> list[int]:
    return [int(line) for line in record.read_text().split()] if record.exists() else []


def _recording(record: Path, work: object = None) -> object:
    """A work function that notes its process id in ``record`` and returns (batch, pid)."""

    def run(batch: int) -> object:
        with open(record, "a") as out:
            out.write(f"{os.getpid()}\n")
        if callable(work):
            return work(batch)
        return (batch, os.getpid())

    return run


def _assert_all_reaped(pids: list[int]) -> None:
    """Every worker is gone and waited for (a zombie or a live one would still be our child)."""
    assert pids
    for pid in set(pids):
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_results_come_back_in_batch_order_from_two_other_processes(tmp_path: Path) -> None:
    record = tmp_path / "pids"
    results = list(forked_map(_recording(record), list(range(11)), 2))
    assert [batch for batch, _ in results] == list(range(11))
    workers = {pid for _, pid in results}
    assert len(workers) == 2 and os.getpid() not in workers
    # worker k does batches k, k + 2, …: the pids alternate
    assert [pid for _, pid in results[:2]] * 5 + [results[0][1]] == [p for _, p in results]
    _assert_all_reaped(_pids(record))


def test_no_more_workers_than_batches_and_none_for_no_batch(tmp_path: Path) -> None:
    record = tmp_path / "pids"
    assert list(forked_map(_recording(record), [7], 4)) == [(7, _pids(record)[0])]
    assert len(set(_pids(record))) == 1
    assert list(forked_map(_recording(record), [], 2)) == []
    _assert_all_reaped(_pids(record))


def test_a_result_larger_than_the_pipe_arrives_whole(tmp_path: Path) -> None:
    big = "x" * (3 * PIPE_BYTES + 17)
    results = list(forked_map(lambda n: [n, big * n, {"n": n}], [1, 2, 3], 2))
    assert results == [[n, big * n, {"n": n}] for n in (1, 2, 3)]


def test_an_exception_in_a_worker_is_raised_here_with_its_traceback(tmp_path: Path) -> None:
    record = tmp_path / "pids"

    def failing(batch: int) -> object:
        if batch == 3:
            raise KeyError(f"no note {batch}")
        return batch

    seen: list[object] = []
    with pytest.raises(KeyError, match="no note 3") as caught:
        for result in forked_map(_recording(record, failing), list(range(8)), 2):
            seen.append(result)
    assert seen == [0, 1, 2]
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "in a worker process" in notes and "failing" in notes
    _assert_all_reaped(_pids(record))


def test_an_exception_that_cannot_be_pickled_still_arrives_as_its_text(tmp_path: Path) -> None:
    class Unpicklable(Exception):
        def __reduce__(self) -> object:
            raise TypeError("not today")

    def failing(batch: int) -> object:
        raise Unpicklable("a local exception class")

    with pytest.raises(RuntimeError, match="a local exception class"):
        list(forked_map(failing, [1, 2], 2))


def test_a_result_marshal_cannot_write_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unmarshallable"):
        list(forked_map(lambda n: object(), [1], 1))


def test_a_killed_worker_is_reported_not_waited_for_forever(tmp_path: Path) -> None:
    record = tmp_path / "pids"

    def dying(batch: int) -> object:
        if batch == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return batch

    seen: list[object] = []
    lost = r"killed by signal 9\) before it sent the result of batch 3"
    with pytest.raises(WorkerLostError, match=lost):
        for result in forked_map(_recording(record, dying), list(range(6)), 2):
            seen.append(result)
    assert seen == [0, 1]
    _assert_all_reaped(_pids(record))


def test_reading_stopped_early_kills_and_reaps_every_worker(tmp_path: Path) -> None:
    record = tmp_path / "pids"
    results: Iterator[object] = forked_map(_recording(record), list(range(50)), 2)
    first, pid = next(results)  # type: ignore[misc]
    assert first == 0 and pid in _pids(record)
    deadline = time.monotonic() + 10
    while len(set(_pids(record))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)  # both workers at work (each blocks once its pipe is full)
    results.close()  # as when the caller's transaction fails mid-load
    pids = _pids(record)
    assert len(set(pids)) == 2
    _assert_all_reaped(pids)


def test_forking_is_refused_while_another_thread_runs() -> None:
    assert can_fork()
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert not can_fork()
    finally:
        release.set()
        thread.join()
    assert can_fork()


ORPHANING = """
import os, sys, time
from vaultmem.services.index.forked_workers import forked_map

def slow(batch):
    with open(sys.argv[1], "a") as out:
        out.write(f"{os.getpid()}\\n")
    time.sleep(60)
    return batch

for result in forked_map(slow, [1, 2, 3, 4], 2):
    pass
"""


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_die_with_a_killed_parent(tmp_path: Path) -> None:
    import subprocess
    import sys

    record = tmp_path / "pids"
    parent = subprocess.Popen([sys.executable, "-c", ORPHANING, str(record)])
    try:
        deadline = time.monotonic() + 30
        while len(_pids(record)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        workers = _pids(record)
        assert len(workers) == 2 and all(_running(pid) for pid in workers)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 5
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not any(_running(pid) for pid in workers)


def test_pickled_results_carry_objects_marshal_cannot() -> None:
    from fractions import Fraction

    results = list(forked_map(lambda n: {"n": Fraction(n, 3), "path": Path(f"{n}.md")},
                              [1, 2, 3], 2, pickled=True))  # fmt: skip
    assert results == [{"n": Fraction(n, 3), "path": Path(f"{n}.md")} for n in (1, 2, 3)]


def test_meanwhile_runs_here_once_the_workers_have_started(tmp_path: Path) -> None:
    record = tmp_path / "pids"
    started = tmp_path / "started"

    def slow(batch: int) -> object:
        started.write_text("yes")
        time.sleep(0.2)
        return (batch, os.getpid())

    seen: list[tuple[int, bool]] = []

    def meanwhile() -> None:
        deadline = time.monotonic() + 5
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        seen.append((os.getpid(), started.exists()))

    results = list(forked_map(_recording(record, slow), [0], 1, meanwhile=meanwhile))
    assert seen == [(os.getpid(), True)]  # here, while the worker was at its batch
    assert [batch for batch, _ in results] == [0]
    _assert_all_reaped(_pids(record))


def test_an_error_meanwhile_stops_the_workers_and_is_raised(tmp_path: Path) -> None:
    record = tmp_path / "pids"

    def endless(batch: int) -> object:
        time.sleep(60)
        return batch

    def failing() -> None:
        deadline = time.monotonic() + 5
        while not _pids(record) and time.monotonic() < deadline:
            time.sleep(0.005)
        raise ValueError("the index could not be read")

    with pytest.raises(ValueError, match="could not be read"):
        list(forked_map(_recording(record, endless), [0, 1], 2, meanwhile=failing))
    _assert_all_reaped(_pids(record))
