"""The project's benchmark: the performance targets of spec section 11, beside same-run baselines.

    python -m benchmarks.run [--sizes 10000,100000] [--real-vaults [--profile]] [--out DIR]
                             [--quick] [--json]

For each size N it generates (or reuses, from ``--out``, default ``benchmarks/out/``) a synthetic
vault of N memories and N/10 ordinary notes (:mod:`benchmarks.generate_vault`), then runs each
scenario of :mod:`benchmarks.scenarios` in a fresh subprocess (so the peak RSS of one scenario is
its own) and prints one table per vault::

    figure | value | baseline | target | ok?

vaultmem's bytecode is compiled first (as an installed wheel has it); the cold index and the
lifecycle apply, like the baselines, are the median of three runs (one with ``--quick``). The
apply runs come after every other scenario (see :func:`bench_apply`). Before each apply run and
the import run, the rate at which the file system creates files is probed and printed beside the
figure; by default nothing is waited for (the figures are what a newcomer sees at that moment);
with ``--settle-seconds S`` a slow one is waited for, up to S seconds (see
:mod:`benchmarks.creation_rate`), and the wait printed too. The import is measured as a default
install runs it (keywords only: ``pip install vaultmem`` has no embedding provider), and beside it
with the ``embeddings`` extra where a provider is installed (each memory embedded, in batches).

Baselines are measured in the same run on the same files, so figures from noisy or different
machines can be compared through the ratio: a raw ``os.walk`` + ``stat`` of every note, a raw read
of every note (its bytes read and decoded as UTF-8), and the RSS of an interpreter that has only
imported vaultmem. Throw-away copies (real vaults, apply, import) are deleted after the last
scenario, not between scenarios (see :func:`benchmarks.scenarios.scratch_folder`).

Targets that are rates or latencies (cold notes/s, one changed note, watcher p95) are checked on
every vault; totals that grow with N (no-change sync, lifecycle plan, peak memory) only at the N
the spec names (100,000); elsewhere ``ok?`` is ``-``. ``--real-vaults`` adds the cold index,
no-change sync and one-note figures on copies of ``tests/vaults/*`` (the sources are never
written) and of a generated vault of 6,000 plugin notes shaped like obsidian-hub's
(:func:`benchmarks.generate_vault.generate_hub_vault`, cached in ``--out``); with ``--profile``
each of them also gets a row naming the three costliest functions of its cold index, profiled
in one process. ``--quick`` repeats less (for the smoke test); ``--json`` prints one JSON
document instead of the tables. The last results are also written to ``<out>/last-run.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.creation_rate import DEFAULT_LIMIT_SECONDS, wait_for_creation
from benchmarks.generate_vault import GENERATOR_VERSION, generate_hub_vault, generate_vault
from benchmarks.scenarios import SCRATCH_ENV

REPO = Path(__file__).resolve().parents[1]
REAL_VAULTS_DIR = REPO / "tests" / "vaults"
REAL_VAULTS = ("13th-age-srd", "kepano-obsidian")
HUB_NOTES = 6_000
"""Plugin notes of the generated hub-shaped vault ``--real-vaults`` adds (obsidian-hub: 6,573)."""
DEFAULT_OUT = REPO / "benchmarks" / "out"
TARGET_N = 100_000
COLD_TARGET_N = 10_000
COLD_RAW_READ_FACTOR = 5.0
"""A cold index may take at most this many times as long as a raw read of the same notes."""
STARTUP_MEMORIES = 910
"""The start-up figures run ``recall`` on a synthetic vault of 910 memories + 91 notes (1,001)."""
DIRTY_MARK = ".bench-dirty"
COMPLETE_MARK = ".bench-complete"

FIGURES = (
    "cold index (rebuild)",
    "no-change sync",
    "one changed note (sync_paths)",
    "watcher save→indexed p50",
    "watcher save→indexed p95",
    "lifecycle plan, 4 passes",
    "lifecycle plan, live watcher",
    "peak RSS, cold index",
    "peak RSS, lifecycle plan",
)
"""Every headline figure of a synthetic vault, in table order (the smoke test checks them)."""


@dataclass(slots=True)
class Figure:
    """One row of a table. ``ok`` is None where the target does not apply (or nothing measured)."""

    name: str
    value: str
    baseline: str = ""
    target: str = ""
    ok: bool | None = None
    number: float | None = None


@dataclass(slots=True)
class Corpus:
    """One benchmarked vault and its figures; ``raw`` holds each scenario's JSON."""

    label: str
    path: str
    notes: int = 0
    size_mb: float = 0.0
    generated_seconds: float | None = None
    load_average: list[float] = field(default_factory=list)
    """1-minute load average before and after the scenarios (other work skews wall time)."""
    figures: list[Figure] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Effort:
    """How often each scenario repeats."""

    baseline: int
    nochange: int
    one_note: int
    saves: int
    plan: int


FULL = Effort(baseline=3, nochange=5, one_note=20, saves=100, plan=3)
QUICK = Effort(baseline=1, nochange=1, one_note=5, saves=9, plan=1)


