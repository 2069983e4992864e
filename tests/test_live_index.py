"""The watcher heartbeat: reads skip the vault walk only while a live watcher keeps the index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.services.index.live_index import (
    STALE_AFTER_SECONDS,
    Heartbeat,
    index_is_live,
    live_watchers,
)
from vaultmem.services.index.watcher import VaultWatcher

NOTE = "---\nid: {id}\ntype: memory\nstatus: active\ncreated: 2026-11-20T09:00:00\n---\n{text}\n"


def _vault(tmp_path: Path) -> Vault:
    vault, _ = Vault.init(tmp_path / "v")
    vault.remember("A memory about the allotment shed", link=False)
    return vault


def test_a_running_watcher_keeps_a_heartbeat_and_removes_it(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    assert not index_is_live(vault.sidecar)
    with VaultWatcher(Vault.open(vault.root)):
        beats = live_watchers(vault.sidecar)
        assert [b["pid"] for b in beats] == [os.getpid()]
        assert index_is_live(vault.sidecar)
    assert not index_is_live(vault.sidecar)
    assert not list(vault.sidecar.glob("watcher-*"))


def test_stale_dead_foreign_and_damaged_heartbeats_do_not_count(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    beat = Heartbeat(vault.sidecar)
    beat.beat()
    assert index_is_live(vault.sidecar)
    assert not live_watchers(vault.sidecar, now=time.time() + STALE_AFTER_SECONDS + 1)
    data = json.loads(beat.path.read_text())
    beat.stop()
    # a process that has exited
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_file = vault.sidecar / f"watcher-{data['host']}-{dead.stdout.strip()}.json"
    dead_file.write_text(json.dumps({**data, "pid": int(dead.stdout), "at": time.time()}))
    assert not index_is_live(vault.sidecar)
    assert not dead_file.exists()  # cleaned up
    foreign = vault.sidecar / "watcher-elsewhere-1.json"
    foreign.write_text(json.dumps({**data, "host": "elsewhere", "at": time.time()}))
    damaged = vault.sidecar / "watcher-x-2.json"
    damaged.write_text('{"pid": "not a number"')
    odd = vault.sidecar / "watcher-x-3.json"
    odd.write_text(json.dumps({**data, "pid": True, "at": time.time()}))
    assert not index_is_live(vault.sidecar)
    assert foreign.exists()  # another machine's file is not ours to remove


def test_reads_use_the_index_as_it_is_while_a_watcher_is_live(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    rel = "STM/Written behind our back.md"
    beat = Heartbeat(vault.sidecar)
    beat.beat()  # claims a watcher; none runs, so nothing indexes the new file
    (vault.root / rel).write_text(NOTE.format(id="behind1", text="quokka sightings log"))
    with Vault.open(vault.root) as fresh:
        assert fresh.recall("quokka") == []  # no walk: the index was trusted
    result = CliRunner().invoke(main, ["recall", "quokka", "--vault", str(vault.root)])
    assert result.exit_code == 0 and "no notes match" in result.stdout
    beat.stop()
    with Vault.open(vault.root) as fresh:
        assert [h.path for h in fresh.recall("quokka")] == [rel]  # walked again


def test_with_a_watcher_a_saved_note_is_recalled_without_a_walk(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with VaultWatcher(Vault.open(vault.root)), Vault.open(vault.root) as reader:
        rel = "STM/Saved in Obsidian.md"
        (vault.root / rel).write_text(NOTE.format(id="obs1", text="wombat burrow map"))
        deadline = time.monotonic() + 5
        hits = reader.recall("wombat")
        while not hits and time.monotonic() < deadline:
            time.sleep(0.02)
            hits = reader.recall("wombat")
        assert [h.path for h in hits] == [rel]
        assert hits[0].text == "wombat burrow map"


def test_vaultmem_watch_process_writes_the_heartbeat_and_removes_it(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    script = Path(sys.executable).with_name("vaultmem")
    command = (
        [str(script)]
        if script.is_file()
        else [sys.executable, "-c", "from vaultmem.cli import main; main()"]
    )
    watch = subprocess.Popen(
        [*command, "watch", "--vault", str(vault.root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while not index_is_live(vault.sidecar):
            assert watch.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        assert [b["pid"] for b in live_watchers(vault.sidecar)] == [watch.pid]
    finally:
        watch.terminate()  # SIGTERM stops `vaultmem watch` as cleanly as Ctrl-C
        watch.wait(30)
    assert not index_is_live(vault.sidecar)
    assert not list(vault.sidecar.glob("watcher-*"))
