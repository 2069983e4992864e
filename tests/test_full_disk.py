"""A full disk never wedges the vault: a journal torn by ENOSPC is finished or undone exactly,
and read-only commands answer while the disk is full."""

from __future__ import annotations

import errno
import io
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import snapshot_files

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes.timestamps import parse_datetime
from vaultmem.store import journal

CREATED = "2026-01-01T00:00:00"
LATER = "2026-09-01T00:00:00"  # every memory has faded: the pass archives them all


def run(*args: str, vault: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(vault)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


class _FullDisk(io.RawIOBase):
    """A journal file on a disk with ``room[0]`` bytes left: a write past it is cut short,
    then ENOSPC (what ``write(2)`` does on a full disk)."""

    def __init__(self, fd: int, room: list[int], name: str) -> None:
        self.fd = fd
        self.room = room
        self.name = name

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def write(self, data: Any) -> int:
        data = bytes(data)
        if self.room[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = os.write(self.fd, data[: self.room[0]])
        self.room[0] -= written
        return written

    def close(self) -> None:
        if not self.closed:
            os.close(self.fd)
        super().close()


@contextmanager
def journal_room(monkeypatch: pytest.MonkeyPatch, room: int) -> Iterator[None]:
    """Journal writes find ``room`` bytes free in all (every other file is written as usual)."""
    left = [room]
    real_open = open

    def fake_open(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode in ("x", "a"):
            flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if mode == "x" else os.O_APPEND)
            raw = _FullDisk(os.open(path, flags, 0o644), left, str(path))
            return io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8")
        return real_open(path, mode, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(journal, "open", fake_open, raising=False)
        yield


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    v, _ = Vault.init(tmp_path_factory.mktemp("base") / "vault")
    with v:
        for word in ("ramen", "lyon", "tea"):
            v.remember(f"The user mentioned {word}", title=word.title(),
                       now=parse_datetime(CREATED))
    return v.root


def _notes(root: Path) -> dict[str, bytes]:
    return {p: b for p, b in snapshot_files(root).items() if not p.startswith(".vaultmem")}


def _journal_size(base: Path, tmp_path: Path) -> int:
    vault = tmp_path / "whole"
    shutil.copytree(base, vault)
    code, _out, err = run("lifecycle", "--now", LATER, vault=vault)
    assert code == 0, err
    (path,) = (vault / ".vaultmem" / "journal").glob("*.jsonl")
    return path.stat().st_size


def test_enospc_at_every_journal_write_of_a_pass_is_undone_byte_for_byte(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    size = _journal_size(base, tmp_path)
    before = _notes(base)
    outcomes: set[str] = set()
    for room in range(0, size, max(1, size // 16)):  # torn in every line of the journal
        vault = tmp_path / f"v{room}"
        shutil.copytree(base, vault)
        with journal_room(monkeypatch, room):
            code, _out, err = run("lifecycle", "--now", LATER, vault=vault)
        assert code == 1, (room, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, (room, err)
        assert "cannot write the journal: No space left on device" in err, (room, err)
        # space is back: undo restores the vault exactly
        code, _out, err = run("undo", vault=vault)
        outcomes.add("undone" if code == 0 else err.strip())
        assert code == 0 or "nothing to undo" in err, (room, err)
        assert _notes(vault) == before, room
        code, _out, err = run("lifecycle", "--now", LATER, vault=vault)  # and passes run again
        assert code == 0, (room, err)
    assert "undone" in outcomes


def test_a_pass_torn_by_enospc_is_finished_by_the_next_pass_and_all_undone(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next pass carries the torn one forward (its journaled steps, as after a kill) and
    runs; each journal then ends whole, and undoing both gives back the vault byte for byte."""
    size = _journal_size(base, tmp_path)
    before = _notes(base)
    for room in (size // 3, size // 2, (2 * size) // 3):
        vault = tmp_path / f"v{room}"
        shutil.copytree(base, vault)
        with journal_room(monkeypatch, room):
            code, _out, err = run("lifecycle", "--now", LATER, vault=vault)
        assert code == 1, err
        code, _out, err = run("lifecycle", "--now", LATER, vault=vault)
        assert code == 0, (room, err)
        journals = sorted((vault / ".vaultmem" / "journal").glob("*.jsonl"))
        assert len(journals) == 2 and all(p.read_bytes().endswith(b"}\n") for p in journals)
        for _ in journals:
            code, _out, err = run("undo", vault=vault)
            assert code == 0, (room, err)
        assert _notes(vault) == before, room


def test_an_undo_torn_by_enospc_is_finished_by_the_next_undo(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _notes(base)
    whole = tmp_path / "whole"
    _journal_size(base, tmp_path)
    (journal_file,) = (whole / ".vaultmem" / "journal").glob("*.jsonl")
    lines = journal_file.read_bytes()
    code, _out, err = run("undo", vault=whole)
    assert code == 0, err
    (undone,) = (whole / ".vaultmem" / "journal").glob("*.undone.jsonl")
    appended = len(undone.read_bytes()) - len(lines)  # what an undo writes to the journal
    for room in range(0, appended, max(1, appended // 8)):
        vault = tmp_path / f"u{room}"
        shutil.copytree(base, vault)
        code, _out, err = run("lifecycle", "--now", LATER, vault=vault)
        assert code == 0, err
        with journal_room(monkeypatch, room):
            code, _out, err = run("undo", vault=vault)
        assert code == 1 and "cannot write the journal: No space left" in err, (room, err)
        code, _out, err = run("undo", vault=vault)
        assert code == 0, (room, err)
        assert _notes(vault) == before, room


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs (mounted here when allowed; skipped otherwise) holding a vault, then filled."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"no tmpfs can be mounted here: {done.stderr!r}")
    try:
        v, _ = Vault.init(mount / "vault")
        with v:
            v.remember("The user likes ramen", title="Ramen", now=parse_datetime(CREATED))
        with open(mount / "filler", "wb") as filler:
            try:
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
            except OSError:
                pass
        yield v.root
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def test_read_only_commands_answer_on_a_full_disk_and_writes_change_nothing(
    full_disk: Path,
) -> None:
    before = _notes(full_disk)
    for command, shown in ((["list"], "STM/Ramen.md"), (["recall", "ramen"], "STM/Ramen.md"),
                           (["show", "Ramen"], "STM/Ramen.md"), (["status"], "1 memory ")):
        code, out, err = run(*command, vault=full_disk)
        assert code == 0, (command, err)
        assert shown in out and "is on a full disk: the index is used as it is" in err
    for command in (["remember", "Not saved"], ["touch", "Ramen"], ["lifecycle", "--now", LATER]):
        code, _out, err = run(*command, vault=full_disk)
        assert code == 1, (command, err)
        assert err.strip().endswith("free some space") or "No space left" in err, err
    assert _notes(full_disk) == before
    (full_disk.parent / "filler").unlink()  # space is back: the index is still there
    code, out, err = run("touch", "Ramen", vault=full_disk)
    assert code == 0, err
    code, out, err = run("doctor", vault=full_disk)
    assert code == 0 and "index-stale" not in out, out
