"""A person's save or delete racing vaultmem's write is never lost or undone.

Each race is placed at one exact point of the owned write (read → write temp → rename aside →
compare → link in place → check again → drop the aside) by a real second writer acting on the
real files at that moment; the note must end as the person left it, with no stray files.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from vaultmem.errors import NoteChangedError, NoteError
from vaultmem.store import note_files
from vaultmem.store.interrupted_writes import recover_interrupted_writes
from vaultmem.store.note_files import (
    ASIDE_SUFFIX,
    TEMP_SUFFIX,
    content_hash,
    delete_note,
    move_note,
    read_note,
    write_note,
)

NOTE = "---\nid: A1\ntype: memory\nstatus: active\n---\nbody\n"
EDITED = NOTE.replace("status: active", "status: archived")


def _stray(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture
def note(tmp_path: Path) -> Path:
    path = tmp_path / "STM" / "Note.md"
    path.parent.mkdir()
    path.write_text(NOTE, encoding="utf-8")
    return path


def _after_rename(monkeypatch: pytest.MonkeyPatch, act: Callable[[str, str], None]) -> None:
    """Run ``act(source, aside)`` right after vaultmem renames a note aside (once)."""
    real = os.rename
    done: list[bool] = []

    def rename(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        real(src, dst)
        if str(dst).endswith(ASIDE_SUFFIX) and not done:
            done.append(True)
            act(str(src), str(dst))

    monkeypatch.setattr(note_files.os, "rename", rename)


def test_a_save_between_read_and_write_is_kept(note: Path) -> None:
    snapshot = read_note(note)
    note.write_text(NOTE + "saved by the person\n", encoding="utf-8")
    with pytest.raises(NoteChangedError, match="changed on disk since it was read"):
        write_note(note, EDITED, expected=snapshot.fingerprint)
    assert note.read_text(encoding="utf-8") == NOTE + "saved by the person\n"
    assert _stray(note.parent) == []


def test_a_save_into_the_open_file_while_it_is_owned_is_kept(
    note: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that opened the note before vaultmem renamed it writes into the renamed file."""
    snapshot = read_note(note)
    handle = open(note, "a", encoding="utf-8")  # noqa: SIM115 - held open across the race
    _after_rename(monkeypatch, lambda _src, _aside: (handle.write("appended\n"), handle.close()))
    with pytest.raises(NoteChangedError):
        write_note(note, EDITED, expected=snapshot.fingerprint)
    assert note.read_text(encoding="utf-8") == NOTE + "appended\n"
    assert _stray(note.parent) == []


