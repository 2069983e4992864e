"""Live index sync: ``vaultmem watch`` (docs/user-guide.md, "Index and graph").

A watchdog observer watches the vault root recursively and hands the vault-relative paths of
events to one worker thread, which waits until no event came for ``debounce_seconds`` (never more
than ``max_delay_seconds`` after a burst's first event), then syncs the batch with one
:func:`~vaultmem.services.index.index_sync.sync_paths`. Only the worker touches SQLite, through a
connection of its own, so the caller's ``vault.index`` stays usable meanwhile.

Collected: created, modified, closed-after-write, attribute-changed, deleted and moved files
(both ends of a move) that :func:`~vaultmem.services.index.vault_walk.is_ignored` keeps, and
created, deleted and moved folders without a dot part (``sync_paths`` expands them). A
temp-file-and-rename save is a move whose destination is the note. vaultmem's own writes re-sync
idempotently (same hash, nothing re-parsed). A queue overflow, a failing batch or a dead observer
thread is logged and answered with a full incremental
:func:`~vaultmem.services.index.index_sync.sync_index`.

While the worker runs with a live observer it keeps a heartbeat in the sidecar
(:mod:`vaultmem.services.index.live_index`), so other processes know the index is being kept fresh.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
import time
from collections.abc import Callable
from itertools import count

from watchdog.events import FileSystemEvent
from watchdog.observers.api import BaseObserver

from vaultmem.errors import VaultmemError
from vaultmem.services.index.folder_moves import FolderMoves
from vaultmem.services.index.index_sync import sync_index, sync_paths
from vaultmem.services.index.live_index import Heartbeat
from vaultmem.services.index.sync_types import SyncReport
from vaultmem.services.index.vault_walk import is_ignored, is_tracked_attachment
from vaultmem.services.index.watch_observer import start_observer
from vaultmem.services.vault_context import VaultContext
from vaultmem.store.index_db import IndexDB
from vaultmem.store.interrupts import wait_for_flag
from vaultmem.store.sidecar import SIDECAR_DIR

logger = logging.getLogger(__name__)

DEFAULT_DEBOUNCE_SECONDS = 0.05
"""Quiet time (seconds) after the last event of a burst before the batch is synced."""
MAX_DELAY_SECONDS = 0.25
"""Longest wait (seconds) after a burst's first event, so a save is indexed within ~300 ms."""
HEALTH_CHECK_SECONDS = 1.0
"""How often (seconds) an idle worker checks that the observer threads are alive."""
MAX_RETRY_SECONDS = 30.0
"""Longest pause (seconds) between retries when even a full sync fails (e.g. disk full)."""
PROBE_SECONDS = 3.0
"""A probe fence whose event has not arrived after this many seconds means the observer no
longer delivers events although its threads run: it is restarted and the vault synced."""
STOP_DURING_START_SECONDS = 10.0
"""Ctrl-C during the first sync waits at most this long for it to stop (see stop())."""
_FILE_EVENTS = frozenset({"created", "modified", "closed", "attrib", "deleted", "moved"})
_FOLDER_EVENTS = frozenset({"created", "deleted", "moved"})


class _Stopping(Exception):
    """Raised in the initial sync's progress callback once :meth:`VaultWatcher.stop` is called."""


class _OverflowAlarm(logging.Handler):
    """Hears watchdog's "queue overflowed" warning (its only signal of lost events)."""

    def __init__(self, on_overflow: Callable[[], None]) -> None:
        super().__init__(level=logging.WARNING)
        self._on_overflow = on_overflow

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self._on_overflow()


