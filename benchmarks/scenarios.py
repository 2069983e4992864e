"""One benchmark scenario per process (run by :mod:`benchmarks.run`).

    python -m benchmarks.scenarios SCENARIO VAULT [--repeat K] [--saves K]

prints one JSON object on its last stdout line: the scenario's numbers plus ``maxrss_mb``, the
process's RSS high-water mark (``resource.getrusage(RUSAGE_SELF).ru_maxrss``). Each scenario runs
in a fresh interpreter so peak memory and caches of one do not leak into the next.

Scenarios that edit notes (``one_note``, ``watcher``) restore every byte and mtime they changed
and delete every note they created, then bring the index back in step.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import itertools
import json
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Result = dict[str, Any]


def cpu_seconds(*, children: bool = False) -> float:
    """User + system CPU time of this process so far (all threads); with ``children``, plus
    that of its child processes that have ended (parse workers, a pass's indexing helper)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    spent = usage.ru_utime + usage.ru_stime
    if children:
        ended = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent += ended.ru_utime + ended.ru_stime
    return spent


def kernel_seconds(*, children: bool = False) -> float:
    """System CPU time of this process so far: the kernel's share of :func:`cpu_seconds`
    (creating, renaming and syncing files). On a file system without a journal, creating files
    in the minutes after thousands of deletions costs several times more of it."""
    spent = resource.getrusage(resource.RUSAGE_SELF).ru_stime
    if children:
        spent += resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime
    return spent


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile ``q`` (0–100) of ``values``."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil(n·q/100), at least 1
    return float(ordered[int(rank) - 1])


def markdown_files(root: Path) -> Iterator[str]:
    """Every ``.md`` under ``root`` outside dot folders (what the index sees), as full paths."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.endswith(".md") and not name.startswith("."):
                yield os.path.join(folder, name)


SCRATCH_ENV = "VAULTMEM_BENCH_SCRATCH"
"""A folder for the scenarios' throw-away copies, deleted by :mod:`benchmarks.run` after its last
scenario. Unset (a scenario run alone), each copy is deleted when its scenario ends."""


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A new empty folder for one scenario's throw-away files.

    Under :data:`SCRATCH_ENV` when it is set, and left there: deleting thousands of files slows
    every file creation of the next minutes on a file system without a journal (ext4 then skips
    recently deleted inodes one by one when it allocates one), which would tax the scenarios
    that follow. Otherwise a temporary folder, deleted when the block ends.
    """
    parent = os.environ.get(SCRATCH_ENV)
    if parent:
        yield Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        yield Path(folder)


# ---------------------------------------------------------------------------------- baselines
def stat_walk(root: Path) -> Result:
    """Baseline: ``os.walk`` the vault and ``stat`` every note."""
    started = time.perf_counter()
    count = 0
    for path in markdown_files(root):
        os.stat(path)
        count += 1
    return {"seconds": time.perf_counter() - started, "notes": count}


def raw_read(root: Path) -> Result:
    """Baseline: ``os.walk`` the vault, read every note's bytes and decode them as UTF-8 (a note
    that is not UTF-8 is decoded with replacement characters, as the index reads it).

    This is the "raw read" issue 13 defines (reading and decoding every ``.md`` file in one
    process). ``read_seconds`` is the part spent before decoding: the walk and the reads.
    """
    started = time.perf_counter()
    decoding = 0.0
    count = size = 0
    for path in markdown_files(root):
        with open(path, "rb") as handle:
            data = handle.read()
        size += len(data)
        count += 1
        decode_started = time.perf_counter()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            data.decode("utf-8", errors="replace")
        decoding += time.perf_counter() - decode_started
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "read_seconds": seconds - decoding, "notes": count,
            "bytes": size}


def idle(root: Path) -> Result:
    """Baseline of memory: the interpreter with vaultmem (and numpy, YAML, SQLite) imported."""
    import vaultmem
    import vaultmem.services.vault  # noqa: F401

    return {"vaultmem": str(Path(vaultmem.__file__).parent)}


# ---------------------------------------------------------------------------------- the index
def _open(root: Path) -> tuple[Any, Any]:
    from vaultmem.store.index_db import IndexDB
    from vaultmem.store.settings_file import load_settings
    from vaultmem.store.sidecar import SIDECAR_DIR

    return IndexDB.open(root / SIDECAR_DIR), load_settings(root)