# --------------------------------------------------------------------------------- processes
def run_scenario(scenario: str, vault: Path, *, repeat: int = 1, saves: int = 0) -> dict[str, Any]:
    """Run one scenario in a fresh interpreter; its JSON result, or ``{"error": ...}``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    command = [sys.executable, "-m", "benchmarks.scenarios", scenario, str(vault),
               "--repeat", str(repeat), "--saves", str(saves)]
    try:
        proc = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=3600)
    except subprocess.TimeoutExpired:
        return {"error": f"{scenario}: timed out after an hour"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"{scenario}: {tail}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def compile_bytecode() -> None:
    """Compile vaultmem's modules to bytecode, as pip does when it installs the wheel.

    Without it an environment with ``PYTHONDONTWRITEBYTECODE`` (or a read-only checkout)
    compiles every module again in each scenario's fresh interpreter, and the start-up and
    small-vault figures measure the compiler.
    """
    import compileall

    compileall.compile_dir(REPO / "vaultmem", quiet=1, workers=1)


def _median_of(
    scenario: str, vault: Path, times: int, before: Callable[[], dict[str, float]] | None = None
) -> dict[str, Any]:
    """The run of median time among ``times`` runs of ``scenario`` (the first error if none
    ran), with ``all_seconds``: the times of every run that did, fastest first, and
    ``in_order``: each of those runs' seconds (and file-creation probe and wait, where it has
    them) in the order they ran. ``before`` runs before each run; what it returns joins that
    run's result (:func:`settler`)."""
    runs = []
    for _ in range(times):
        waited = before() if before is not None else {}
        runs.append({**run_scenario(scenario, vault), **waited})
    done = [r for r in runs if "error" not in r]
    good = sorted(done, key=lambda r: float(r["seconds"]))
    if not good:
        return runs[0]
    kept = ("seconds", "creates_per_second", "settle_waited_seconds", "settle_first_rate")
    in_order = [{key: float(r[key]) for key in kept if key in r} for r in done]
    return {**good[len(good) // 2], "all_seconds": [float(r["seconds"]) for r in good],
            "in_order": in_order}


# --------------------------------------------------------------------------------- vaults
def vault_size(root: Path) -> tuple[int, float]:
    """(notes, MB of their bytes) outside dot folders."""
    notes = size = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.endswith(".md"):
                notes += 1
                size += os.stat(os.path.join(folder, name)).st_size
    return notes, size / 1e6


def cached_vault(out: Path, n: int, seed: int = 0) -> tuple[Path, float | None]:
    """The synthetic vault of ``n`` memories under ``out`` (generated if missing or left dirty).

    Returns its path and the generation time in seconds (None when reused).
    """
    root = out / f"vault-n{n}-o{n // 10}-s{seed}-g{GENERATOR_VERSION}"
    if (root / COMPLETE_MARK).exists() and not (root / DIRTY_MARK).exists():
        return root, None
    partial = root.with_name(root.name + ".partial")
    for stale in (root, partial):
        shutil.rmtree(stale, ignore_errors=True)
    started = time.perf_counter()
    generate_vault(partial, n, n // 10, seed)
    seconds = time.perf_counter() - started
    (partial / COMPLETE_MARK).write_text(f"generated in {seconds:.1f} s\n")
    partial.rename(root)
    return root, seconds


def cached_hub_vault(out: Path, n: int = HUB_NOTES, seed: int = 0) -> tuple[Path, float | None]:
    """The generated hub-shaped vault of ``n`` plugin notes under ``out`` (generated if missing;
    :func:`benchmarks.generate_vault.generate_hub_vault`), and its generation time (None when
    reused). Benchmarked through a writable copy, as the real vaults are."""
    root = out / f"hub-n{n}-s{seed}-g{GENERATOR_VERSION}"
    if (root / COMPLETE_MARK).exists():
        return root, None
    partial = root.with_name(root.name + ".partial")
    for stale in (root, partial):
        shutil.rmtree(stale, ignore_errors=True)
    started = time.perf_counter()
    generate_hub_vault(partial, n, seed)
    seconds = time.perf_counter() - started
    (partial / COMPLETE_MARK).write_text(f"generated in {seconds:.1f} s\n")
    partial.rename(root)
    return root, seconds


def _writable_copy(source: Path) -> Path:
    """A writable copy of ``source`` in the run's scratch folder (deleted after the last
    scenario: see :func:`benchmarks.scenarios.scratch_folder`)."""
    scratch = os.environ.get(SCRATCH_ENV)
    target = Path(tempfile.mkdtemp(prefix="vaultmem-bench-", dir=scratch)) / source.name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".vaultmem"))
    for folder, _dirs, files in os.walk(target):
        os.chmod(folder, os.stat(folder).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        for name in files:
            path = os.path.join(folder, name)
            os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)
    return target


# --------------------------------------------------------------------------------- figures
def _fmt(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}"


def _secs(value: float) -> str:
    return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"


def _ratio(value: float, baseline: float) -> str:
    return f"{value / baseline:.1f}x" if baseline > 0 else "-"


