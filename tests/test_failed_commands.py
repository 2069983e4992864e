"""A command that fails changed nothing: it checks what it needs before it writes a note."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli as run
from conftest import snapshot_files

from vaultmem import Vault
from vaultmem.core.notes.timestamps import parse_datetime
from vaultmem.errors import NoteNotFoundError

NOW = "2026-11-20T09:00:00"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v, _ = Vault.init(tmp_path / "vault")
    with v:
        v.remember("The user likes ramen", title="Ramen", now=parse_datetime(NOW))
        v.remember("The user lives in Lyon", title="Lyon", now=parse_datetime(NOW))
    return v.root


@contextlib.contextmanager
def read_only_file(path: Path) -> Iterator[None]:
    """Make the file ``path`` read-only for this process: its mode, or (as root, where modes do
    not bind) a read-only bind mount of it onto itself."""
    mode = path.stat().st_mode
    os.chmod(path, stat.S_IMODE(mode) & ~0o222)
    mounted = False
    try:
        if os.access(path, os.W_OK):
            for command in (["mount", "--bind", str(path), str(path)],
                            ["mount", "-o", "remount,bind,ro", str(path)]):
                done = subprocess.run(command, capture_output=True)
                if done.returncode != 0:
                    pytest.fail(f"cannot make {path} read-only here: {done.stderr!r}")
                mounted = True
        yield
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(path)], check=True)
        os.chmod(path, stat.S_IMODE(mode))


def test_a_read_only_index_file_stops_writes_before_any_note_is_written(vault: Path) -> None:
    before = snapshot_files(vault)
    with read_only_file(vault / ".vaultmem" / "index.db"):
        for command in (["remember", "Not saved"], ["touch", "Ramen"], ["observe", "Lyon"],
                        ["forget", "Ramen"], ["lifecycle", "--now", NOW], ["pin", "Ramen"]):
            code, _out, err = run(*command, vault=vault)
            assert code == 1, (command, err)
            line = err.strip()
            assert "\n" not in line and line.endswith("make .vaultmem/ writable"), command
            assert "index.db: " in line, command
            assert "Traceback" not in err
        code, out, err = run("list", vault=vault)  # reads still answer, from the index as it is
        assert code == 0 and "STM/Ramen.md" in out
        assert "is read-only: the index is used as it is" in err
    after = snapshot_files(vault)
    assert {p: b for p, b in after.items() if not p.startswith(".vaultmem")} == {
        p: b for p, b in before.items() if not p.startswith(".vaultmem")
    }


def test_observe_finds_every_ref_before_it_reinforces_any(vault: Path) -> None:
    notes = {p: (vault / p).read_bytes() for p in ("STM/Ramen.md", "STM/Lyon.md")}
    code, _out, err = run("observe", "Ramen", "Lyon", "No such memory", vault=vault)
    assert code == 1 and "no memory with id or title 'No such memory'" in err
    with Vault.open(vault) as v, pytest.raises(NoteNotFoundError):  # what MCP observe calls
        v.observe(["Ramen", "Nope"], ["travel"], now=parse_datetime(NOW))
    assert {p: (vault / p).read_bytes() for p in notes} == notes
    code, out, _err = run("observe", "Ramen", "Lyon", vault=vault)
    assert code == 0
    assert "use_count: 2" in (vault / "STM" / "Ramen.md").read_text(encoding="utf-8")


def test_a_memory_whose_name_is_too_long_to_write_is_listed_by_doctor(vault: Path) -> None:
    name = "L" * 233 + ".md"  # 236 bytes: its temp name would pass 255
    note = vault / "STM" / name
    note.write_text("---\nid: LONG1\ntype: memory\nstatus: active\n---\nA long one.\n", "utf-8")
    code, out, _err = run("doctor", vault=vault)
    assert code == 1
    assert f"problem [name-too-long] STM/{name}: its name is over 232 bytes" in out
    code, _out, err = run("touch", "LONG1", vault=vault)
    assert code == 1 and err.strip().endswith("over 232 bytes); rename it shorter")
    short = vault / "STM" / ("L" * 229 + ".md")  # 232 bytes: written as any other
    short.write_text("---\nid: LONG2\ntype: memory\nstatus: active\n---\nShorter.\n", "utf-8")
    code, _out, err = run("touch", "LONG2", vault=vault)
    assert code == 0, err