def cold(root: Path) -> Result:
    """``sync_index(rebuild=True)`` on a vault without a sidecar.

    The modules a rebuild imports only when it runs (the bulk loader and the markdown and
    frontmatter parsers: 1.5–1.7 ms in two ``-X importtime`` runs) are imported before the
    clock starts, as the plan and apply scenarios import theirs: start-up is measured in its own
    scenario (:func:`startup`), and the raw read beside this figure imports nothing either.
    """
    from vaultmem.core.links import links  # noqa: F401  (see above)
    from vaultmem.core.notes import note_reading  # noqa: F401  (see above)
    from vaultmem.services.index import index_bulk  # noqa: F401
    from vaultmem.services.index.index_sync import sync_index
    from vaultmem.store.sidecar import SIDECAR_DIR

    shutil.rmtree(root / SIDECAR_DIR, ignore_errors=True)
    db, settings = _open(root)
    cpu = cpu_seconds()
    started = time.perf_counter()
    report = sync_index(root, db, settings, rebuild=True)
    seconds = time.perf_counter() - started
    cpu = cpu_seconds() - cpu
    db.close()
    return {"seconds": seconds, "cpu_seconds": cpu, "notes": report.added,
            "report": report.as_dict()}


def cold_profile(root: Path) -> Result:
    """The cold index of :func:`cold` read and parsed in this one process (no worker processes,
    so that the profile sees every note) under cProfile: ``top``, the three functions that
    spend the most CPU time of their own, with their seconds and share of the profiled total
    (CPU time, so that time the process waits for a core on a busy machine is not charged to
    whichever function it was in)."""
    import cProfile
    import pstats

    from vaultmem.core.links import links  # noqa: F401  (see cold)
    from vaultmem.core.notes import note_reading  # noqa: F401  (see cold)
    from vaultmem.services.index import index_bulk, index_sync  # noqa: F401
    from vaultmem.store.sidecar import SIDECAR_DIR

    shutil.rmtree(root / SIDECAR_DIR, ignore_errors=True)
    db, settings = _open(root)
    worker_start = index_sync.worker_start
    index_sync.worker_start = lambda notes: None  # type: ignore[assignment]  # all in here
    profiler = cProfile.Profile(time.process_time)  # CPU time: a busy machine's waits not in it
    try:
        profiler.enable()
        index_sync.sync_index(root, db, settings, rebuild=True)
        profiler.disable()
    finally:
        index_sync.worker_start = worker_start  # type: ignore[assignment]
        db.close()
    stats = pstats.Stats(profiler)
    total = float(stats.total_tt)  # type: ignore[attr-defined]
    own = sorted(stats.stats.items(), key=lambda item: item[1][2], reverse=True)  # type: ignore[attr-defined]
    top = [{"function": f"{Path(file).name}:{line}({name})", "seconds": tt,
            "share": tt / total if total else 0.0}
           for (file, line, name), (_cc, _nc, tt, _ct, _callers) in own[:3]]
    return {"seconds": total, "top": top}


def nochange(root: Path, repeat: int) -> Result:
    """``sync_index`` of an index already in step with the vault, ``repeat`` times."""
    from vaultmem.services.index.index_sync import sync_index

    db, settings = _open(root)
    sync_index(root, db, settings)  # settle anything left over (not timed)
    runs: list[float] = []
    cpus: list[float] = []
    for _ in range(repeat):
        cpu = cpu_seconds()
        started = time.perf_counter()
        report = sync_index(root, db, settings)
        runs.append(time.perf_counter() - started)
        cpus.append(cpu_seconds() - cpu)
        if report.any_change:
            raise RuntimeError(f"no-change sync changed the index: {report.as_dict()}")
    db.close()
    return {"seconds": statistics.median(runs), "cpu_seconds": statistics.median(cpus),
            "runs": runs, "notes": report.unchanged}


@dataclass(slots=True)
class _Saved:
    """A note's bytes and times before the benchmark edited it."""

    data: bytes
    atime_ns: int
    mtime_ns: int


