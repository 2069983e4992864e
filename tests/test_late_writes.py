"""A save that lands in a note's old file after vaultmem moved, edited or deleted the note is kept.

The save is made the way an editor makes it: through a descriptor the writer opened before
vaultmem took the note over, written after vaultmem's own checks of the old file were done.
Inside a watch (a lifecycle pass) the old file is checked again later; the save must then be
found in a note of the vault (merged into the new version, or in a conflicted copy), with no
stray files left, and the pass must say where it is.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem.cli import main
from vaultmem.core.notes.note_text import render_note
from vaultmem.services.lifecycle import pass_session
from vaultmem.services.lifecycle.pass_session import PassResult
from vaultmem.services.vault import Vault
from vaultmem.store.late_writes import LateSave, check_late_writes, watch_late_writes
from vaultmem.store.note_files import content_hash, delete_note, move_note, read_note

NOTE = "---\nid: A1\ntype: memory\nstatus: active\n---\nbody\n"
ARCHIVED = NOTE.replace("status: active", "status: archived")
SAVED = "\nsaved while it moved\n"
NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def _stray(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*") if p.name != ".gitkeep")


@pytest.fixture
def note(tmp_path: Path) -> Path:
    path = tmp_path / "STM" / "Note.md"
    path.parent.mkdir()
    path.write_text(NOTE, encoding="utf-8")
    return path


def _open_for_append(path: Path) -> int:
    return os.open(path, os.O_WRONLY | os.O_APPEND)


def test_a_save_landing_after_a_move_is_merged_into_the_moved_note(note: Path) -> None:
    destination = note.parents[1] / "Archive" / "Note.md"
    fd = _open_for_append(note)  # the editor has the note open before vaultmem moves it
    with watch_late_writes() as saves:
        move_note(note, destination, text=ARCHIVED, expected_sha256=content_hash(NOTE.encode()))
        os.write(fd, SAVED.encode())  # ... and saves after the move checked the old file
        os.close(fd)
        found = check_late_writes()
    assert [s.merged for s in found] == [True] and saves == found
    assert found[0].kept_at == destination
    assert destination.read_text(encoding="utf-8") == ARCHIVED + SAVED  # both changes kept
    assert not note.exists() and _stray(note.parents[1]) == []


def test_without_a_late_save_the_moved_note_is_left_as_written(note: Path) -> None:
    destination = note.parents[1] / "Archive" / "Note.md"
    with watch_late_writes() as saves:
        move_note(note, destination, text=ARCHIVED, expected_sha256=content_hash(NOTE.encode()))
    assert saves == []
    assert destination.read_text(encoding="utf-8") == ARCHIVED


def test_a_late_save_is_kept_apart_when_the_new_version_changed_since(note: Path) -> None:
    fd = _open_for_append(note)
    with watch_late_writes() as saves:
        move_note(note, note, text=ARCHIVED, expected_sha256=content_hash(NOTE.encode()))
        os.write(fd, SAVED.encode())
        os.close(fd)
        note.write_text(ARCHIVED + "another writer's line\n", encoding="utf-8")
    assert len(saves) == 1 and not saves[0].merged
    copy = saves[0].kept_at
    assert copy.parent == note.parent and "Conflicted copy vaultmem" in copy.name
    assert copy.read_text(encoding="utf-8") == NOTE + SAVED  # the save's bytes as they landed
    assert note.read_text(encoding="utf-8") == ARCHIVED + "another writer's line\n"


def test_a_late_save_whose_frontmatter_broke_is_kept_as_it_landed(note: Path) -> None:
    fd = os.open(note, os.O_WRONLY)  # rewritten in place from the start: YAML left broken
    with watch_late_writes() as saves:
        move_note(note, note, text=ARCHIVED, expected_sha256=content_hash(NOTE.encode()))
        os.write(fd, b"---\nid: [A1\n")
        os.close(fd)
    assert len(saves) == 1 and not saves[0].merged
    assert saves[0].kept_at.read_bytes().startswith(b"---\nid: [A1\n")
    assert note.read_text(encoding="utf-8") == ARCHIVED


def test_a_save_landing_after_a_delete_brings_the_note_back(note: Path) -> None:
    fd = _open_for_append(note)
    with watch_late_writes() as saves:
        delete_note(note, expected_sha256=content_hash(NOTE.encode()))
        os.write(fd, SAVED.encode())
        os.close(fd)
    assert [(s.kept_at, s.merged) for s in saves] == [(note, False)]
    assert note.read_text(encoding="utf-8") == NOTE + SAVED
    assert _stray(note.parent) == []


def test_outside_a_watch_the_old_file_is_not_held(note: Path) -> None:
    move_note(note, note, text=ARCHIVED, expected_sha256=content_hash(NOTE.encode()))
    assert check_late_writes() == []
    assert read_note(note).text == ARCHIVED


def _memory_vault(root: Path) -> Path:
    Vault.init(root)
    fields = {"id": "01LATE", "type": "memory", "status": "active", "layer": "working",
              "created": "2026-01-05T09:00:00Z", "last_used": "2026-01-05T09:00:00Z",
              "use_count": 1, "strength": 1.0, "importance": 0.1}  # fmt: skip
    (root / "STM" / "Fading.md").write_text(render_note(fields, "an old thought\n"), "utf-8")
    return root / "STM" / "Fading.md"


def _save_late(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Open ``path`` now (as an editor would, before the pass) and save through it once the
    pass has moved the note, just before the pass checks the old files (after each pass's
    moves here; in a big pass, after each batch)."""
    fd = _open_for_append(path)
    real_check, real_run = pass_session.check_late_writes, pass_session.PassSession.run

    def save_then_check() -> list[LateSave]:
        if not saved:
            os.write(fd, SAVED.encode())
            os.close(fd)
            saved.append(True)
        return real_check()

    def run(self: pass_session.PassSession, result: PassResult) -> PassResult:
        done = real_run(self, result)
        self.check_late_writes()
        return done

    saved: list[bool] = []
    monkeypatch.setattr(pass_session, "check_late_writes", save_then_check)
    monkeypatch.setattr(pass_session.PassSession, "run", run)