def _cpu(result: dict[str, Any], lead: str = ", ") -> str:
    """``", 3.1 s cpu"``, with ``" (0.4 s kernel)"`` where the kernel's share was measured
    (closed with ``)`` when ``lead`` opens a parenthesis)."""
    if "cpu_seconds" not in result:
        return ""
    kernel = result.get("kernel_seconds")
    share = "" if kernel is None else f" ({_secs(float(kernel))} kernel)"
    return f"{lead}{_secs(float(result['cpu_seconds']))} cpu{share}" + (
        ")" if "(" in lead else ""
    )


def _check(value: float, limit: float, at_least: bool, applies: bool) -> bool | None:
    if not applies:
        return None
    return value >= limit if at_least else value <= limit


def _error_row(name: str, result: dict[str, Any], target: str) -> Figure:
    return Figure(name, "ERROR", str(result.get("error", "?"))[:80], target, False)


def index_figures(
    walk: dict[str, Any], read: dict[str, Any], idle: dict[str, Any],
    cold: dict[str, Any], nochange: dict[str, Any], one: dict[str, Any], *, n: int | None,
) -> list[Figure]:
    """Rows for the cold index, no-change sync, one changed note and the cold index's RSS."""
    rows: list[Figure] = []
    at_target = n == TARGET_N
    read_rate = read["notes"] / read["seconds"] if "error" not in read else 0.0
    read_base = f"raw read {_fmt(read_rate)} notes/s" if read_rate else "-"
    target = "≤ 5x raw read" + (", ≥ 10,000 notes/s at 100k" if at_target else "")
    if "error" in cold:
        rows.append(_error_row(FIGURES[0], cold, target))
    else:
        rate = cold["notes"] / cold["seconds"]
        within = bool(read_rate) and read_rate / rate <= COLD_RAW_READ_FACTOR
        rows.append(Figure(
            FIGURES[0], f"{_fmt(rate)} notes/s ({_secs(cold['seconds'])}{_cpu(cold)})",
            f"{read_base} (cold = {_ratio(read_rate, rate)} of it)", target,
            within and (not at_target or rate >= 10_000), rate,
        ))
    walk_s = float(walk.get("seconds", 0.0))
    walk_base = f"stat walk {_secs(walk_s)}" if "error" not in walk else "-"
    target = "≤ 2 s at N=100k"
    if "error" in nochange:
        rows.append(_error_row(FIGURES[1], nochange, target))
    else:
        s = float(nochange["seconds"])
        rows.append(Figure(
            FIGURES[1], f"{_secs(s)}{_cpu(nochange, ' (')}",
            f"{walk_base} ({_ratio(s, walk_s)} of it)", target,
            _check(s, 2.0, False, at_target), s,
        ))
    per_note_ms = 1000 * read["seconds"] / read["notes"] if read_rate else 0.0
    target = "≤ 20 ms"
    if "error" in one:
        rows.append(_error_row(FIGURES[2], one, target))
    else:
        ms = float(one["ms"])
        rows.append(Figure(
            FIGURES[2], f"{ms:.1f} ms (p95 {one['p95_ms']:.1f}, n={one['runs']})",
            f"raw read of one note {per_note_ms:.3f} ms", target, _check(ms, 20, False, True), ms,
        ))
    rows.append(_rss_row(FIGURES[7], cold, idle, at_target))
    return rows


def _rss_row(name: str, result: dict[str, Any], idle: dict[str, Any], applies: bool) -> Figure:
    target = "≤ 300 MB at N=100k"
    if "error" in result:
        return _error_row(name, result, target)
    mb = float(result["maxrss_mb"])
    base = f"idle interpreter + imports {idle['maxrss_mb']:.0f} MB" if "error" not in idle else "-"
    return Figure(name, f"{mb:.0f} MB", base, target, _check(mb, 300, False, applies), mb)


def watcher_figures(result: dict[str, Any], read: dict[str, Any]) -> list[Figure]:
    names = FIGURES[3], FIGURES[4]
    if "error" in result:
        return [_error_row(names[0], result, "-"), _error_row(names[1], result, "≤ 300 ms")]
    if not result.get("available"):
        return [Figure(names[0], "not available", str(result.get("why", ""))[:80]),
                Figure(names[1], "not available", "", "≤ 300 ms")]
    if not result.get("saves"):
        return [Figure(names[0], "no save seen", f"missed {result.get('missed')}", "-", False),
                Figure(names[1], "no save seen", "", "≤ 300 ms", False)]
    per_note_ms = 1000 * read["seconds"] / read["notes"] if "error" not in read else 0.0
    extra = f", missed {result['missed']}" if result.get("missed") else ""
    extra += f", {result['fallback']} by wait_idle" if result.get("fallback") else ""
    base = f"raw read of one note {per_note_ms:.3f} ms; debounce 50 ms"
    p95 = float(result["p95_ms"])
    return [
        Figure(names[0], f"{result['p50_ms']:.0f} ms (n={result['saves']}{extra})", base, "-",
               None, float(result["p50_ms"])),
        Figure(names[1], f"{p95:.0f} ms (max {result['max_ms']:.0f})", base, "≤ 300 ms",
               _check(p95, 300, False, True), p95),
    ]


