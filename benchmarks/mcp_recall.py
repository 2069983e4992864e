"""Recall through the MCP server, and CLI recall with and without a live watcher.

    python -m benchmarks.mcp_recall [--sizes 10000,100000] [--out DIR] [--queries 200]
                                    [--cli-size 100000] [--cli-calls 20] [--json]

For each size N it generates (or reuses, from ``--out``, default ``benchmarks/out/``) the
synthetic vault of :mod:`benchmarks.generate_vault`, indexes it once, starts ``vaultmem mcp`` as
a subprocess and talks to it through the SDK's stdio client (``ClientSession``), as an assistant
would. Measured round trips (milliseconds, p50/p95):

- ``list_tools``: the protocol alone (baseline);
- ``show`` of one memory by id: a trivial tool (one index lookup, one small file read);
- ``recall`` (k=10) over ``--queries`` seeded queries of 1–3 words from notes' titles and
  bodies — the same kind as ``benchmarks.scenarios recall``.

Target: recall p95 at most 20 ms above the trivial tool's p95 at 100,000 notes.

At ``--cli-size`` it then times whole ``vaultmem recall WORDS`` processes: with no watcher (each
call walks the vault first) and with ``vaultmem watch`` running (its heartbeat tells the CLI the
index is live; no walk), beside the same-run baseline of ``python -c "import vaultmem.cli"``
(interpreter start and imports). The vault's files are never changed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.generate_vault import generate_vault
from benchmarks.scenarios import percentile

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "benchmarks" / "out"
TARGET_N = 100_000
TARGET_ABOVE_TRIVIAL_MS = 20.0


def _vaultmem() -> list[str]:
    script = Path(sys.executable).with_name("vaultmem")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from vaultmem.cli import main; main()"]


def _vault(out: Path, n: int) -> Path:
    """The generated vault of ``n`` memories under ``out`` (made once; the index synced)."""
    from vaultmem.services.vault import Vault

    root = out / f"mcp-vault-{n}"
    done = root / ".bench-mcp-complete"
    if not done.exists():
        if root.exists():
            shutil.rmtree(root)
        generate_vault(root, n)
        done.write_text("complete\n")
    with Vault.open(root) as vault:
        vault.sync()
    return root


def _queries(root: Path, count: int) -> tuple[list[str], str]:
    """``count`` seeded 1–3-word queries from notes' titles and bodies, and one memory id."""
    from vaultmem.services.vault import Vault

    rng = random.Random(11)
    with Vault.open(root) as vault:
        rows = vault.index.conn.execute(
            "SELECT title, substr(body, 1, 400) FROM notes_fts WHERE rowid IN "
            "(SELECT nid FROM notes ORDER BY nid LIMIT 2000)"
        ).fetchall()
        some_id = vault.index.conn.execute(
            "SELECT id FROM notes WHERE type = 'memory' AND id IS NOT NULL LIMIT 1"
        ).fetchone()[0]
    words = [w for title, body in rows for w in f"{title} {body}".split() if w.isalpha()]
    return [" ".join(rng.sample(words, rng.choice((1, 2, 3)))) for _ in range(count)], some_id


def _summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50_ms": statistics.median(values),
        "p95_ms": percentile(values, 95),
        "max_ms": max(values),
    }


def _wait_live(root: Path, timeout: float) -> float:
    from vaultmem.services.index.live_index import index_is_live

    started = time.perf_counter()
    while not index_is_live(root / ".vaultmem"):
        if time.perf_counter() - started > timeout:
            raise RuntimeError(f"no live watcher on {root} after {timeout} s")
        time.sleep(0.05)
    return time.perf_counter() - started


def mcp_round_trips(root: Path, queries: Sequence[str], some_id: str) -> dict[str, Any]:
    """Round trips through a real ``vaultmem mcp`` subprocess and the SDK's stdio client."""
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = _vaultmem()
    params = StdioServerParameters(
        command=command[0], args=[*command[1:], "mcp", "--vault", str(root)], env=dict(os.environ)
    )
    result: dict[str, Any] = {}

    async def timed(call: Any, *args: Any) -> float:
        started = time.perf_counter()
        reply = await call(*args)
        elapsed = (time.perf_counter() - started) * 1000
        if getattr(reply, "is_error", False):
            raise RuntimeError(f"tool error: {reply.content}")
        return elapsed

    async def run() -> None:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):  # noqa: SIM117
                async with ClientSession(read, write) as session:
                    started = time.perf_counter()
                    await session.initialize()
                    result["initialize_ms"] = (time.perf_counter() - started) * 1000
                    result["live_after_s"] = await anyio.to_thread.run_sync(_wait_live, root, 600.0)
                    for text in queries[:10]:  # warm caches, as a long-running server has them
                        await session.call_tool("recall", {"query": text, "k": 10})
                    protocol, trivial, recalls = [], [], []
                    hits = 0
                    for text in queries:
                        protocol.append(await timed(session.list_tools))
                        trivial.append(
                            await timed(session.call_tool, "show", {"id_or_title": some_id})
                        )
                        started = time.perf_counter()
                        reply = await session.call_tool("recall", {"query": text, "k": 10})
                        recalls.append((time.perf_counter() - started) * 1000)
                        hits += bool((reply.structured_content or {}).get("hits"))
                    result["list_tools"] = _summary(protocol)
                    result["show"] = _summary(trivial)
                    result["recall"] = _summary(recalls)
                    result["queries"] = len(queries)
                    result["with_hits"] = hits

    anyio.run(run)
    return result


