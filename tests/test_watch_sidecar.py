"""A running watcher whose ``.vaultmem/`` is deleted rebuilds it instead of writing into the
deleted database; the ``watch`` command says so on stderr."""

from __future__ import annotations

import selectors
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from vaultmem import Vault
from vaultmem.services.index.watcher import VaultWatcher


def _indexed_paths(db: Path) -> set[str]:
    """Paths in the index file, read without vaultmem (which would create the file)."""
    if not db.is_file():
        return set()
    try:
        conn = sqlite3.connect(f"{db.as_uri()}?mode=rw", uri=True)
        try:
            return {row[0] for row in conn.execute("SELECT path FROM notes")}
        finally:
            conn.close()
    except sqlite3.Error:  # being made: not there yet
        return set()


def _wait_for(predicate: object, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_a_deleted_sidecar_is_rebuilt_by_the_running_watcher(tmp_path: Path) -> None:
    root = tmp_path / "v"
    Vault.init(root)
    with Vault.open(root) as vault:
        vault.remember("Before the sidecar was deleted", now=None)
        with VaultWatcher(vault, debounce_seconds=0.01):
            shutil.rmtree(root / ".vaultmem")
            (root / "STM" / "After.md").write_text("Written after the sidecar was deleted\n")
            db = root / ".vaultmem" / "index.db"
            assert _wait_for(
                lambda: (
                    {"STM/After.md", "STM/Before the sidecar was deleted.md"} <= _indexed_paths(db)
                )
            ), _indexed_paths(db)
            (root / "STM" / "Later.md").write_text("Written once the index was rebuilt\n")
            assert _wait_for(lambda: "STM/Later.md" in _indexed_paths(db))


def test_the_watch_command_reports_the_rebuild(tmp_path: Path) -> None:
    root = tmp_path / "v"
    Vault.init(root)
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from vaultmem.cli import main; main()",
            "watch",
            "--vault",
            str(root),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready = selectors.DefaultSelector()
        ready.register(process.stdout, selectors.EVENT_READ)
        assert ready.select(timeout=30) and process.stdout.readline().startswith("watching")
        shutil.rmtree(root / ".vaultmem")
        (root / "STM" / "After.md").write_text("Written after the sidecar was deleted\n")
        assert _wait_for(lambda: "STM/After.md" in _indexed_paths(root / ".vaultmem" / "index.db"))
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "was deleted or replaced; rebuilding the index" in err
    assert "Traceback" not in err
