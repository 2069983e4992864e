"""Hard links, late saves and kills around an owned write never lose or hide a memory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes.timestamps import parse_datetime
from vaultmem.errors import NoteChangedError
from vaultmem.store import note_files
from vaultmem.store.interrupted_writes import recover_interrupted_writes
from vaultmem.store.note_files import (
    ASIDE_SUFFIX,
    TEMP_SUFFIX,
    read_note,
    write_note,
)

NOW = "2026-11-20T09:00:00"
NOTE = "---\nid: A1\ntype: memory\nstatus: active\n---\nbody\n"
EDITED = NOTE.replace("status: active", "status: archived")


def run(*args: str, vault: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(vault)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def _stray(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith((ASIDE_SUFFIX, TEMP_SUFFIX)))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v, _ = Vault.init(tmp_path / "vault")
    with v:
        v.remember("The user likes ramen", title="Ramen", now=parse_datetime(NOW))
    return v.root


def test_a_killed_edit_of_a_note_with_a_hard_linked_backup_is_put_back(
    vault: Path, tmp_path: Path
) -> None:
    """``cp -al`` backup, then a write killed after the rename aside: the aside has two names,
    but its write never landed (the note's name is not its new file), so it is put back."""
    note = vault / "STM" / "Ramen.md"
    text = note.read_bytes()
    backup = tmp_path / "backup"
    subprocess.run(["cp", "-al", str(vault), str(backup)], check=True)
    aside = note.with_name(f".Ramen.md.0badc0de{ASIDE_SUFFIX}")
    os.rename(note, aside)
    note.with_name(f".Ramen.md.0badc0de{TEMP_SUFFIX}").write_text("new text", encoding="utf-8")
    code, out, err = run("lifecycle", "--now", NOW, vault=vault)
    assert code == 0, err
    assert note.read_bytes() == text
    assert (backup / "STM" / "Ramen.md").read_bytes() == text
    assert _stray(note.parent) == []


def test_a_killed_move_of_a_hard_linked_note_is_put_back_unless_it_landed(
    tmp_path: Path,
) -> None:
    stm, ltm = tmp_path / "STM", tmp_path / "LTM"
    stm.mkdir()
    ltm.mkdir()
    aside = stm / f".Note.md.0badc0de{ASIDE_SUFFIX}"
    aside.write_text(NOTE, encoding="utf-8")
    os.link(aside, tmp_path.parent / f"{tmp_path.name}-backup.md")  # a backup outside
    assert recover_interrupted_writes(stm, search=tmp_path) == [stm / "Note.md"]
    assert (stm / "Note.md").read_text(encoding="utf-8") == NOTE
    os.rename(stm / "Note.md", aside)
    os.link(aside, ltm / "Note.md")  # the move had landed: its file is in LTM
    assert recover_interrupted_writes(stm, search=tmp_path) == []
    assert not (stm / "Note.md").exists() and (ltm / "Note.md").read_text("utf-8") == NOTE
    assert _stray(stm) == []


@pytest.mark.parametrize(
    ("after_read", "write"), [(1, "append"), (1, "same size"), (2, "append")]
)
def test_a_save_landing_after_a_read_of_the_aside_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, after_read: int, write: str
) -> None:
    """A writer holding the note open writes right after one of vaultmem's reads of the aside
    (the 1st: owning it, before the new text is linked; the 2nd: the last, before it is
    dropped): the bytes read next, or the stat taken before the first read, tell, and the
    person's version is put back (a write keeping the size is told by the bytes)."""
    note = tmp_path / "Note.md"
    note.write_text(NOTE, encoding="utf-8")
    snapshot = read_note(note)
    handle = open(note, "r+", encoding="utf-8")  # noqa: SIM115 - held open across the race
    saved = NOTE + "saved late\n" if write == "append" else NOTE.replace("body", "BODY")
    real_read, real_pread = os.read, os.pread
    reads: list[int] = []

    def after(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(ASIDE_SUFFIX):
            reads.append(fd)
            if len(reads) == after_read and not handle.closed:
                handle.seek(0)
                handle.write(saved)
                handle.close()

    def read(fd: int, n: int) -> bytes:
        data = real_read(fd, n)
        after(fd)
        return data

    def pread(fd: int, n: int, offset: int) -> bytes:
        data = real_pread(fd, n, offset)
        after(fd)
        return data

    monkeypatch.setattr(note_files.os, "read", read)
    monkeypatch.setattr(note_files.os, "pread", pread)
    with pytest.raises(NoteChangedError):
        write_note(note, EDITED, expected=snapshot.fingerprint)
    assert handle.closed and len(reads) >= after_read
    assert note.read_text(encoding="utf-8") == saved
    assert _stray(tmp_path) == []


@pytest.mark.parametrize(("command", "shown"), [
    (["list"], "STM/Ramen.md"), (["recall", "ramen"], "STM/Ramen.md"),
    (["show", "Ramen"], "STM/Ramen.md"), (["status"], "by folder: STM/ 1"),
])
def test_a_memory_a_kill_set_aside_is_put_back_by_a_read_only_command(
    vault: Path, command: list[str], shown: str
) -> None:
    """A real kill between the rename aside and the link: the next command of any kind puts
    the memory back (it stays listed and found)."""
    note = vault / "STM" / "Ramen.md"
    text = note.read_bytes()
    script = textwrap.dedent(f"""
        import os, signal
        from vaultmem import Vault
        from vaultmem.store import note_files
        real = os.rename
        def rename(src, dst):
            real(src, dst)
            if str(dst).endswith({ASIDE_SUFFIX!r}):
                os.kill(os.getpid(), signal.SIGKILL)
        note_files.os.rename = rename
        with Vault.open({str(vault)!r}) as v:
            v.touch("Ramen")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert not note.exists()
    code, out, err = run(*command, vault=vault)
    assert code == 0, err
    assert shown in out
    assert note.read_bytes() == text
    assert _stray(note.parent) == []


def test_a_note_held_aside_by_a_write_in_flight_stays_indexed(vault: Path) -> None:
    """While another process holds the vault lock (its write in flight), a read leaves the
    aside alone and keeps the note in the index."""
    note = vault / "STM" / "Ramen.md"
    aside = note.with_name(f".Ramen.md.0badc0de{ASIDE_SUFFIX}")
    os.rename(note, aside)
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from vaultmem.store.vault_lock import vault_lock
        with vault_lock(Path({str(vault / '.vaultmem')!r})):
            print("held", flush=True)
            sys.stdin.read()
    """)
    holder = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        code, out, err = run("list", vault=vault)
        assert code == 0 and "STM/Ramen.md" in out
        assert aside.exists() and not note.exists()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    code, out, err = run("list", vault=vault)  # the lock is free again: put back
    assert code == 0 and "STM/Ramen.md" in out
    assert note.exists() and _stray(note.parent) == []


@pytest.fixture
def linked(vault: Path) -> Path:
    """``LTM/alias.md`` and a person's ``People/mine.md``, both links to ``STM/Ramen.md``."""
    (vault / "LTM" / "alias.md").symlink_to("../STM/Ramen.md")
    (vault / "People").mkdir()
    (vault / "People" / "mine.md").symlink_to("../STM/Ramen.md")
    return vault


def test_a_symlink_and_its_target_are_one_note(linked: Path) -> None:
    code, out, err = run("list", "--json", vault=linked)
    assert code == 0 and [m["path"] for m in json.loads(out)["memories"]] == ["STM/Ramen.md"]
    code, out, err = run("recall", "ramen", "--json", vault=linked)
    assert [h["path"] for h in json.loads(out)["hits"]] == ["STM/Ramen.md"]
    code, out, err = run("doctor", vault=linked)
    assert code == 0 and "duplicate-id" not in out, out
    code, out, err = run("doctor", "--fix", vault=linked)
    assert code == 0, out + err
    for link in ("LTM/alias.md", "People/mine.md"):
        assert (linked / link).is_symlink() and os.readlink(linked / link) == "../STM/Ramen.md"
    assert (linked / "STM" / "Ramen.md").is_file()
    code, out, err = run("lifecycle", "--now", "2027-11-20T09:00:00", vault=linked)
    assert code == 0, err
    assert (linked / "LTM" / "alias.md").is_symlink()
    assert (linked / "People" / "mine.md").is_symlink()


def test_forget_of_a_link_archives_its_target_and_undo_brings_it_back(linked: Path) -> None:
    before = (linked / "STM" / "Ramen.md").read_bytes()
    code, out, err = run("forget", "alias", vault=linked)
    assert code == 0, err
    assert "LTM/alias.md is a link to STM/Ramen.md: STM/Ramen.md is the memory" in err
    assert "status: archived" in (linked / "Archive" / "Ramen.md").read_text(encoding="utf-8")
    assert not (linked / "STM" / "Ramen.md").exists()
    assert os.readlink(linked / "LTM" / "alias.md") == "../STM/Ramen.md"  # never replaced
    code, out, err = run("undo", vault=linked)
    assert code == 0, err
    assert (linked / "STM" / "Ramen.md").read_bytes() == before
    assert (linked / "LTM" / "alias.md").is_symlink()
    assert (linked / "LTM" / "alias.md").read_bytes() == before
    code, out, err = run("touch", "mine", vault=linked)
    assert code == 0 and "touched STM/Ramen.md" in out
    assert (linked / "People" / "mine.md").is_symlink()
