"""What a kill leaves behind is cleaned up by the next command: temp files removed, a note set
aside mid-write put back (it may be the only copy), worker processes gone with their parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main

MEMORY = "---\nid: K1\ntype: memory\nstatus: active\ntags: [kept]\n---\nThe only copy.\n"


@pytest.mark.parametrize("command", [["lifecycle"], ["undo"], ["remember", "a new memory"]])
def test_the_next_command_restores_notes_set_aside_and_removes_temp_files(
    tmp_path: Path, command: list[str]
) -> None:
    vault, _ = Vault.init(tmp_path / "v")
    stm = vault.root / "STM"
    aside = stm / ".Only copy.md.1a2b3c4d.vaultmem-old"
    aside.write_text(MEMORY, encoding="utf-8")  # killed after the rename aside
    (stm / ".Only copy.md.1a2b3c4d.vaultmem-tmp").write_text("half a new text", encoding="utf-8")
    (stm / ".Other.md.99887766.vaultmem-tmp").write_text("from a killed remember", "utf-8")
    result = CliRunner().invoke(main, [*command, "--vault", str(vault.root)])
    assert "Traceback" not in result.output
    assert (stm / "Only copy.md").read_text(encoding="utf-8") == MEMORY
    assert not [p.name for p in stm.iterdir() if p.name.startswith(".") and "vaultmem" in p.name]


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_index_workers_exit_when_the_indexing_process_is_killed(tmp_path: Path) -> None:
    root = tmp_path / "big"
    (root / "Notes").mkdir(parents=True)
    (root / ".obsidian").mkdir()
    for i in range(6000):
        (root / "Notes" / f"n{i}.md").write_text(f"note {i} [[n{i + 1}]]\n", encoding="utf-8")
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from vaultmem.cli import main; main()",
            "index",
            "--vault",
            str(root),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    deadline = time.monotonic() + 120
    while not workers and process.poll() is None and time.monotonic() < deadline:
        workers = _children(process.pid)
        time.sleep(0.01)
    assert workers, "the index command never started its worker processes"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    deadline = time.monotonic() + 30
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if _alive(w)], "worker processes outlived their parent"