class _Edits:
    """Edits of existing notes and new notes, undone by :meth:`restore`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.saved: dict[str, _Saved] = {}
        self.created: list[str] = []

    def remember(self, rel: str) -> bytes:
        full = self.root / rel
        if rel not in self.saved:
            info = os.stat(full)
            self.saved[rel] = _Saved(full.read_bytes(), info.st_atime_ns, info.st_mtime_ns)
        return full.read_bytes()

    def restore(self) -> list[str]:
        for rel in self.created:
            (self.root / rel).unlink(missing_ok=True)
        for rel, saved in self.saved.items():
            full = self.root / rel
            full.write_bytes(saved.data)
            os.utime(full, ns=(saved.atime_ns, saved.mtime_ns))
        return [*self.created, *self.saved]


def _edited(data: bytes, k: int) -> bytes:
    """``data`` with one more sentence at the end (a person's edit of the body)."""
    return data.rstrip(b"\n") + f"\n\nEdited by the benchmark, save number {k}.\n".encode()


def _sample_notes(db: Any, k: int, *, memories: bool) -> list[str]:
    where = "type = 'memory'" if memories else "1"
    paths = [r[0] for r in db.conn.execute(f"SELECT path FROM notes WHERE {where} ORDER BY path")]
    if not paths:
        paths = [r[0] for r in db.conn.execute("SELECT path FROM notes ORDER BY path")]
    return random.Random(11).sample(paths, min(k, len(paths)))


def one_note(root: Path, repeat: int) -> Result:
    """``sync_paths`` of one edited note, for ``repeat`` different notes (memories if any)."""
    from vaultmem.services.index.index_sync import sync_index, sync_paths

    db, settings = _open(root)
    sync_index(root, db, settings)
    edits = _Edits(root)
    runs: list[float] = []
    try:
        for k, rel in enumerate(_sample_notes(db, repeat, memories=True)):
            data = edits.remember(rel)
            (root / rel).write_bytes(_edited(data, k))
            started = time.perf_counter()
            report = sync_paths(root, db, settings, [rel])
            runs.append(time.perf_counter() - started)
            if report.changed != 1:
                raise RuntimeError(f"{rel}: expected one changed note, got {report.as_dict()}")
    finally:
        sync_paths(root, db, settings, edits.restore())
        db.close()
    return {
        "ms": statistics.median(runs) * 1000, "p95_ms": percentile(runs, 95) * 1000,
        "max_ms": max(runs) * 1000, "runs": len(runs),
    }


# ---------------------------------------------------------------------------------- watcher
def _paths_in(report: object) -> list[str]:
    """The vault-relative paths an ``on_sync`` argument names (a SyncReport, or paths)."""
    touched = getattr(report, "touched_paths", None)
    if touched is not None:
        return [str(p) for p in touched]
    if isinstance(report, str | os.PathLike):
        return [os.fspath(report)]
    if isinstance(report, list | tuple | set | frozenset):
        return [p for item in report for p in _paths_in(item)]
    return []


class _SyncLog:
    """Collects when ``on_sync`` reported each path (perf_counter seconds)."""

    def __init__(self) -> None:
        self.seen: dict[str, float] = {}
        self.calls = 0
        self.changed = threading.Condition()

    def __call__(self, *args: object, **kwargs: object) -> None:
        now = time.perf_counter()
        with self.changed:
            self.calls += 1
            for path in _paths_in([*args, *kwargs.values()]):
                self.seen.setdefault(path.replace(os.sep, "/"), now)
            self.changed.notify_all()

    def wait_for(self, rel: str, after: float, timeout: float) -> float | None:
        deadline = time.perf_counter() + timeout
        with self.changed:
            while True:
                when = self.seen.get(rel)
                if when is not None and when >= after:
                    return when
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None
                self.changed.wait(left)

    def forget(self, rel: str) -> None:
        with self.changed:
            self.seen.pop(rel, None)


def _save(root: Path, rel: str, data: bytes, how: str) -> None:
    """Save like an editor: ``write`` in place, or ``replace`` a temp file over the note."""
    full = root / rel
    if how == "replace":
        temp = full.with_name(f".{full.name}.tmp")
        temp.write_bytes(data)
        os.replace(temp, full)
    else:
        full.write_bytes(data)


def watcher(root: Path, saves: int) -> Result:
    """Save notes while a ``VaultWatcher`` runs; latency = write start → ``on_sync`` names it."""
    try:
        from vaultmem.services.index.watcher import VaultWatcher
    except ImportError as err:
        return {"available": False, "why": f"vaultmem.services.index.watcher: {err}"}
    from vaultmem.services.index.index_sync import sync_index
    from vaultmem.services.vault import Vault

    vault = Vault.open(root)
    vault.sync()
    log = _SyncLog()
    watch = VaultWatcher(vault, debounce_seconds=0.05, on_sync=log)
    edits = _Edits(root)
    targets = _sample_notes(vault.index, saves, memories=True)
    latencies: dict[str, list[float]] = {"create": [], "write": [], "replace": []}
    missed: list[str] = []
    fallback = 0
    watch.start()
    try:
        if not watch.wait_idle(300.0):
            raise RuntimeError("the watcher did not settle after start")
        for k in range(saves):
            kind = ("create", "write", "replace")[k % 3]
            if kind == "create":
                rel = f"{vault.settings.folders.stm}/Watcher probe {k}.md"
                edits.created.append(rel)
                data = (f"---\ntype: memory\nid: BENCHPROBE{k:06d}\n---\nProbe note {k} written "
                        "by the benchmark; links to [[Watcher probe 0]].\n").encode()
            else:
                rel = targets[k % len(targets)]
                data = _edited(edits.remember(rel), k)
            log.forget(rel)
            started = time.perf_counter()
            _save(root, rel, data, "write" if kind == "create" else kind)
            seen = log.wait_for(rel, started, timeout=10.0)
            if seen is None:  # on_sync did not name the path: fall back to wait_idle
                if not watch.wait_idle(10.0):
                    missed.append(rel)
                    continue
                seen = time.perf_counter()
                fallback += 1
            latencies[kind].append(seen - started)
            watch.wait_idle(10.0)  # next save is a burst of its own
    finally:
        watch.stop()
        edits.restore()
        db = vault.index
        sync_index(root, db, vault.settings)
        vault.close()
    every = [x for values in latencies.values() for x in values]
    if not every:
        return {"available": True, "saves": 0, "missed": len(missed), "fallback": fallback}
    return {
        "available": True, "saves": len(every), "missed": len(missed), "fallback": fallback,
        "sync_calls": log.calls,
        "p50_ms": percentile(every, 50) * 1000, "p95_ms": percentile(every, 95) * 1000,
        "max_ms": max(every) * 1000,
        "by_kind_p50_ms": {k: percentile(v, 50) * 1000 for k, v in latencies.items() if v},
    }


# ---------------------------------------------------------------------------------- lifecycle
def plan(root: Path, repeat: int) -> Result:
    """The four lifecycle plans (promote, expire, forget, prune) from one memory table.

    :func:`dry_run` times what ``vaultmem lifecycle --dry-run`` and ``status`` do on top: the
    seal pass, repairs, the boxes archived with their members.

    Per run: ``plan_table(vault, now)`` (which syncs, then loads and scores the columns of the
    memories a pass can act on, as ``vaultmem lifecycle`` does; from 10,000 notes the vault is
    walked in a forked process meanwhile, whose CPU time counts too) and ``plan_pass(...,
    table=table)`` for promote, expire, forget, prune. Also timed alone: the sync, the
    load+score, and four ``plan_pass`` calls without a shared table (each syncs and loads again).
    ``memories`` counts every memory of the index, ``loaded`` those in the table.
    """
    from benchmarks.generate_vault import REFERENCE_TIME
    from vaultmem.services.lifecycle.lifecycle import PLANNED_WHERE, plan_pass, plan_table
    from vaultmem.services.memories.memory_view import memory_table
    from vaultmem.services.vault import Vault

    now = REFERENCE_TIME
    passes = ("promote", "expire", "forget", "prune")
    vault = Vault.open(root)
    vault.sync()
    totals: list[float] = []
    syncs: list[float] = []
    loads: list[float] = []
    plans: list[float] = []
    planned: dict[str, int] = {}
    cpus: list[float] = []
    for _ in range(repeat):
        cpu = cpu_seconds(children=True)  # a big vault is walked in a forked process
        t0 = time.perf_counter()
        table = plan_table(vault, now)
        t1 = time.perf_counter()
        planned = {name: len(plan_pass(vault, name, now, table=table).planned) for name in passes}
        t2 = time.perf_counter()
        cpus.append(cpu_seconds(children=True) - cpu)
        vault.sync()
        t3 = time.perf_counter()
        memory_table(vault.index, vault.settings, now, where=PLANNED_WHERE)
        t4 = time.perf_counter()
        totals.append(t2 - t0)
        plans.append(t2 - t1)
        syncs.append(t3 - t2)
        loads.append(t4 - t3)
    started = time.perf_counter()
    for name in passes:
        plan_pass(vault, name, now)
    unshared = time.perf_counter() - started
    memories = _memory_count(vault)
    vault.close()
    return {
        "seconds": statistics.median(totals), "cpu_seconds": statistics.median(cpus),
        "sync_seconds": statistics.median(syncs),
        "load_seconds": statistics.median(loads), "plan_seconds": statistics.median(plans),
        "unshared_seconds": unshared, "memories": memories, "loaded": len(table),
        "planned": planned,
    }


def _memory_count(vault: Any) -> int:
    return int(vault.index.conn.execute("SELECT count(*) FROM notes WHERE type = 'memory'")
               .fetchone()[0])


def plan_live(root: Path, repeat: int) -> Result:
    """The four plans of :func:`plan` while a real ``VaultWatcher`` keeps the index fresh: its
    heartbeat makes ``vault.table`` skip the walk (``Vault.catch_up``). Its own process, so the
    watcher's memory does not count in :func:`plan`'s peak RSS."""
    from benchmarks.generate_vault import REFERENCE_TIME
    from vaultmem.services.index.live_index import index_is_live
    from vaultmem.services.index.watcher import VaultWatcher
    from vaultmem.services.lifecycle.lifecycle import plan_pass, plan_table
    from vaultmem.services.vault import Vault

    passes = ("promote", "expire", "forget", "prune")
    vault = Vault.open(root)
    watch = VaultWatcher(vault, debounce_seconds=0.05)
    watch.start()
    try:
        deadline = time.monotonic() + 60.0
        while not index_is_live(vault.sidecar) and time.monotonic() < deadline:
            watch.wait_idle(1.0)
        if not index_is_live(vault.sidecar):
            raise RuntimeError("the watcher's heartbeat never counted")
        totals: list[float] = []
        cpus: list[float] = []
        for _ in range(repeat):
            cpu = cpu_seconds()
            started = time.perf_counter()
            table = plan_table(vault, REFERENCE_TIME)
            planned = {name: len(plan_pass(vault, name, REFERENCE_TIME, table=table).planned)
                       for name in passes}
            totals.append(time.perf_counter() - started)
            cpus.append(cpu_seconds() - cpu)
        memories = _memory_count(vault)
    finally:
        watch.stop()
        vault.close()
    return {"seconds": statistics.median(totals), "cpu_seconds": statistics.median(cpus),
            "runs": totals, "memories": memories, "loaded": len(table), "planned": planned}


def dry_run(root: Path, repeat: int) -> Result:
    """What ``vaultmem lifecycle --dry-run`` (and ``vaultmem status``) does, ``repeat`` times:
    ``run_passes`` over every pass of :data:`PASS_ORDER` (repair, seal, promote, expire, forget,
    prune; the walk, the seal pass's inputs and the table, the plans, the boxes archived with
    their members) as a dry run at the generated vault's "now". ``planned``: moves per pass."""
    from benchmarks.generate_vault import REFERENCE_TIME
    from vaultmem.core.lifecycle.lifecycle_plan import PASS_ORDER
    from vaultmem.services.lifecycle.lifecycle import run_passes
    from vaultmem.services.vault import Vault

    vault = Vault.open(root)
    vault.sync()
    totals: list[float] = []
    cpus: list[float] = []
    planned: dict[str, int] = {}
    for _ in range(repeat):
        cpu = cpu_seconds(children=True)  # a big vault is walked in a forked process
        started = time.perf_counter()
        run = run_passes(vault, PASS_ORDER, REFERENCE_TIME, dry_run=True, command="lifecycle")
        totals.append(time.perf_counter() - started)
        cpus.append(cpu_seconds(children=True) - cpu)
        planned = {r.name: len(r.planned) for r in run.results}
    memories = _memory_count(vault)
    vault.close()
    return {"seconds": statistics.median(totals), "cpu_seconds": statistics.median(cpus),
            "runs": totals, "memories": memories, "planned": planned}


def recall(root: Path, queries: int) -> Result:
    """``vault.recall(query, k=10, sync=False)`` latency over ``queries`` seeded queries.

    Queries are 1–3 words taken from the titles and bodies of random notes (so most match), as
    an assistant would send them; the index is synced once before, as ``vaultmem watch`` keeps
    it. p50/p95 in milliseconds.
    """
    from benchmarks.generate_vault import REFERENCE_TIME
    from vaultmem.services.vault import Vault

    vault = Vault.open(root)
    vault.sync()
    rng = random.Random(11)
    rows = vault.index.conn.execute(
        "SELECT title, substr(body, 1, 400) FROM notes_fts WHERE rowid IN "
        "(SELECT nid FROM notes ORDER BY nid LIMIT 2000)"
    ).fetchall()
    words = [w for title, body in rows for w in f"{title} {body}".split() if w.isalpha()]
    texts = [" ".join(rng.sample(words, rng.choice((1, 2, 3)))) for _ in range(queries)]
    for text in texts[:10]:  # warm the page cache, as a long-running assistant would have it
        vault.recall(text, k=10, now=REFERENCE_TIME, sync=False)
    latencies: list[float] = []
    hits = 0
    cpu = cpu_seconds()
    for text in texts:
        started = time.perf_counter()
        found = vault.recall(text, k=10, now=REFERENCE_TIME, sync=False)
        latencies.append((time.perf_counter() - started) * 1000)
        hits += bool(found)
    cpu = cpu_seconds() - cpu
    vault.close()
    return {
        "p50_ms": statistics.median(latencies), "p95_ms": percentile(latencies, 95),
        "max_ms": max(latencies), "queries": len(texts), "with_hits": hits,
        "cpu_seconds": cpu,
    }


def apply(root: Path) -> Result:
    """The apply rate: ``vault.lifecycle(now)`` on a throw-away copy of the vault, then the
    time ``vault.undo()`` takes to put every file back (``undo_seconds``, ``undone`` files).

    Every move is journaled (write-ahead), renamed and edited atomically; reports moves per
    second over the whole run (plan, apply and re-indexing included), the paths re-indexed
    (only what the run wrote) and the seconds the run spent re-indexing them or waiting for its
    indexing helper, the CPU seconds of the run and of its child processes, and how many moves
    of each pass were applied. Baselines, in the same copy: a raw ``os.rename`` of as many
    notes to another folder, and, just before the run, creating :data:`CREATE_PROBE_FILES`
    empty files in the folder holding the most notes (where the run writes most of its
    temp files): every note the run writes is a new file (its atomic write), so the run's rate
    follows what a file creation costs at that moment. On ext4 without a journal (this
    project's benchmark machine), creating a file skips one by one every inode of its block
    group freed in the last 1 to 6 minutes (the kernel's ``recently_deleted``); after
    thousands of files were deleted nearby, a creation can take a hundred times as long, and
    this probe shows it.
    The copy and its first index are flushed to disk (``os.sync``) before the clock starts:
    the pass's first ``syncfs`` would otherwise write out the whole fresh copy, which a vault in
    use does not have pending. The modules a pass runs are imported before it too, as the cold
    and plan scenarios import theirs (numpy alone took 36 and 78 ms in two ``-X importtime``
    runs): start-up is measured in its own scenario (:func:`startup`).
    """
    from benchmarks.generate_vault import REFERENCE_TIME
    from vaultmem.services.lifecycle import lifecycle, pass_session  # noqa: F401  (see above)
    from vaultmem.services.vault import Vault

    with scratch_folder("vaultmem-apply-") as scratch:
        copy = scratch / root.name
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".vaultmem"))
        vault = Vault.open(copy)
        vault.sync()
        create_seconds = _raw_creates(_fullest_folder(copy), CREATE_PROBE_FILES)
        os.sync()
        cpu, kernel = cpu_seconds(children=True), kernel_seconds(children=True)
        started = time.perf_counter()
        run = vault.lifecycle(now=REFERENCE_TIME)
        seconds = time.perf_counter() - started
        cpu = cpu_seconds(children=True) - cpu
        kernel = kernel_seconds(children=True) - kernel
        total = vault.index.conn.execute("SELECT count(*) FROM notes").fetchone()[0]
        os.sync()  # the undo starts, as the pass did, with nothing pending on disk
        started = time.perf_counter()
        undone = len(vault.undo().restored)
        undo_seconds = time.perf_counter() - started
        vault.close()
        moves = sum(len(r.applied) for r in run.results)
        rename_seconds = _raw_renames(copy, moves)
    return {
        "seconds": seconds, "cpu_seconds": cpu, "kernel_seconds": kernel, "moves": moves,
        "moves_per_second": moves / seconds if seconds else 0.0,
        "applied": {r.name: len(r.applied) for r in run.results},
        "reindexed_paths": run.reindexed, "reindex_seconds": run.reindex_seconds,
        "indexed_notes": total, "undo_seconds": undo_seconds, "undone": undone,
        "rename_seconds": rename_seconds,
        "renames_per_second": moves / rename_seconds if rename_seconds else 0.0,
        "creates_per_second": CREATE_PROBE_FILES / create_seconds if create_seconds else 0.0,
    }