def cli_recalls(root: Path, queries: Sequence[str], calls: int) -> dict[str, Any]:
    """Wall time of whole ``vaultmem recall`` processes, without and with a live watcher."""
    from vaultmem.services.index.live_index import index_is_live

    if index_is_live(root / ".vaultmem"):
        raise RuntimeError(f"a watcher already runs on {root}; stop it first")
    command = _vaultmem()

    def timed(argv: list[str]) -> float:
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        return (time.perf_counter() - started) * 1000

    chosen = list(queries[:calls])
    startup = [timed([sys.executable, "-c", "import vaultmem.cli"]) for _ in chosen]
    walking = [timed([*command, "recall", *q.split(), "--vault", str(root)]) for q in chosen]
    watcher = subprocess.Popen(
        [*command, "watch", "--vault", str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        live_after = _wait_live(root, 600.0)
        live = [timed([*command, "recall", *q.split(), "--vault", str(root)]) for q in chosen]
    finally:
        watcher.terminate()
        watcher.wait(30)
    return {
        "calls": len(chosen),
        "python_startup": _summary(startup),
        "no_watcher": _summary(walking),
        "watcher_running": _summary(live),
        "watcher_live_after_s": live_after,
    }


def _table(n: int, data: dict[str, Any]) -> str:
    rows = [
        f"## MCP round trips, {n:,} memories (+{n // 10:,} notes), {data['queries']} queries",
        "figure | p50 ms | p95 ms | max ms",
        "--- | --- | --- | ---",
    ]
    for name, label in (
        ("list_tools", "list_tools (protocol only, baseline)"),
        ("show", "show one memory (trivial tool)"),
        ("recall", "recall k=10"),
    ):
        s = data[name]
        rows.append(f"{label} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} | {s['max_ms']:.1f}")
    above = data["recall"]["p95_ms"] - data["show"]["p95_ms"]
    verdict = "ok" if above <= TARGET_ABOVE_TRIVIAL_MS else "MISSED"
    rows.append(
        f"recall p95 − show p95 | {above:.1f} ms | target ≤ {TARGET_ABOVE_TRIVIAL_MS:g} ms"
        f"{' at 100k' if n != TARGET_N else ''} | {verdict if n == TARGET_N else '-'}"
    )
    rows.append(
        f"(queries with hits: {data['with_hits']}; initialize {data['initialize_ms']:.0f}"
        f" ms; watcher live {data['live_after_s']:.1f} s after start)"
    )
    return "\n".join(rows)


def _cli_table(n: int, data: dict[str, Any]) -> str:
    rows = [
        f"## CLI `vaultmem recall`, {n:,} memories (+{n // 10:,} notes), {data['calls']} calls",
        "figure | p50 ms | p95 ms | max ms",
        "--- | --- | --- | ---",
    ]
    for name, label in (
        ("python_startup", "python -c 'import vaultmem.cli' (baseline)"),
        ("no_watcher", "recall, no watcher (walks the vault)"),
        ("watcher_running", "recall, `vaultmem watch` running (no walk)"),
    ):
        s = data[name]
        rows.append(f"{label} | {s['p50_ms']:.0f} | {s['p95_ms']:.0f} | {s['max_ms']:.0f}")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mcp_recall")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--cli-size", type=int, default=TARGET_N, help="0 = skip the CLI part")
    parser.add_argument("--cli-calls", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"mcp": {}, "cli": {}}
    for n in [int(s) for s in args.sizes.split(",") if s.strip()]:
        root = _vault(args.out, n)
        queries, some_id = _queries(root, args.queries)
        report["mcp"][n] = mcp_round_trips(root, queries, some_id)
        if not args.json:
            print(_table(n, report["mcp"][n]) + "\n", flush=True)
    if args.cli_size:
        root = _vault(args.out, args.cli_size)
        queries, _ = _queries(root, args.cli_calls)
        report["cli"][args.cli_size] = cli_recalls(root, queries, args.cli_calls)
        if not args.json:
            print(_cli_table(args.cli_size, report["cli"][args.cli_size]), flush=True)
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