def plan_figures(
    result: dict[str, Any], live: dict[str, Any], walk: dict[str, Any], idle: dict[str, Any],
    n: int,
) -> list[Figure]:
    at_target = n == TARGET_N
    target = "≤ 0.7 s at N=100k"
    if "error" in result:
        return [_error_row(FIGURES[5], result, target), _error_row(FIGURES[6], result, target),
                _error_row(FIGURES[8], result, target)]
    s = float(result["seconds"])
    walk_s = float(walk.get("seconds", 0.0))
    planned = ", ".join(f"{k} {v}" for k, v in result["planned"].items())
    return [
        Figure(FIGURES[5], f"{_secs(s)} ({_memories(result)}{_cpu(result)})",
               f"stat walk {_secs(walk_s)} ({_ratio(s, walk_s)} of it)" if walk_s else "-",
               target, _check(s, 0.7, False, at_target), s),
        Figure("  sync alone (walk here)", _secs(result["sync_seconds"]),
               "overlaps the load in vault.table from 10,000 notes"),
        Figure("  load + score columns alone", _secs(result["load_seconds"])),
        Figure("  of which 4 plan_pass on the table", _secs(result["plan_seconds"]),
               f"planned: {planned}"),
        Figure("  4 plan_pass, no shared table", _secs(result["unshared_seconds"]),
               "each pass syncs and loads again"),
        _live_plan_row(live, walk_s, at_target),
        _rss_row(FIGURES[8], result, idle, at_target),
    ]


def dry_run_figure(result: dict[str, Any], walk: dict[str, Any]) -> Figure:
    """``vaultmem lifecycle --dry-run``: every pass, seal and the box archival included, as a
    newcomer runs it (no target of its own; the plan target above counts the four passes)."""
    name = "lifecycle --dry-run, every pass"
    if "error" in result:
        return _error_row(name, result, "-")
    s = float(result["seconds"])
    walk_s = float(walk.get("seconds", 0.0))
    planned = ", ".join(f"{k} {v}" for k, v in result["planned"].items())
    return Figure(name, f"{_secs(s)} ({_fmt(result['memories'])} memories{_cpu(result)})",
                  f"stat walk {_secs(walk_s)} ({_ratio(s, walk_s)} of it); planned: {planned}"
                  if walk_s else f"planned: {planned}", "-", None, s)


def _memories(result: dict[str, Any]) -> str:
    """``"100,000 memories, 59,846 plannable"``: all memories, and those the plans loaded."""
    text = f"{_fmt(result['memories'])} memories"
    if "loaded" in result:
        text += f", {_fmt(result['loaded'])} plannable"
    return text


def _live_plan_row(result: dict[str, Any], walk_s: float, at_target: bool) -> Figure:
    """The four plans while ``vaultmem watch`` keeps the index fresh (no walk before them)."""
    target = "≤ 1 s at N=100k"
    if "error" in result:
        return _error_row(FIGURES[6], result, target)
    s = float(result["seconds"])
    planned = ", ".join(f"{k} {v}" for k, v in result["planned"].items())
    return Figure(FIGURES[6], f"{_secs(s)} ({_memories(result)}{_cpu(result)})",
                  f"stat walk {_secs(walk_s)} ({_ratio(s, walk_s)} of it); planned: {planned}",
                  target, _check(s, 1.0, False, at_target), s)


def recall_figures(result: dict[str, Any], read: dict[str, Any], n: int) -> list[Figure]:
    """Spec 11: recall p95 ≤ 20 ms at N = 100,000 (index kept fresh, so no sync per query)."""
    target = "≤ 20 ms at N=100k"
    if "error" in result:
        return [_error_row("recall p95", result, target)]
    per_note = float(read.get("seconds", 0.0)) / max(int(read.get("notes", 1)), 1) * 1000
    baseline = f"raw read of one note {per_note:.3f} ms"
    return [
        Figure("recall p50", f"{result['p50_ms']:.1f} ms (n={result['queries']}, "
               f"{result['with_hits']} with hits)", baseline),
        Figure("recall p95", f"{result['p95_ms']:.1f} ms (max {result['max_ms']:.0f})",
               baseline, target, _check(float(result["p95_ms"]), 20.0, False, n == TARGET_N),
               float(result["p95_ms"])),
    ]


APPLY_MAX_N = 20_000
"""The apply scenario copies the vault and runs a whole lifecycle; only on the smaller vaults."""


APPLY_TARGET = 2_000.0
"""Moves per second a lifecycle run applies, at least (issue 13)."""
IMPORT_TARGET = 3_000.0
"""Memories per second ``import`` writes, at least (issue 31; 2,000 in issue 13)."""
IMPORT_MEMORIES = 5_000
IMPORT_EMBEDDED = 500
"""Memories of the import with embeddings (each is embedded: about 70 a second on CPU)."""


