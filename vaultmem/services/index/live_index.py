"""Is a live watcher keeping the index fresh? The watcher heartbeat in ``.vaultmem/``.

A running :class:`~vaultmem.services.index.watcher.VaultWatcher` (``vaultmem watch``, ``vaultmem
mcp``) writes ``.vaultmem/watcher-<host>-<pid>.json`` — ``{"pid", "host", "at", "started"}`` (``at``
and ``started`` in Unix seconds) — after its first full sync and again every
:data:`HEARTBEAT_SECONDS` while its observer and worker run, and removes it when it stops.
:func:`index_is_live` reads those files: a heartbeat counts when it was written on this host by a
process that is still alive, less than :data:`STALE_AFTER_SECONDS` ago. While one counts, the CLI
and ``Vault.recall`` use the index as it is instead of walking the vault first (a note saved a
moment ago is in the index within about 0.3 s of its save). A heartbeat from another machine
never counts: that machine's watcher does not see this one's writes.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from vaultmem.errors import VaultmemError
from vaultmem.store.sidecar import ensure_sidecar

HEARTBEAT_SECONDS = 2.0
"""How often (seconds) a running watcher rewrites its heartbeat."""
STALE_AFTER_SECONDS = 3 * HEARTBEAT_SECONDS
"""A heartbeat older than this (seconds) no longer counts (the watcher hangs or was killed)."""
_PREFIX = "watcher-"
_SUFFIX = ".json"
_MAX_HEARTBEAT_BYTES = 4096


def _host() -> str:
    import socket  # only when a heartbeat file is there or written

    return socket.gethostname().replace("/", "_").replace(os.sep, "_")


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    except OSError:
        return False
    return True


class Heartbeat:
    """One process's heartbeat file in ``sidecar``; :meth:`beat` writes it, :meth:`stop` removes it.

    ``beat`` is cheap (one small atomic write) and never raises: a full disk only means the
    clients walk the vault again.
    """

    def __init__(self, sidecar: Path) -> None:
        self.sidecar = sidecar
        self.pid = os.getpid()
        self.host = _host()
        self.path = sidecar / f"{_PREFIX}{self.host}-{self.pid}{_SUFFIX}"
        self.started = time.time()
        self.last_beat = 0.0
        """``time.monotonic()`` of the last successful :meth:`beat` (0 = never)."""

    def due(self) -> bool:
        """True when the last beat is :data:`HEARTBEAT_SECONDS` old or more."""
        return time.monotonic() - self.last_beat >= HEARTBEAT_SECONDS

    def beat(self) -> None:
        data = {"pid": self.pid, "host": self.host, "at": time.time(), "started": self.started}
        temp = self.path.with_name(self.path.name + ".tmp")
        try:
            ensure_sidecar(self.sidecar)
            temp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(temp, self.path)
            self.last_beat = time.monotonic()
        except (OSError, VaultmemError):  # read-only or full sidecar: clients walk instead
            with contextlib.suppress(OSError):
                temp.unlink(missing_ok=True)

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink(missing_ok=True)


def live_watchers(sidecar: Path, *, now: float | None = None) -> list[dict[str, object]]:
    """The heartbeats in ``sidecar`` that count (see the module docstring), newest first.

    Each is the heartbeat's JSON object. Damaged, foreign, stale and dead-process files are left
    out (a dead process's file is removed when it is on this host).
    """
    now = time.time() if now is None else now
    found: list[dict[str, object]] = []
    try:
        names = [n for n in os.listdir(sidecar) if n.startswith(_PREFIX) and n.endswith(_SUFFIX)]
    except OSError:
        return []
    host = _host() if names else ""
    for name in names:
        path = sidecar / name
        try:
            with open(path, "rb") as handle:
                raw = handle.read(_MAX_HEARTBEAT_BYTES + 1)
            data = json.loads(raw) if len(raw) <= _MAX_HEARTBEAT_BYTES else None
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or data.get("host") != host:
            continue
        pid, at = data.get("pid"), data.get("at")
        if not isinstance(pid, int) or isinstance(pid, bool) or not isinstance(at, int | float):
            continue
        if not _pid_alive(pid):
            path.unlink(missing_ok=True)
            continue
        if abs(now - at) < STALE_AFTER_SECONDS:
            found.append(data)
    found.sort(key=lambda d: -float(d["at"]))  # type: ignore[arg-type]
    return found


def index_is_live(sidecar: Path) -> bool:
    """True when a live watcher on this host keeps the index in ``sidecar`` fresh.

    ``sidecar`` is the vault's ``.vaultmem/`` folder. Costs a folder listing and a small read
    (tens of microseconds); callers use it to skip the full incremental sync before reading the
    index. See the module docstring for what counts.
    """
    return bool(live_watchers(sidecar))


__all__ = [
    "HEARTBEAT_SECONDS",
    "STALE_AFTER_SECONDS",
    "Heartbeat",
    "index_is_live",
    "live_watchers",
]