def test_a_write_landing_after_the_last_check_is_caught_and_kept(
    note: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last write of a slow writer lands after vaultmem removed the old file: its bytes are
    read back through vaultmem's open handle and the person's version put back."""
    snapshot = read_note(note)
    handle = open(note, "a", encoding="utf-8")  # noqa: SIM115 - held open across the race
    real_unlink = os.unlink

    def unlink(path: str | os.PathLike[str]) -> None:
        real_unlink(path)
        if str(path).endswith(ASIDE_SUFFIX) and not handle.closed:
            handle.write("late line\n")
            handle.close()

    monkeypatch.setattr(note_files.os, "unlink", unlink)
    with pytest.raises(NoteChangedError, match="while it was written"):
        write_note(note, EDITED, expected=snapshot.fingerprint)
    assert note.read_text(encoding="utf-8") == NOTE + "late line\n"
    assert _stray(note.parent) == []


def test_a_delete_racing_the_write_is_not_undone(note: Path) -> None:
    snapshot = read_note(note)
    note.unlink()
    with pytest.raises(NoteChangedError, match="deleted since it was read"):
        write_note(note, EDITED, expected=snapshot.fingerprint)
    assert not note.exists()
    assert _stray(note.parent) == []


def test_a_save_that_recreates_the_note_while_it_is_aside_keeps_both_versions(
    note: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor that saves by creating the file anew while vaultmem holds the old one: the new
    save keeps the name, the old text becomes a visible conflict copy (neither is lost)."""
    snapshot = read_note(note)
    _after_rename(
        monkeypatch, lambda src, _aside: Path(src).write_text("new save\n", encoding="utf-8")
    )
    with pytest.raises(NoteChangedError, match="saved anew"):
        write_note(note, EDITED, expected=snapshot.fingerprint)
    assert note.read_text(encoding="utf-8") == "new save\n"
    copies = list(note.parent.glob("Note (Conflicted copy vaultmem *).md"))
    assert [c.read_text(encoding="utf-8") for c in copies] == [NOTE]
    assert _stray(note.parent) == []


def test_a_move_of_a_changed_note_is_refused_and_leaves_it_in_place(
    note: Path, tmp_path: Path
) -> None:
    expected = content_hash(NOTE.encode())
    note.write_text(NOTE + "edit\n", encoding="utf-8")
    target = tmp_path / "Archive" / "Note.md"
    with pytest.raises(NoteChangedError):
        move_note(note, target, text=EDITED, expected_sha256=expected)
    assert note.read_text(encoding="utf-8") == NOTE + "edit\n"
    assert not target.exists()


def test_a_move_sets_the_fields_in_the_same_step(note: Path, tmp_path: Path) -> None:
    target = tmp_path / "Archive" / "Note.md"
    move_note(note, target, text=EDITED, expected_sha256=content_hash(NOTE.encode()))
    assert not note.exists()
    assert target.read_text(encoding="utf-8") == EDITED
    assert _stray(note.parent) == [] and _stray(target.parent) == []


@pytest.mark.parametrize("free", [False, True])
def test_a_move_never_replaces_a_file(note: Path, tmp_path: Path, free: bool) -> None:
    """Also when the caller says it found the place free (a pass checks before it journals):
    a file that took the name since is kept, the note put back where and as it was."""
    target = tmp_path / "Archive" / "Note.md"
    target.parent.mkdir()
    target.write_text("theirs\n", encoding="utf-8")
    with pytest.raises(NoteError, match="already exists"):
        move_note(
            note, target, text=EDITED, expected_sha256=content_hash(NOTE.encode()), free=free
        )
    assert target.read_text(encoding="utf-8") == "theirs\n"
    assert note.read_text(encoding="utf-8") == NOTE
    assert _stray(note.parent) == [] and _stray(target.parent) == []


def test_a_delete_of_a_changed_note_is_refused(note: Path) -> None:
    note.write_text(NOTE + "edit\n", encoding="utf-8")
    with pytest.raises(NoteChangedError):
        delete_note(note, expected_sha256=content_hash(NOTE.encode()))
    assert note.read_text(encoding="utf-8") == NOTE + "edit\n"


def test_writes_work_where_hard_links_are_not_supported(
    note: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_link(*_args: object, **_kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(note_files.os, "link", no_link)
    snapshot = read_note(note)
    write_note(note, EDITED, expected=snapshot.fingerprint)
    assert note.read_text(encoding="utf-8") == EDITED
    fresh = note.with_name("Fresh.md")
    write_note(fresh, NOTE, expected=None)
    with pytest.raises(NoteError, match="already exists"):
        write_note(fresh, NOTE, expected=None)
    assert _stray(note.parent) == []


def test_a_killed_write_whose_note_is_only_aside_is_put_back(note: Path) -> None:
    """Killed after the rename aside: the aside file is the only copy; it is restored."""
    aside = note.with_name(f".{note.name}.0badc0de{ASIDE_SUFFIX}")
    temp = note.with_name(f".{note.name}.0badc0de{TEMP_SUFFIX}")
    os.rename(note, aside)
    temp.write_text(EDITED, encoding="utf-8")
    assert recover_interrupted_writes(note.parent) == [note]
    assert note.read_text(encoding="utf-8") == NOTE
    assert _stray(note.parent) == []


def test_a_killed_write_that_had_landed_drops_the_old_copy(note: Path, tmp_path: Path) -> None:
    """Killed after the new text was linked in place: the old copy goes, the new text stays."""
    aside = note.with_name(f".{note.name}.0badc0de{ASIDE_SUFFIX}")
    temp = note.with_name(f".{note.name}.0badc0de{TEMP_SUFFIX}")
    os.rename(note, aside)
    temp.write_text(EDITED, encoding="utf-8")
    target = tmp_path / "Archive" / "Note.md"
    target.parent.mkdir()
    os.link(temp, target)
    assert recover_interrupted_writes(note.parent, search=tmp_path) == []
    assert not note.exists()
    assert target.read_text(encoding="utf-8") == EDITED
    assert _stray(note.parent) == []


def test_a_killed_write_whose_name_was_taken_again_keeps_a_visible_copy(note: Path) -> None:
    aside = note.with_name(f".{note.name}.0badc0de{ASIDE_SUFFIX}")
    os.rename(note, aside)
    note.write_text("a new save\n", encoding="utf-8")
    recover_interrupted_writes(note.parent)
    assert note.read_text(encoding="utf-8") == "a new save\n"
    copies = list(note.parent.glob("Note (Conflicted copy vaultmem *).md"))
    assert [c.read_text(encoding="utf-8") for c in copies] == [NOTE]
    assert _stray(note.parent) == []


def test_a_move_that_fails_after_owning_the_note_puts_it_back(
    note: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A target folder on another file system: neither a link nor a rename can reach it."""

    real_link, real_replace = os.link, os.replace

    def cross_device(real: Callable[..., None]) -> Callable[..., None]:
        def call(src: object, dst: object, **kwargs: object) -> None:
            if "Archive" in str(dst):
                raise OSError(18, "Invalid cross-device link")
            real(src, dst, **kwargs)

        return call

    monkeypatch.setattr(note_files.os, "link", cross_device(real_link))
    monkeypatch.setattr(note_files.os, "replace", cross_device(real_replace))
    target = tmp_path / "Archive" / "Note.md"
    with pytest.raises(OSError, match="cross-device"):
        move_note(note, target, text=EDITED, expected_sha256=content_hash(NOTE.encode()))
    assert note.read_text(encoding="utf-8") == NOTE
    assert not target.exists()
    assert _stray(note.parent) == []