def apply_figures(result: dict[str, Any]) -> list[Figure]:
    """The apply rate of a journaled lifecycle run, beside a raw rename of as many notes and
    the file system's rate of file creation as the run starts (see
    :func:`benchmarks.scenarios.apply`)."""
    target = f"≥ {APPLY_TARGET:,.0f} moves/s"
    if "error" in result:
        return [_error_row("lifecycle apply", result, target)]
    applied = ", ".join(f"{k} {v}" for k, v in result["applied"].items())
    rate = float(result["moves_per_second"])
    rates = sorted(result["moves"] / s for s in result.get("all_seconds", ()) if s)
    spread = (f"median of {len(rates)} runs, {rates[0]:,.0f}–{rates[-1]:,.0f}; "
              if len(rates) > 1 else "")
    rows = [Figure(
        "lifecycle apply (journaled)",
        f"{rate:,.0f} moves/s ({spread}{result['moves']:,} in {_secs(result['seconds'])}"
        f"{_cpu(result)}; applied: {applied})",
        f"raw rename {result['renames_per_second']:,.0f} files/s "
        f"({_ratio(float(result['renames_per_second']), rate)} faster); "
        f"creating an empty file {_creation_probes(result)} just before",
        target, _check(rate, APPLY_TARGET, True, True), rate,
    )]
    if "undo_seconds" in result:
        undo, apply = float(result["undo_seconds"]), float(result["seconds"])
        rows.append(Figure(
            "lifecycle undo (journaled)",
            f"{_secs(undo)} to put back {int(result['undone']):,} files "
            f"({int(result['undone']) / undo if undo else 0.0:,.0f} files/s)",
            f"the apply it reverts: {_secs(apply)}",
            "no longer than the apply", _check(undo, apply, False, True), undo,
        ))
    if "reindex_seconds" in result:
        paths, total = int(result["reindexed_paths"]), int(result["indexed_notes"])
        rows.append(Figure(
            "  of which re-indexing",
            f"{_secs(result['reindex_seconds'])} spent on or waiting for {paths:,} paths "
            "the run wrote",
            f"{total:,} notes in the index", "only the notes the run wrote",
            paths <= 2 * int(result["moves"]),
        ))
    return rows


def _creation_probes(result: dict[str, Any]) -> str:
    """The file-creation probe of the apply run shown, or, for several runs, each run's rate
    with its probe, in the order they ran (a slow run on a file system slow to create files
    then shows as such)."""
    runs = [r for r in result.get("in_order", ()) if "creates_per_second" in r and r["seconds"]]
    if len(runs) < 2:
        return f"{result.get('creates_per_second', 0):,.0f}/s{_settled(result)}"
    each = ", ".join(
        f"{result['moves'] / r['seconds']:,.0f} moves/s after {r['creates_per_second']:,.0f}/s"
        f"{_settled(r)}"
        for r in runs
    )
    return f"{result.get('creates_per_second', 0):,.0f}/s (runs in order: {each})"


def _settled(result: dict[str, Any]) -> str:
    """``; waited … s for file creation (… files/s at first)`` when the run was preceded by a
    wait for a file system slow to create files (:mod:`benchmarks.creation_rate`), else ``""``."""
    waited = float(result.get("settle_waited_seconds", 0.0))
    if not waited:
        return ""
    return (f"; waited {waited:.0f} s for file creation "
            f"({float(result['settle_first_rate']):,.0f} files/s at first)")


def import_figures(
    result: dict[str, Any], embedded: dict[str, Any] | None = None
) -> list[Figure]:
    """``import`` into a new vault as a default install runs it (keywords only), beside writing
    as many files with and without fsync; then, with ``embedded``, the same import with the
    ``embeddings`` extra (each memory embedded, in batches), beside the keyword-only rate."""
    target = f"≥ {IMPORT_TARGET:,.0f} memories/s"
    if "error" in result:
        return [_error_row("import", result, target)]
    rate = float(result["per_second"])
    rows = [Figure(
        "import (new vault, keywords only)",
        f"{rate:,.0f} memories/s ({result['imported']:,} in {_secs(result['seconds'])}"
        f"{_cpu(result)})",
        f"write+fsync each {result['fsync_writes_per_second']:,.0f} files/s, "
        f"write only {result['plain_writes_per_second']:,.0f} files/s{_settled(result)}",
        target, _check(rate, IMPORT_TARGET, True, True), rate,
    )]
    if embedded is None:
        return rows
    name = "import, embeddings extra installed"
    if "error" in embedded:
        return [*rows, _error_row(name, embedded, "-")]
    if not embedded.get("provider"):
        return [*rows, Figure(name, "no embedding provider installed: not measured")]
    embed_rate = float(embedded["per_second"])
    rows.append(Figure(
        f"{name} ({embedded['provider']})",
        f"{embed_rate:,.0f} memories/s ({embedded['imported']:,} embedded in batches, in "
        f"{_secs(embedded['seconds'])}{_cpu(embedded)})",
        f"keywords only {rate:,.0f} memories/s ({_ratio(rate, embed_rate)} as fast)",
        "-", None, embed_rate,
    ))
    return rows