class VaultWatcher:
    """Keeps ``vault``'s index in step with its notes while it runs.

    ``debounce_seconds``: quiet time after the last event before a batch is synced;
    ``max_delay_seconds``: longest wait after the first event of a burst; ``on_sync`` is called
    on the worker thread with the :class:`SyncReport` of every batch (not of the initial sync,
    which :meth:`start` returns). Use as a context manager, or call :meth:`start` and
    :meth:`stop`.
    """

    def __init__(
        self,
        vault: VaultContext,
        *,
        debounce_seconds: float = DEFAULT_DEBOUNCE_SECONDS,
        max_delay_seconds: float = MAX_DELAY_SECONDS,
        on_sync: Callable[[SyncReport], None] | None = None,
    ) -> None:
        if debounce_seconds < 0 or max_delay_seconds < 0:
            raise ValueError("debounce_seconds and max_delay_seconds must be ≥ 0")
        self.vault = vault
        self.debounce_seconds = debounce_seconds
        self.max_delay_seconds = max(max_delay_seconds, debounce_seconds)
        self.on_sync = on_sync
        self._root = os.fspath(vault.root)
        self._prefix = self._root.rstrip(os.sep) + os.sep
        self._fence_dir = SIDECAR_DIR + "/"
        self._fence_token = f"watch-fence-{secrets.token_hex(4)}-"
        self._fence_numbers = count()
        self._cond = threading.Condition()
        # --- guarded by _cond
        self._pending: set[str] = set()
        self._full_needed = False
        self._seen = 0  # accepted events (and full-sync requests) so far
        self._synced = 0  # value of _seen that the last finished sync covered
        self._first_at: float | None = None  # monotonic time of the burst's first event
        self._last_at = 0.0
        self._fences: set[str] = set()  # fence files written and not yet seen
        self._rewatch_reason = ""  # set when the observer's watches may be wrong
        self._stopping = False
        # --- guarded by _observer_lock (stop() and the worker's restarts race otherwise)
        self._observer_lock = threading.Lock()
        self._observer: BaseObserver | None = None
        self._closing = False
        self._restart_at = 0.0  # monotonic time before which no restart is tried
        self._restart_delay = HEALTH_CHECK_SECONDS
        self._probe: tuple[str, float] | None = None  # worker only: fence written, when
        self._folder_moves = FolderMoves()  # observer thread only
        # --- owned by start/stop and the worker
        self._worker: threading.Thread | None = None
        self._alarm = _OverflowAlarm(
            lambda: self._request_full_sync("the OS's event queue overflowed")
        )
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self._initial: SyncReport | None = None
        self._db: IndexDB | None = None  # the worker's index (a new one after a rebuild)
        self._start_error: BaseException | None = None
        self._heartbeat = Heartbeat(vault.sidecar)
        self._failing = False  # the last batch could not be synced, even fully (worker only)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> SyncReport:
        """Start observing, reconcile with one full incremental sync, return that sync's report.

        The observer starts before the sync, so nothing edited while the watcher was down or
        during the sync is missed. Raises :class:`~vaultmem.errors.VaultmemError` when the OS
        refuses to watch the vault (e.g. Linux's inotify watch limit).
        """
        if self._worker is not None:
            raise RuntimeError("this VaultWatcher was already started; make a new one")
        logging.getLogger("watchdog.observers").addHandler(self._alarm)
        try:
            self._observer = self._new_observer()
        except OSError as err:
            logging.getLogger("watchdog.observers").removeHandler(self._alarm)
            raise VaultmemError(
                f"cannot watch {self._root}: {err.strerror or err}; on Linux, raise "
                "fs.inotify.max_user_watches / max_user_instances (sysctl)"
            ) from err
        self._worker = threading.Thread(target=self._run, name="vaultmem-watch", daemon=True)
        self._worker.start()
        try:
            wait_for_flag(self._ready)
        except BaseException:  # Ctrl-C during a long first sync
            self.stop(timeout=STOP_DURING_START_SECONDS)
            raise
        if self._start_error is not None:
            self.stop()
            raise self._start_error
        if self._initial is None:  # stop() was called from another thread meanwhile
            raise VaultmemError("the watcher was stopped before its first sync finished")
        return self._initial

    def stop(self, *, timeout: float | None = None) -> None:
        """Stop observing; sync the events already seen; join both threads. Safe to call twice.

        ``timeout`` (seconds) bounds the wait for the worker: Ctrl-C during a first sync that is
        stuck (e.g. waiting for a lock another process holds) must still end the command. The
        worker is a daemon thread that never writes notes, so leaving it to the interpreter's
        exit loses nothing (an unfinished index transaction is rolled back).
        """
        self._heartbeat.stop()  # from now on, other processes walk the vault themselves
        with self._observer_lock:
            observer, self._observer = self._observer, None
            self._closing = True
        if observer is not None:
            observer.stop()
            observer.join(timeout=10.0)
            if observer.is_alive():
                logger.warning("watch: the file-system observer did not stop within 10 s")
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._worker is not None and self._worker is not threading.current_thread():
            self._worker.join(timeout)
            if self._worker.is_alive():
                logger.warning("watch: the first sync did not stop within %.0f s; left", timeout)
        logging.getLogger("watchdog.observers").removeHandler(self._alarm)

    @property
    def running(self) -> bool:
        """True between :meth:`start` and the end of the worker (normally :meth:`stop`)."""
        return self._worker is not None and not self._stopped.is_set()

    def join(self, timeout: float | None = None) -> bool:
        """Block until the worker ends (after :meth:`stop`); ``timeout`` in seconds.

        True when it has ended. Ctrl-C interrupts the wait (``KeyboardInterrupt``) and leaves
        :meth:`stop` able to finish, wherever it strikes (:func:`wait_for_flag`).
        """
        return wait_for_flag(self._stopped, timeout)

    def __enter__(self) -> VaultWatcher:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_idle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until every change made so far is in the index.

        Writes a fence file into the sidecar folder and waits for its event: the OS delivers
        events in order, so by then every earlier change has been seen; then waits until the
        worker has synced them. False on timeout or when the watcher is not running. For tests
        and benchmarks.
        """
        deadline = time.monotonic() + timeout
        if not self.running or self._observer is None:
            return False
        name = self._fence_token + str(next(self._fence_numbers))
        fence = self.vault.sidecar / name
        with self._cond:
            self._fences.add(name)
        try:
            fence.write_bytes(b"")
            with self._cond:
                seen = self._cond.wait_for(
                    lambda: name not in self._fences, max(0.0, deadline - time.monotonic())
                )
                self._fences.discard(name)
                if not seen:
                    return False
                target = self._seen
                return self._cond.wait_for(
                    lambda: self._synced >= target, max(0.0, deadline - time.monotonic())
                )
        finally:
            fence.unlink(missing_ok=True)

    # ------------------------------------------------------------------ observer side
    def _new_observer(self) -> BaseObserver:
        return start_observer(self._root, self._on_event)

    def _relative(self, raw: bytes | str) -> str | None:
        """Vault-relative POSIX path of an event path; "" for the root; None if outside it."""
        path = os.fsdecode(raw)
        if path == self._root:
            return ""
        if not path.startswith(self._prefix):
            return None
        rel = path[len(self._prefix) :]
        return rel.replace(os.sep, "/") if os.sep != "/" else rel

    def _on_event(self, event: FileSystemEvent) -> None:
        """Observer thread: keep the event's wanted paths for the worker. Never raises."""
        try:
            kinds = _FOLDER_EVENTS if event.is_directory else _FILE_EVENTS
            if event.event_type not in kinds:
                return
            raws = (
                [event.src_path, event.dest_path]
                if event.event_type == "moved"
                else [event.src_path]
            )
            if event.is_directory:
                self._check_folder_event(event)
            wanted: list[str] = []
            full = False
            for raw in raws:
                rel = self._relative(raw) if raw else None
                if rel is None:
                    continue
                if rel == "":  # the vault folder itself was deleted or moved
                    full = True
                    logger.warning("watch: the vault folder %s itself changed", self._root)
                elif rel.startswith(self._fence_dir):
                    self._note_fence(rel, event)
                elif event.is_directory:
                    if not any(part.startswith(".") for part in rel.split("/")):
                        wanted.append(rel)
                elif not is_ignored(rel, self.vault.settings) or is_tracked_attachment(
                    rel, self.vault.settings
                ):
                    wanted.append(rel)
            if wanted or full:
                self._add(wanted, full=full)
        except Exception:  # a dying observer thread would silently stop the watch
            logger.exception("watch: could not handle %r", event)
            self._request_full_sync("an event could not be handled")

    def _check_folder_event(self, event: FileSystemEvent) -> None:
        """Observer thread: a folder event after which watchdog's watches may be wrong (see
        :class:`FolderMoves`) has the worker replace the observer once the burst settles."""
        src = self._relative(event.src_path) if event.src_path else None
        dest = self._relative(event.dest_path) if getattr(event, "dest_path", "") else None
        if src is not None and src.startswith(self._fence_dir):
            return
        reason = self._folder_moves.check(event.event_type, src, dest, time.monotonic())
        if reason:
            with self._cond:
                self._rewatch_reason = reason
            self._add([], full=True)  # a batch, when the burst settles, replaces the observer

    def _note_fence(self, rel: str, event: FileSystemEvent) -> None:
        name = rel[len(self._fence_dir) :]
        if event.event_type != "deleted" and name.startswith(self._fence_token):
            with self._cond:
                self._fences.discard(name)
                self._cond.notify_all()

    def _request_full_sync(self, reason: str) -> None:
        """Events may have been lost (``reason`` is logged): sync the whole vault next."""
        logger.warning("watch: %s; the next sync covers the whole vault", reason)
        self._add([], full=True)

    def _add(self, paths: list[str], *, full: bool = False) -> None:
        """Hand ``paths`` (or, with ``full``, the whole vault) to the worker; any thread."""
        now = time.monotonic()
        with self._cond:
            self._pending.update(paths)
            self._full_needed = self._full_needed or full
            self._seen += 1
            if self._first_at is None:
                self._first_at = now
            self._last_at = now
            self._cond.notify_all()

    # ------------------------------------------------------------------ worker side
    def _run(self) -> None:
        """Worker thread: open the index, reconcile, then sync batches until stopped."""
        db: IndexDB | None = None
        try:
            db = IndexDB.open(self.vault.sidecar)
            self._initial = sync_index(
                self.vault.root, db, self.vault.settings, progress=self._check_stopping
            )
            self._heartbeat.beat()
        except _Stopping:
            logger.info("watch: stopped during the initial sync")
        except BaseException as err:  # handed to start(), which raises it
            self._start_error = err
        self._ready.set()
        self._db = db
        try:
            if db is not None and self._initial is not None:
                self._loop(db)
        except VaultmemError as err:  # e.g. the sidecar cannot be made again
            logger.error("watch: %s; the index is no longer kept in sync", err)
        except BaseException:  # a bug: say so loudly; `running` turns False
            logger.exception("watch: the worker failed; the index is no longer kept in sync")
        finally:
            self._heartbeat.stop()
            if self._probe is not None:  # the last probe fence, seen or not
                (self.vault.sidecar / self._probe[0]).unlink(missing_ok=True)
            if self._db is not None:
                self._db.close()
            self._stopped.set()

    def _check_stopping(self, done: int, total: int) -> None:
        if self._stopping:
            raise _Stopping

    def _index_file_id(self, db: IndexDB) -> tuple[int, int] | None:
        try:
            info = os.stat(db.path)
        except OSError:
            return None
        return info.st_dev, info.st_ino

    def _reopen_if_gone(self, db: IndexDB, known: tuple[int, int] | None) -> IndexDB:
        """A new index when ``.vaultmem/`` or ``index.db`` was deleted or replaced meanwhile.

        Writing on into a deleted database would keep an index nobody else sees; instead the
        sidecar is made again and filled by a full sync. Raises what :meth:`IndexDB.open`
        raises when it cannot be made again (the worker then stops with that message).
        """
        if known is not None and self._index_file_id(db) == known:
            return db
        db.close()  # closing twice (after a failed try) is harmless
        fresh = IndexDB.open(self.vault.sidecar)
        report = sync_index(self.vault.root, fresh, self.vault.settings)
        logger.warning("watch: index rebuilt: %d notes", report.added + report.unchanged)
        return fresh

    def _beat_if_healthy(self) -> None:
        """Refresh the heartbeat when due, only while the observer and its emitters run and
        events reach this watcher (:meth:`_events_arrive`)."""
        if self._stopping or self._closing or self._failing or not self._heartbeat.due():
            return
        observer = self._observer
        if observer is None or not observer.is_alive():
            return
        if all(emitter.is_alive() for emitter in observer.emitters) and self._events_arrive():
            self._heartbeat.beat()

    def _events_arrive(self) -> bool:
        """Probe the event path: write a fence into the sidecar, expect its event.

        The heartbeat tells other processes they may skip walking the vault, so it is only
        renewed while a recent probe came through. A probe unseen after :data:`PROBE_SECONDS`
        means the observer's threads run but deliver nothing: it is restarted (warning) and the
        whole vault synced, since events may have been lost. Worker thread only.
        """
        now = time.monotonic()
        if self._probe is not None:
            name, written = self._probe
            with self._cond:
                seen = name not in self._fences
                if seen or now - written >= PROBE_SECONDS:
                    self._fences.discard(name)
            if not seen and now - written < PROBE_SECONDS:
                return True  # the previous probe is still on its way
            (self.vault.sidecar / name).unlink(missing_ok=True)
            self._probe = None
            if not seen:
                self._restart_observer("the file-system observer delivers no events; restarting it")
                return False
        name = self._fence_token + "probe-" + str(next(self._fence_numbers))
        with self._cond:
            self._fences.add(name)
        try:
            (self.vault.sidecar / name).write_bytes(b"")
        except OSError:  # a read-only or vanished sidecar: no probe, no heartbeat either
            with self._cond:
                self._fences.discard(name)
            return False
        self._probe = (name, now)
        return True

    def _loop(self, db: IndexDB) -> None:
        retry_seconds = 0.5
        known = self._index_file_id(db)
        failed = ""
        while True:
            if known is None or self._index_file_id(db) != known:
                if not failed:
                    logger.warning(
                        "watch: %s was deleted or replaced; rebuilding the index", db.path
                    )
                try:
                    db = self._reopen_if_gone(db, known)
                except VaultmemError as err:  # e.g. still being deleted: try again soon
                    if str(err) != failed:
                        logger.error("watch: %s; trying again", err)
                    failed = str(err) or "failed"
                    with self._cond:
                        self._cond.wait_for(lambda: self._stopping, HEALTH_CHECK_SECONDS)
                    if self._stopping:
                        return
                    continue
                failed = ""
                self._db = db
                known = self._index_file_id(db)
            self._beat_if_healthy()
            batch = self._next_batch()
            if batch is None:
                if self._stopping:
                    return
                self._check_observer()
                continue
            paths, full, target = batch
            with self._cond:
                rewatch, self._rewatch_reason = self._rewatch_reason, ""
            if rewatch:  # after the burst settled; the whole vault is synced next
                self._restart_observer(f"{rewatch}; re-watching the vault", level=logging.WARNING)
            if self._sync_batch(db, paths, full, target):
                self._failing = False
                retry_seconds = 0.5
                continue
            self._failing = True
            self._heartbeat.stop()  # the index is behind: clients walk the vault meanwhile
            if self._stopping:
                logger.error("watch: stopping with changes not indexed; the next sync adds them")
                return
            with self._cond:  # a full sync failed too: try again later
                self._full_needed = True
                self._cond.wait_for(lambda: self._stopping, retry_seconds)
            retry_seconds = min(retry_seconds * 2, MAX_RETRY_SECONDS)

    def _next_batch(self) -> tuple[set[str], bool, int] | None:
        """Wait for events, let the burst settle; None after an idle spell or when stopping."""
        with self._cond:
            if not (self._pending or self._full_needed or self._stopping):
                self._cond.wait(HEALTH_CHECK_SECONDS)
            if not (self._pending or self._full_needed):
                return None
            while not self._stopping:
                first = self._first_at if self._first_at is not None else self._last_at
                due = min(self._last_at + self.debounce_seconds, first + self.max_delay_seconds)
                left = due - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            paths, self._pending = self._pending, set()
            full, self._full_needed = self._full_needed, False
            self._first_at = None
            return paths, full, self._seen

    def _sync_batch(self, db: IndexDB, paths: set[str], full: bool, target: int) -> bool:
        """Sync one batch (falling back to a full sync); True when the index is in step."""
        vault = self.vault
        try:
            if full:
                report = sync_index(vault.root, db, vault.settings)
            else:
                report = sync_paths(vault.root, db, vault.settings, paths)
        except Exception:
            logger.exception(
                "watch: syncing %d changed paths failed; running a full sync", len(paths)
            )
            try:
                report = sync_index(vault.root, db, vault.settings)
            except Exception:
                logger.exception("watch: the full sync failed as well")
                return False
        with self._cond:
            self._synced = max(self._synced, target)
            self._cond.notify_all()
        logger.debug("watch: synced %d paths: %s", len(paths), report.as_dict())
        if self.on_sync is not None:
            try:
                self.on_sync(report)
            except Exception:
                logger.exception("watch: the on_sync callback raised")
        return True

    def _check_observer(self) -> None:
        """Restart a dead observer (its threads die on some OS errors, or when the vault folder
        itself is deleted), then sync everything. Failed restarts back off up to a minute."""
        observer = self._observer
        if observer is None or (
            observer.is_alive() and all(emitter.is_alive() for emitter in observer.emitters)
        ):
            return
        self._restart_observer("the file-system observer stopped; restarting it")

    def _restart_observer(self, reason: str, *, level: int = logging.ERROR) -> None:
        """Replace the observer (``reason`` is logged at ``level``), then sync the whole vault
        (events may have been lost meanwhile)."""
        with self._observer_lock:
            observer = self._observer
            if observer is None or self._closing or time.monotonic() < self._restart_at:
                return
            logger.log(level, "watch: %s", reason)
            observer.stop()
            observer.join(timeout=5.0)
            try:
                self._observer = self._new_observer()
            except OSError:
                logger.exception(
                    "watch: could not restart the observer; next try in %.0f s", self._restart_delay
                )
                self._restart_at = time.monotonic() + self._restart_delay
                self._restart_delay = min(self._restart_delay * 2, 60.0)
                return
            self._restart_delay = HEALTH_CHECK_SECONDS
        self._request_full_sync("the observer was restarted")  # before the fences are touched:
        self._touch_fences()  # a waiter that sees one then waits for that sync

    def _touch_fences(self) -> None:
        """Touch the fence files still awaited, so the new observer reports them: the old one
        may have been deaf to them, and a ``wait_idle`` would time out. The full sync asked for
        just before covers whatever changed meanwhile."""
        with self._cond:
            names = list(self._fences)
        for name in names:  # opened for writing and closed: a "closed" event on every platform
            with contextlib.suppress(OSError):  # gone (no O_CREAT): its waiter gave up
                os.close(os.open(self.vault.sidecar / name, os.O_WRONLY))