CREATE_PROBE_FILES = 1000
"""Empty files the apply scenario creates to probe the cost of a file creation."""


def _fullest_folder(root: Path) -> Path:
    """The folder of ``root`` holding the most notes."""
    counts = collections.Counter(os.path.dirname(path) for path in markdown_files(root))
    return Path(counts.most_common(1)[0][0])


def _raw_creates(folder: Path, n: int) -> float:
    """Seconds to create ``n`` empty hidden files in ``folder`` (left there: deleting them
    would slow the creations that follow; see :func:`apply`). vaultmem ignores dot-files."""
    paths = [os.path.join(folder, f".bench-create-{i}") for i in range(n)]
    started = time.perf_counter()
    for path in paths:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    return time.perf_counter() - started


def _raw_renames(root: Path, n: int) -> float:
    """Seconds to ``os.rename`` ``n`` notes of ``root`` into a new folder (the apply baseline)."""
    notes = list(itertools.islice(markdown_files(root), n))
    target = root / "renamed"
    target.mkdir()
    started = time.perf_counter()
    for i, path in enumerate(notes):
        os.rename(path, os.path.join(target, f"{i}.md"))
    return time.perf_counter() - started


def import_memories(root: Path, n: int, *, embeddings: bool = False) -> Result:
    """``Vault.import_jsonl`` of ``n`` generated memories into a new vault (in a temp folder).

    Without ``embeddings`` the import runs as a default install (``pip install vaultmem``, no
    embedding extra) does, keywords only (``VAULTMEM_EMBEDDINGS=off``); with it, as the
    ``embeddings`` extra does (``auto``: each imported memory is embedded, in batches), and
    ``provider`` names the provider that ran (``None``: none is installed). CPU seconds include
    the import's indexing helper process. Baselines on the same disk in the same process:
    writing ``n`` files of the same size with and without an ``fsync`` each
    (:mod:`benchmarks.import_speed`).
    """
    os.environ["VAULTMEM_EMBEDDINGS"] = "auto" if embeddings else "off"
    from benchmarks.import_speed import baseline_writes, make_jsonl
    from vaultmem.services.vault import Vault

    with scratch_folder("vaultmem-import-") as work:
        if embeddings:  # onnxruntime leaves a session file (.ses) in TMPDIR: in the scratch
            os.environ["TMPDIR"] = str(work)
            tempfile.tempdir = None
        size = make_jsonl(work / "memories.jsonl", n) // n + 300
        lines = (work / "memories.jsonl").read_bytes().splitlines(keepends=True)
        Vault.init(work / "vault")
        with Vault.open(work / "vault") as vault:
            chosen = None
            if embeddings:
                from vaultmem.services.semantic.embeddings import provider

                ready = provider(vault)  # asked before the clock starts
                chosen = ready.name if ready is not None else None
            cpu, kernel = cpu_seconds(children=True), kernel_seconds(children=True)
            started = time.perf_counter()
            report = vault.import_jsonl(lines)
            seconds = time.perf_counter() - started
            cpu = cpu_seconds(children=True) - cpu
            kernel = kernel_seconds(children=True) - kernel
        fsynced = baseline_writes(work / "fsync", n, size, fsync=True)
        plain = baseline_writes(work / "plain", n, size, fsync=False)
    imported = len(report.imported)
    return {
        "seconds": seconds, "cpu_seconds": cpu, "kernel_seconds": kernel, "imported": imported,
        "errors": len(report.errors), "per_second": imported / seconds if seconds else 0.0,
        "fsync_writes_per_second": n / fsynced, "plain_writes_per_second": n / plain,
        "embeddings": embeddings, "provider": chosen,
    }