# --------------------------------------------------------------------------------- runs
Log = Callable[[str], None]
Settle = Callable[[], dict[str, float]]


def settler(folder: Path, limit_seconds: float, log: Log) -> Settle:
    """What runs before each scenario that creates a file per note (apply, import): a wait, of
    at most ``limit_seconds``, for ``folder``'s file system to create files at a normal rate,
    returning what it waited and saw (:func:`benchmarks.creation_rate.wait_for_creation`)."""
    return lambda: wait_for_creation(folder, limit_seconds, log).as_result()


def bench_synthetic(out: Path, n: int, effort: Effort, log: Log) -> Corpus:
    root, generated = cached_vault(out, n)
    notes, size_mb = vault_size(root)
    corpus = Corpus(f"synthetic N={n:,}", str(root), notes, size_mb, generated, [_load()])
    log(f"[{corpus.label}] baselines")
    walk = _median_of("stat_walk", root, effort.baseline)
    read = _median_of("raw_read", root, effort.baseline)
    idle = run_scenario("idle", root)
    log(f"[{corpus.label}] cold index")
    cold = _median_of("cold", root, effort.baseline)
    log(f"[{corpus.label}] no-change sync")
    nochange = run_scenario("nochange", root, repeat=effort.nochange)
    (root / DIRTY_MARK).write_text("a benchmark is editing this vault\n")
    log(f"[{corpus.label}] one changed note")
    one = run_scenario("one_note", root, repeat=effort.one_note)
    log(f"[{corpus.label}] watcher")
    watch = run_scenario("watcher", root, saves=effort.saves)
    if "error" not in one and "error" not in watch:
        (root / DIRTY_MARK).unlink()
    log(f"[{corpus.label}] lifecycle plan")
    plan = run_scenario("plan", root, repeat=effort.plan)
    log(f"[{corpus.label}] lifecycle plan, live watcher")
    live = run_scenario("plan_live", root, repeat=effort.plan)
    log(f"[{corpus.label}] lifecycle --dry-run")
    dry = run_scenario("dry_run", root, repeat=effort.plan)
    log(f"[{corpus.label}] recall")
    found = run_scenario("recall", root, saves=effort.saves * 2)
    corpus.raw = {"stat_walk": walk, "raw_read": read, "idle": idle, "cold": cold,
                  "nochange": nochange, "one_note": one, "watcher": watch, "plan": plan,
                  "plan_live": live, "dry_run": dry, "recall": found, "apply": {}}
    corpus.figures = synthetic_figures(corpus.raw, n)
    corpus.load_average.append(_load())
    return corpus


def bench_apply(
    corpus: Corpus, n: int, effort: Effort, log: Log, settle: Settle | None = None
) -> None:
    """The apply scenario on ``corpus`` (a synthetic vault of ``n`` memories, only up to
    :data:`APPLY_MAX_N`), the median of ``effort.baseline`` runs, each on a fresh copy; its
    figures join the corpus's table.

    Run after every other scenario: each run creates and frees thousands of files, which on
    ext4 without a journal slows file creation for minutes (see
    :func:`benchmarks.scenarios.apply`), and would tax the scenarios that follow. ``settle``
    runs before each run (:func:`settler`).
    """
    if n > APPLY_MAX_N:
        return
    log(f"[{corpus.label}] lifecycle apply")
    corpus.raw["apply"] = _median_of("apply", Path(corpus.path), effort.baseline, settle)
    corpus.figures = synthetic_figures(corpus.raw, n)


def synthetic_figures(raw: dict[str, Any], n: int) -> list[Figure]:
    """A synthetic corpus's rows, from its scenarios' results (apply's once it has run)."""
    rows = index_figures(raw["stat_walk"], raw["raw_read"], raw["idle"], raw["cold"],
                         raw["nochange"], raw["one_note"], n=n)
    plan_rows = plan_figures(raw["plan"], raw["plan_live"], raw["stat_walk"], raw["idle"], n)
    applied = raw.get("apply") or None
    dry = [dry_run_figure(raw["dry_run"], raw["stat_walk"])] if "dry_run" in raw else []
    return [*rows[:3], *watcher_figures(raw["watcher"], raw["raw_read"]), *plan_rows[:-1], *dry,
            *(apply_figures(applied) if applied is not None else []),
            *recall_figures(raw["recall"], raw["raw_read"], n), rows[3], plan_rows[-1]]


