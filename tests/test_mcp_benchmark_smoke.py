"""The MCP recall benchmark runs end to end on a small generated vault (numbers not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_mcp_recall_benchmark_reports_round_trips(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.mcp_recall",
            "--sizes",
            "300",
            "--queries",
            "5",
            "--cli-size",
            "300",
            "--cli-calls",
            "1",
            "--out",
            str(tmp_path),
            "--json",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    mcp = report["mcp"]["300"]
    for figure in ("list_tools", "show", "recall"):
        assert 0 < mcp[figure]["p50_ms"] <= mcp[figure]["p95_ms"] <= mcp[figure]["max_ms"]
    assert mcp["queries"] == 5 and mcp["with_hits"] >= 1
    cli = report["cli"]["300"]
    assert cli["calls"] == 1 and cli["watcher_running"]["p50_ms"] > 0
    assert not list((tmp_path / "mcp-vault-300" / ".vaultmem").glob("watcher-*"))
