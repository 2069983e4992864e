"""Several threads calling one opener at the same instant (the watcher's thread and a command
opening a new sidecar file together)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def open_at_once(
    open_one: Callable[[], T], openers: int = 4
) -> tuple[list[T], list[BaseException]]:
    """Call ``open_one`` from ``openers`` threads released together by a barrier; returns what
    the calls returned and the errors they raised (for the test to assert on)."""
    barrier = threading.Barrier(openers)
    opened: list[T] = []
    errors: list[BaseException] = []

    def call() -> None:
        barrier.wait()
        try:
            opened.append(open_one())
        except BaseException as err:  # noqa: BLE001 - collected for the assertion
            errors.append(err)

    threads = [threading.Thread(target=call) for _ in range(openers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return opened, errors