def bench_real(
    source: Path, effort: Effort, log: Log, *, label: str = "real vault", profile: bool = False,
    generated: float | None = None,
) -> Corpus:
    root = _writable_copy(source)
    notes, size_mb = vault_size(root)
    corpus = Corpus(f"{label} {source.name}", str(source), notes, size_mb, generated,
                    load_average=[_load()])
    log(f"[{corpus.label}] copied to {root}")
    walk = _median_of("stat_walk", root, effort.baseline)
    read = _median_of("raw_read", root, effort.baseline)
    idle = run_scenario("idle", root)
    cold = _median_of("cold", root, effort.baseline)
    nochange = run_scenario("nochange", root, repeat=effort.nochange)
    one = run_scenario("one_note", root, repeat=effort.one_note)
    corpus.raw = {"stat_walk": walk, "raw_read": read, "idle": idle, "cold": cold,
                  "nochange": nochange, "one_note": one}
    corpus.figures = index_figures(walk, read, idle, cold, nochange, one, n=None)
    if profile:
        log(f"[{corpus.label}] profile of the cold index")
        corpus.raw["cold_profile"] = run_scenario("cold_profile", root)
        corpus.figures.append(profile_figure(corpus.raw["cold_profile"]))
    corpus.load_average.append(_load())
    return corpus


def profile_figure(result: dict[str, Any]) -> Figure:
    """The cold index's three costliest functions (own time, share of the profiled total)."""
    if "error" in result:
        return Figure("cold index profile, top 3", result["error"])
    top = "; ".join(f"{row['function']} {100 * row['share']:.0f} %" for row in result["top"])
    return Figure("cold index profile, top 3", top,
                  f"profiled total {_secs(result['seconds'])} cpu, in one process")


def startup_figures(result: dict[str, Any]) -> list[Figure]:
    """``vaultmem --version`` against ``python -c pass``; ``recall`` against ``--version``."""
    if "error" in result:
        return [_error_row("vaultmem --version", result, "≤ 4x python -c pass")]
    bare, version, recall = (float(result[k]) for k in ("pass_ms", "version_ms", "recall_ms"))
    runs = f"median of {result['runs']}"
    return [
        Figure("python -c pass", f"{bare:.0f} ms ({runs})", "-", "-", None, bare),
        Figure("vaultmem --version", f"{version:.0f} ms ({runs})",
               f"python -c pass {bare:.0f} ms ({_ratio(version, bare)} of it)",
               "≤ 4x python -c pass", _check(version, 4 * bare, False, True), version),
        Figure("vaultmem recall, 1,001 notes", f"{recall:.0f} ms ({runs})",
               f"vaultmem --version {version:.0f} ms ({_ratio(recall, version)} of it)",
               "≤ 2x vaultmem --version", _check(recall, 2 * version, False, True), recall),
        *_with_embeddings(result, recall, runs),
    ]


def _with_embeddings(result: dict[str, Any], recall: float, runs: str) -> list[Figure]:
    """The row of ``recall`` with the embeddings extra's ``auto`` provider, when measured."""
    if "recall_embeddings_ms" not in result:
        return []
    value = float(result["recall_embeddings_ms"])
    return [Figure("  recall with the embeddings extra", f"{value:.0f} ms ({runs})",
                   f"keywords only {recall:.0f} ms (loads the model, embeds the query)", "-",
                   None, value)]


def bench_import(
    out: Path, log: Log, n: int = IMPORT_MEMORIES, settle: Settle | None = None,
    embedded: int = IMPORT_EMBEDDED,
) -> Corpus:
    """``import`` of ``n`` memories as a default install runs it (keywords only), then of
    ``embedded`` memories with the embedding extra, when a provider is installed."""
    corpus = Corpus("import", f"{n:,} generated JSONL memories into a new vault", n,
                    load_average=[_load()])
    log(f"[import] {n:,} memories, keywords only")
    waited = settle() if settle is not None else {}
    result = {**run_scenario("import", out, repeat=n), **waited}
    log(f"[import] {embedded:,} memories, embeddings extra")
    with_vectors = run_scenario("import_embed", out, repeat=embedded)
    corpus.raw = {"import": result, "import_embed": with_vectors}
    corpus.figures = import_figures(result, with_vectors)
    corpus.load_average.append(_load())
    return corpus


def bench_startup(out: Path, effort: Effort, log: Log) -> Corpus:
    root, generated = cached_vault(out, STARTUP_MEMORIES)
    notes, size_mb = vault_size(root)
    corpus = Corpus("start-up", str(root), notes, size_mb, generated, [_load()])
    log("[start-up] python -c pass, vaultmem --version, vaultmem recall")
    result = run_scenario("startup", root, repeat=effort.nochange * 2)
    corpus.raw = {"startup": result}
    corpus.figures = startup_figures(result)
    corpus.load_average.append(_load())
    return corpus


def _load() -> float:
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else 0.0