def startup(root: Path, repeat: int) -> Result:
    """Wall time of whole processes: ``python -c pass``, ``vaultmem --version`` and ``vaultmem
    recall`` on ``root`` (index already built), interleaved, ``repeat`` times each; medians.
    ``recall`` runs as a default install does (keywords only, ``VAULTMEM_EMBEDDINGS=off``);
    ``recall_embeddings`` with the embeddings extra's ``auto`` provider (it loads the model and
    embeds the query; the same as ``recall`` when the extra is not installed).

    Bytecode is cached as for an installed package (``PYTHONDONTWRITEBYTECODE`` is dropped for
    these processes; the warm-up run writes it): otherwise every start recompiles vaultmem's
    sources and the figure measures the compiler, not the imports."""
    import subprocess

    entry = "from vaultmem.cli import main; main()"
    commands = {
        "pass": [sys.executable, "-c", "pass"],
        "version": [sys.executable, "-c", entry, "--version"],
        "recall": [sys.executable, "-c", entry, "recall", "--vault", str(root), "coffee brewing"],
    }
    commands["recall_embeddings"] = commands["recall"]
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    envs = {name: {**base, "VAULTMEM_EMBEDDINGS": "auto" if name == "recall_embeddings" else "off"}
            for name in commands}
    env = envs["recall"]
    # index, bytecode and file caches warm
    subprocess.run(commands["recall"], capture_output=True, check=True, env=env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    with scratch_folder("vaultmem-startup-") as work:  # onnxruntime's session file (.ses)
        envs["recall_embeddings"]["TMPDIR"] = str(work)
        for _ in range(max(repeat, 1)):
            for name, command in commands.items():
                started = time.perf_counter()
                subprocess.run(command, capture_output=True, check=True, env=envs[name])
                times[name].append(time.perf_counter() - started)
    result: Result = {f"{name}_ms": 1000 * statistics.median(v) for name, v in times.items()}
    result["runs"] = max(repeat, 1)
    result["seconds"] = sum(sum(v) for v in times.values())
    return result


SCENARIOS: dict[str, Callable[[Path, argparse.Namespace], Result]] = {
    "startup": lambda root, a: startup(root, a.repeat),
    "apply": lambda root, a: apply(root),
    "import": lambda root, a: import_memories(root, a.repeat),
    "import_embed": lambda root, a: import_memories(root, a.repeat, embeddings=True),
    "recall": lambda root, a: recall(root, a.saves),
    "stat_walk": lambda root, a: stat_walk(root),
    "raw_read": lambda root, a: raw_read(root),
    "idle": lambda root, a: idle(root),
    "cold": lambda root, a: cold(root),
    "cold_profile": lambda root, a: cold_profile(root),
    "nochange": lambda root, a: nochange(root, a.repeat),
    "one_note": lambda root, a: one_note(root, a.repeat),
    "watcher": lambda root, a: watcher(root, a.saves),
    "plan": lambda root, a: plan(root, a.repeat),
    "plan_live": lambda root, a: plan_live(root, a.repeat),
    "dry_run": lambda root, a: dry_run(root, a.repeat),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scenarios")
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("vault", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--saves", type=int, default=100)
    args = parser.parse_args(argv)
    result = SCENARIOS[args.scenario](args.vault.resolve(), args)
    result["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