def test_a_pass_keeps_a_save_that_lands_in_a_note_it_archived(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _save_late(monkeypatch, _memory_vault(tmp_path / "vault"))
    with Vault.open(tmp_path / "vault") as vault:
        run = vault.lifecycle(("forget",), now=NOW)
        archived = [m.destination for m in run.applied]
        assert len(archived) == 1 and archived[0] is not None
        text = (tmp_path / "vault" / archived[0]).read_text(encoding="utf-8")
        assert text.endswith(SAVED) and "status: archived" in text  # both changes are there
        assert run.late_saves == [
            f"STM/Fading.md: a save that landed while vaultmem wrote it was merged into "
            f"{archived[0]}"
        ]
        assert run.as_dict()["late_saves"] == run.late_saves
        indexed = vault.index.conn.execute(  # the index holds the merged text
            "SELECT hash FROM notes WHERE path = ?", (archived[0],)
        ).fetchone()
        assert indexed == (content_hash(text.encode()),)
    assert _stray(tmp_path / "vault" / "Archive") == []


def test_the_cli_says_where_a_late_save_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _save_late(monkeypatch, _memory_vault(tmp_path / "vault"))
    result = CliRunner().invoke(
        main, ["forget", "Fading", "--now", "2026-12-01", "--vault", str(tmp_path / "vault")]
    )
    assert result.exit_code == 0, result.output
    assert "kept a late save: STM/Fading.md: a save that landed while vaultmem wrote it was " \
        "merged into Archive/" in result.output


def test_old_files_are_checked_before_they_hold_too_many_descriptors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.store import late_writes

    monkeypatch.setattr(late_writes, "held_at_most", lambda: 8)
    folder = tmp_path / "STM"
    folder.mkdir()
    notes = [folder / f"n{i}.md" for i in range(20)]
    opened = []
    for path in notes:
        path.write_text(NOTE, encoding="utf-8")
        opened.append(_open_for_append(path))
    with watch_late_writes() as saves:
        for path, fd in zip(notes, opened, strict=True):
            move_note(path, path, text=ARCHIVED, expected_sha256=content_hash(NOTE.encode()))
            os.write(fd, SAVED.encode())  # lands after each move's own check
            os.close(fd)
            held = late_writes._WATCH.get().held  # type: ignore[union-attr]
            assert len(held) <= 2 * 8  # (each rescue's own write holds its old file)
    # each save landed before its old file was checked: all kept, merged
    assert sorted(s.kept_at.name for s in saves) == sorted(p.name for p in notes)
    assert all(p.read_text(encoding="utf-8") == ARCHIVED + SAVED for p in notes)


def test_the_descriptors_held_follow_the_open_file_limit() -> None:
    import resource

    from vaultmem.store.late_writes import MAX_HELD, held_at_most

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    expected = MAX_HELD if soft == resource.RLIM_INFINITY else max(8, min(MAX_HELD, soft // 8))
    assert held_at_most() == expected


def test_a_watch_leaves_no_descriptor_open_after_a_rescue_as_it_ends(note: Path) -> None:
    def descriptors() -> int:
        return len(os.listdir("/proc/self/fd"))

    fd = _open_for_append(note)
    before = descriptors()
    with watch_late_writes() as saves:
        move_note(note, note, text=ARCHIVED, expected_sha256=content_hash(NOTE.encode()))
        os.write(fd, SAVED.encode())  # found by the check as the watch ends, then merged
    os.close(fd)
    assert [s.merged for s in saves] == [True]
    assert note.read_text(encoding="utf-8") == ARCHIVED + SAVED
    assert descriptors() == before - 1  # the note's own descriptor (closed above), nothing held