def machine_info() -> dict[str, Any]:
    """Cores, CPU, memory, Python, SQLite and the vaultmem commit the figures belong to."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        mem_kb = next(int(line.split()[1]) for line in meminfo if line.startswith("MemTotal"))
    except (OSError, StopIteration, ValueError):
        mem_kb = 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    git = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %s"],
                         capture_output=True, text=True).stdout.strip()
    dirty: int | None = None
    if git:
        status = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--", "vaultmem"],
            capture_output=True, text=True,
        ).stdout
        dirty = len(status.splitlines())
    else:  # an exported snapshot (no .git) can say what it is
        git = os.environ.get("VAULTMEM_BENCH_SOURCE", "")
    idle = run_scenario("idle", REPO)
    return {
        "cores": os.cpu_count(), "usable_cores": usable, "cpu": cpu,
        "memory_gb": round(mem_kb / 1024 / 1024, 1), "platform": platform.platform(),
        "python": platform.python_version(), "sqlite": sqlite3.sqlite_version,
        "vaultmem_commit": git or "unknown",
        "vaultmem_uncommitted_files": dirty,
        "vaultmem_imported_from": idle.get("vaultmem", idle.get("error", "?")),
        "load_average": [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else [],
    }


def render(machine: dict[str, Any], corpora: Sequence[Corpus]) -> str:
    """The plain aligned tables."""
    lines = [
        f"machine: {machine['cores']} cores ({machine['usable_cores']} usable), {machine['cpu']}, "
        f"{machine['memory_gb']} GB; {machine['platform']}",
        f"python {machine['python']}, sqlite {machine['sqlite']}; vaultmem "
        f"{machine['vaultmem_commit']}"
        + ("" if machine["vaultmem_uncommitted_files"] is None
           else f" ({machine['vaultmem_uncommitted_files']} files of vaultmem/ uncommitted)")
        + f", imported from {machine['vaultmem_imported_from']}",
        "load average at start (1, 5, 15 min): "
        + ", ".join(str(x) for x in machine["load_average"]),
    ]
    header = ("figure", "value", "baseline", "target", "ok?")
    for corpus in corpora:
        made = ("" if corpus.generated_seconds is None
                else f", generated in {corpus.generated_seconds:.1f} s")
        load = " → ".join(str(x) for x in corpus.load_average)
        size = f"{corpus.size_mb:.1f}" if corpus.size_mb >= 1 else f"{corpus.size_mb:.2f}"
        lines += ["", f"== {corpus.label}: {corpus.notes:,} notes, {size} MB "
                      f"({corpus.path}{made}); load average {load}"]
        rows = [header] + [
            (f.name, f.value, f.baseline or "-", f.target or "-",
             "-" if f.ok is None else ("yes" if f.ok else "NO"))
            for f in corpus.figures
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        for k, row in enumerate(rows):
            lines.append(" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
                         .rstrip())
            if k == 0:
                lines.append("-+-".join("-" * w for w in widths))
        watcher = corpus.raw.get("watcher")
        if watcher is not None and "error" not in watcher and not watcher.get("available"):
            lines.append("watcher: not available")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000",
                        help="comma-separated numbers of memory notes (default 10000,100000)")
    parser.add_argument("--real-vaults", action="store_true",
                        help="also benchmark copies of tests/vaults/*")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="cache of generated vaults and last-run.json (default benchmarks/out)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke test)")
    parser.add_argument("--profile", action="store_true",
                        help="with --real-vaults: also profile each vault's cold index (in one "
                             "process) and print its three costliest functions")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--settle-seconds", type=float, default=0.0, metavar="S",
        help="before each apply and import run, wait up to S seconds while the file system "
             "creates files slowly (after mass deletions nearby; the wait is printed beside the "
             "figure; the kernel's window is over after "
             f"{DEFAULT_LIMIT_SECONDS:.0f}); default 0: never wait, measure as a newcomer "
             "would, the probe's rate printed beside the figure")
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    effort = QUICK if args.quick else FULL
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    compile_bytecode()
    machine = machine_info()
    scratch = tempfile.mkdtemp(prefix="vaultmem-bench-scratch-")
    os.environ[SCRATCH_ENV] = scratch  # the scenarios' subprocesses inherit it
    try:
        corpora = [bench_synthetic(out, n, effort, log) for n in sizes]
        if args.real_vaults:
            for name in REAL_VAULTS:
                source = REAL_VAULTS_DIR / name
                if source.is_dir():
                    corpora.append(bench_real(source, effort, log, profile=args.profile))
                else:
                    log(f"real vault {source} is missing; skipped")
            hub, generated = cached_hub_vault(out, 500 if args.quick else HUB_NOTES)
            corpora.append(bench_real(hub, effort, log, label="generated hub-shaped vault",
                                      profile=args.profile, generated=generated))
        settle = settler(Path(scratch), args.settle_seconds, log)
        imports = bench_import(out, log, 1_000 if args.quick else IMPORT_MEMORIES, settle,
                               embedded=50 if args.quick else IMPORT_EMBEDDED)
        startup = bench_startup(out, effort, log)
        for n, corpus in zip(sizes, corpora, strict=False):  # last: see bench_apply
            bench_apply(corpus, n, effort, log, settle)
    finally:
        del os.environ[SCRATCH_ENV]
        shutil.rmtree(scratch, ignore_errors=True)  # only now: see scratch_folder
    document = {"machine": machine, "quick": args.quick,
                "corpora": [asdict(corpus) for corpus in corpora], "startup": asdict(startup),
                "import": asdict(imports)}
    (out / "last-run.json").write_text(json.dumps(document, indent=2, ensure_ascii=False))
    print(json.dumps(document, indent=2, ensure_ascii=False) if args.json
          else render(machine, [*corpora, imports, startup]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
