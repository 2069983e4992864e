"""Batched durability: a pass and an import flush to disk once per batch, not once per note,
and keep every guarantee of the owned write (a person's save wins, undo is exact, no strays).

Speed itself is measured in ``benchmarks/`` (``python -m benchmarks.run``), never asserted here;
these tests show the behaviour that makes it fast and that nothing is lost on the way.
"""

from __future__ import annotations

import gc
import os
import queue
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import snapshot_files

from vaultmem import Vault
from vaultmem.core.collector import collector_paused
from vaultmem.core.notes.note_text import parse_frontmatter, render_note
from vaultmem.errors import LockedError, NoteChangedError
from vaultmem.services.lifecycle import pass_session
from vaultmem.services.lifecycle.progress import progress_to
from vaultmem.services.memories.remembering import KEYS_TABLE
from vaultmem.store import journal, journal_undo, note_files
from vaultmem.store.note_files import (
    ASIDE_SUFFIX,
    TEMP_SUFFIX,
    content_hash,
    move_note,
    read_note,
    stage_text,
)
from vaultmem.store.vault_lock import vault_lock

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # benchmarks/ is not installed; plain `pytest` lacks the repo
    sys.path.insert(0, str(REPO))

from benchmarks.generate_vault import REFERENCE_TIME  # noqa: E402

NOTE = "---\nid: A1\ntype: memory\nstatus: active\n---\nbody\n"
EDITED = NOTE.replace("status: active", "status: archived")


def _strays(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.name.endswith((TEMP_SUFFIX, ASIDE_SUFFIX))
    )


def _ids_of(files: dict[str, bytes]) -> list[str]:
    ids = []
    for rel, data in files.items():
        if rel.endswith(".md") and data.startswith(b"---\n"):
            front = parse_frontmatter(data.decode("utf-8").split("---\n")[1])
            if front.get("type") == "memory":
                ids.append(str(front["id"]))
    return sorted(ids)


def _ids(root: Path) -> list[str]:
    return _ids_of(snapshot_files(root))


def test_a_pass_flushes_per_batch_and_undo_restores_every_byte(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot_files(generated_vault)
    vault = Vault.open(generated_vault)
    vault.sync()
    fsyncs: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:  # the real fsync, counted
        fsyncs.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(note_files.os, "fsync", counting_fsync)
    monkeypatch.setattr(pass_session, "PREPARE_BATCH", 32)  # several batches in this small vault
    refreshed: list[list[str]] = []
    real_refresh = vault.refresh

    def recording_refresh(paths: list[str], written: object = None) -> object:
        refreshed.append(list(paths))
        return real_refresh(paths, written)  # type: ignore[arg-type]

    monkeypatch.setattr(vault, "refresh", recording_refresh)
    run = vault.lifecycle(now=REFERENCE_TIME)
    moves = sum(len(r.applied) for r in run.results)
    assert moves >= 200  # seal, expire and forget move notes in this vault
    # one flush per batch of notes (and a few for the journal), never one per note
    assert len(fsyncs) < moves / 10, (len(fsyncs), moves)
    assert _strays(generated_vault) == []
    # re-indexing touched only what the run wrote, each note once per time it was written
    paths = [p for call in refreshed for p in call]
    assert set(paths) <= set(run.touched)
    assert len(paths) <= 2 * moves
    assert all(len(call) == len(set(call)) for call in refreshed)
    assert _ids(generated_vault) == _ids_of(before)  # every memory once, none lost or doubled
    fsyncs.clear()
    monkeypatch.setattr(journal_undo, "UNDO_BATCH", 64)  # several batches here too
    reports: list[tuple[str, int, int]] = []
    with progress_to(lambda *step: reports.append(step)):
        report = vault.undo()
    steps = [(done, total) for label, done, total in reports if label == "undoing"]
    vault.close()
    assert snapshot_files(generated_vault) == before
    # the undo writes its texts ahead in batches too: not one fsync per note put back
    assert len(fsyncs) < len(report.restored) / 10, (len(fsyncs), len(report.restored))
    assert steps[-1] == (len(report.restored), len(report.restored))
    assert [done for done, _ in steps] == list(range(1, len(report.restored) + 1))


def test_a_pass_runs_without_the_cyclic_collector_and_gives_it_back(generated_vault: Path) -> None:
    vault = Vault.open(generated_vault)
    vault.sync()
    seen: list[bool] = []
    real_refresh = vault.refresh

    def recording_refresh(paths: list[str]) -> object:
        seen.append(gc.isenabled())
        return real_refresh(paths)

    vault.refresh = recording_refresh  # type: ignore[method-assign]
    assert gc.isenabled()
    run = vault.lifecycle(now=REFERENCE_TIME)
    vault.close()
    assert sum(len(r.applied) for r in run.results) >= 200
    assert seen and not any(seen)  # paused for the whole run, re-indexing included
    assert gc.isenabled()


def test_the_collector_pause_restores_what_it_found_even_on_an_error() -> None:
    assert gc.isenabled()
    with pytest.raises(KeyError), collector_paused():
        assert not gc.isenabled()
        with collector_paused():  # nested: the outer block still owns the pause
            pass
        assert not gc.isenabled()
        raise KeyError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()


def _watch_flushes(
    monkeypatch: pytest.MonkeyPatch, fail_at: int | None = None
) -> tuple[set[Path], list[str], list[bool]]:
    """Slow flushes on the helper thread, recorded: the files flushed; each staged text linked
    before its flush ended; for each one linked, whether some flush was running meanwhile."""
    flushed: set[Path] = set()
    early: list[str] = []
    overlapped: list[bool] = []
    running = threading.Event()
    calls = [0]
    real_flush, real_place = journal.flush_files, note_files._place

    def slow_flush(root: Path, files: list[Path]) -> None:
        calls[0] += 1
        running.set()
        try:
            time.sleep(0.02)
            if calls[0] == fail_at:
                raise OSError(5, "Input/output error")
            real_flush(root, files)
            flushed.update(files)
        finally:
            running.clear()

    staged: set[Path] = set()  # (a note written without staging fsyncs its own temp file)
    real_stage = journal.stage_text

    def recorded_stage(path: Path, text: str, **options: Any) -> note_files.StagedText:
        made = real_stage(path, text, **options)
        staged.add(made.temp)
        return made

    def watched_place(source: Path, destination: Path, *, keep_source: bool) -> None:
        if source in staged and source.exists():
            overlapped.append(running.is_set())
            if source not in flushed:
                early.append(destination.name)
        real_place(source, destination, keep_source=keep_source)

    monkeypatch.setattr(journal, "flush_files", slow_flush)
    monkeypatch.setattr(journal, "stage_text", recorded_stage)
    monkeypatch.setattr(note_files, "_place", watched_place)
    monkeypatch.setattr(pass_session, "PREPARE_BATCH", 32)
    return flushed, early, overlapped


def test_each_batch_is_flushed_while_the_one_before_is_applied_and_linked_only_after(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = snapshot_files(generated_vault)
    vault = Vault.open(generated_vault)
    vault.sync()
    flushed, early, overlapped = _watch_flushes(monkeypatch)
    run = vault.lifecycle(now=REFERENCE_TIME)
    assert sum(len(r.applied) for r in run.results) >= 200
    assert len(overlapped) >= 200  # staged texts were linked in place...
    assert early == []  # ...each only once its batch's flush had ended
    assert any(overlapped)  # and while the next batch's flush ran: the two overlap
    assert threading.active_count() == 1  # no flush is left running
    assert _strays(generated_vault) == []
    vault.undo()
    vault.close()
    assert snapshot_files(generated_vault) == before


def test_texts_are_written_ahead_off_the_pass_thread_and_one_that_fails_is_written_by_its_step(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the next batch's texts are written ahead on the flush thread while the pass (or undo)
    # goes on; a text that cannot be written ahead there is written by its own step instead
    before = snapshot_files(generated_vault)
    vault = Vault.open(generated_vault)
    vault.sync()
    real_stage = journal.stage_text
    threads: list[bool] = []

    def flaky_stage(path: Path, text: str, **options: Any) -> note_files.StagedText:
        threads.append(threading.current_thread() is threading.main_thread())
        if len(threads) % 3 == 0:
            raise OSError(28, "No space left on device")
        return real_stage(path, text, **options)

    monkeypatch.setattr(journal, "stage_text", flaky_stage)
    monkeypatch.setattr(pass_session, "PREPARE_BATCH", 32)
    run = vault.lifecycle(now=REFERENCE_TIME)
    assert sum(len(r.applied) for r in run.results) >= 200
    assert [s for r in run.results for s in r.skipped] == []  # each failed one written anyway
    assert len(threads) >= 200 and not any(threads)  # none written on the pass's own thread
    assert threading.active_count() == 1
    assert _strays(generated_vault) == []
    assert _ids(generated_vault) == _ids_of(before)
    threads.clear()
    monkeypatch.setattr(journal_undo, "UNDO_BATCH", 64)
    vault.undo()
    vault.close()
    assert len(threads) >= 100 and not any(threads)  # the undo writes ahead the same way
    assert threading.active_count() == 1
    assert snapshot_files(generated_vault) == before


def test_a_failed_flush_stops_the_pass_with_none_of_its_texts_linked_and_no_note_lost(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _ids(generated_vault)
    vault = Vault.open(generated_vault)
    vault.sync()
    _, early, overlapped = _watch_flushes(monkeypatch, fail_at=2)
    with pytest.raises(OSError, match="Input/output error"):
        vault.lifecycle(now=REFERENCE_TIME)
    assert overlapped  # the first batch went ahead...
    assert early == []  # ...and nothing of the batch whose flush failed was linked
    assert threading.active_count() == 1
    assert _strays(generated_vault) == []  # its staged texts were removed
    assert _ids(generated_vault) == before  # every memory once, none lost or doubled
    vault.lifecycle(now=REFERENCE_TIME)  # the next run finishes the pass
    vault.close()
    assert _ids(generated_vault) == before
    assert _strays(generated_vault) == []


def test_a_staged_text_someone_changed_is_not_linked(tmp_path: Path) -> None:
    note = tmp_path / "STM" / "Note.md"
    note.parent.mkdir()
    note.write_text(NOTE, encoding="utf-8")
    staged = stage_text(note, EDITED)
    staged.temp.write_text("someone else's bytes\n", encoding="utf-8")
    destination = tmp_path / "Archive" / "Note.md"
    move_note(
        note, destination, text=EDITED, expected_sha256=content_hash(NOTE.encode()), staged=staged
    )
    assert destination.read_text(encoding="utf-8") == EDITED
    assert not note.exists()
    assert _strays(tmp_path) == []


def test_a_save_after_staging_wins_and_the_staged_text_goes(tmp_path: Path) -> None:
    note = tmp_path / "STM" / "Note.md"
    note.parent.mkdir()
    note.write_text(NOTE, encoding="utf-8")
    snapshot = read_note(note)
    staged = stage_text(note, EDITED)
    note.write_text(NOTE + "the person's new line\n", encoding="utf-8")  # saved meanwhile
    with pytest.raises(NoteChangedError):
        move_note(
            note,
            tmp_path / "Archive" / "Note.md",
            text=EDITED,
            expected_sha256=snapshot.fingerprint.sha256,
            staged=staged,
        )
    assert note.read_text(encoding="utf-8") == NOTE + "the person's new line\n"
    assert not (tmp_path / "Archive" / "Note.md").exists()
    assert _strays(tmp_path) == []


def test_staged_texts_left_by_a_killed_pass_are_swept(generated_vault: Path) -> None:
    vault = Vault.open(generated_vault)
    vault.sync()
    note = next((generated_vault / "STM").rglob("*.md"))
    text = note.read_text(encoding="utf-8")
    staged = stage_text(note, text.replace("type: memory", "type: memory\nextra: 1"))
    assert staged.temp.exists()  # what a kill between writing ahead and linking leaves
    vault.lifecycle(now=REFERENCE_TIME)
    vault.close()
    assert not staged.temp.exists()
    assert _strays(generated_vault) == []


def test_plain_words_skip_the_yaml_check_only_when_yaml_reads_them_back() -> None:
    rng = random.Random(3)
    alphabet = "0123456789abcdefxobeEXOBynYNtrufalsTRUFALS"
    words = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(3000)}
    words |= {"yes", "No", "ON", "off", "Null", "0x1F", "0o17", "017", "0b101", "1e5", "01JBX"}
    for word in sorted(words):
        text = render_note({"id": word, "tags": [word]}, "")
        front = parse_frontmatter(text.split("---\n")[1])
        assert front == {"id": word, "tags": [word]}, word
        assert yaml.safe_load(text.split("---\n")[1]) == {"id": word, "tags": [word]}, word


def test_content_keys_are_cached_by_file_and_follow_edits(tmp_path: Path) -> None:
    Vault.init(tmp_path / "v")
    lines = [b'{"content": "Coffee at nine, every day."}\n', b'{"content": "Tea at four."}\n']
    with Vault.open(tmp_path / "v") as vault:
        first = vault.import_jsonl(lines)
        assert len(first.imported) == 2
        again = vault.import_jsonl(lines)
        assert again.imported == [] and len(again.duplicates) == 2
        cached = vault.index.conn.execute(f"SELECT count(*) FROM {KEYS_TABLE}").fetchone()[0]
        assert cached == 2
        coffee = tmp_path / "v" / first.imported[0]
        text = coffee.read_text(encoding="utf-8")
        coffee.write_text(text.replace("Coffee at nine", "Cocoa at ten"), encoding="utf-8")
        vault.sync()
        edited = vault.import_jsonl(
            [
                b'{"content": "cocoa at TEN every day"}\n',
                b'{"content": "Coffee at nine, every day."}\n',
            ]
        )
        assert len(edited.duplicates) == 1 and edited.duplicates[0][0] == 1
        assert len(edited.imported) == 1  # the old content is no longer in the vault


def test_the_vault_lock_re_entered_by_one_thread_still_keeps_out_another(tmp_path: Path) -> None:
    sidecar = tmp_path / ".vaultmem"
    outcome: list[str] = []

    def other() -> None:
        try:
            with vault_lock(sidecar, timeout_seconds=0):
                outcome.append("taken")
        except LockedError:
            outcome.append("refused")

    with vault_lock(sidecar), vault_lock(sidecar):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(timeout=30)
    assert outcome == ["refused"]
    thread = threading.Thread(target=other)
    thread.start()
    thread.join(timeout=30)
    assert outcome == ["refused", "taken"]


def test_a_text_written_ahead_and_not_used_leaves_no_folder_behind(tmp_path: Path) -> None:
    box = tmp_path / "Boxes" / "2026-11-30" / "box-new" / "box-new.md"
    (tmp_path / "Boxes").mkdir()
    staged = stage_text(box, NOTE)
    assert staged.temp.exists()
    note_files.discard_staged(staged)  # none of the box's members moved: the box is not written
    assert list((tmp_path / "Boxes").iterdir()) == []
    kept = stage_text(box, NOTE)
    (box.parent / "a person's note.md").write_text("mine\n", encoding="utf-8")
    note_files.discard_staged(kept)
    assert [p.name for p in box.parent.iterdir()] == ["a person's note.md"]


@pytest.mark.parametrize("same_size", [False, True])
def test_an_imported_note_changed_before_it_is_indexed_is_indexed_as_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, same_size: bool
) -> None:
    """Import indexes the texts it wrote without reading them back, but only while the file's
    size and mtime are still those it wrote: a save that lands between the write and the index
    (even one keeping the size) is what the index holds."""
    root = tmp_path / "v"
    Vault.init(root)[0].close()
    vault = Vault.open(root)
    real_refresh = vault.refresh
    edited: list[str] = []

    def save_then_refresh(paths, written=None):  # type: ignore[no-untyped-def]
        target = root / sorted(paths)[0]
        text = target.read_text()
        new = text.replace("kettle", "teapot") if same_size else text + "a person's line\n"
        stat = target.stat()
        target.write_text(new)
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
        edited.append(sorted(paths)[0])
        return real_refresh(paths, written)

    monkeypatch.setattr(vault, "refresh", save_then_refresh)
    lines = [f'{{"content": "boil the kettle {i}"}}\n'.encode() for i in range(3)]
    report = vault.import_jsonl(lines)
    assert len(report.imported) == 3 and edited
    word = "teapot" if same_size else "person"

    def bodies() -> dict[str, str]:  # what the index holds now, before any walk
        rows = vault.index.conn.execute(
            "SELECT n.path, f.body FROM notes n JOIN notes_fts f ON f.rowid = n.nid"
        ).fetchall()
        return {str(path): str(body) for path, body in rows}

    held = bodies()
    assert word in held[edited[0]]
    assert all("kettle" in held[p] for p in report.imported if p != edited[0])
    assert [h.path for h in vault.recall(word, k=5)] == [edited[0]]
    vault.close()


def test_staging_and_moving_into_existing_folders_makes_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a pass stages and moves thousands of notes between a few folders that exist already:
    # no mkdir per note (each was a system call and an exception); new folders are still made
    (tmp_path / "STM").mkdir()
    (tmp_path / "Archive").mkdir()
    made: list[str] = []
    real_mkdir = os.mkdir

    def counting_mkdir(path: str, *args: object, **kwargs: object) -> None:
        made.append(str(path))
        real_mkdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", counting_mkdir)
    for i in range(3):
        source = tmp_path / "STM" / f"n{i}.md"
        source.write_text(f"note {i}\n")
        staged = note_files.stage_text(source, f"note {i}, archived\n")
        note_files.move_note(
            source, tmp_path / "Archive" / source.name, text=f"note {i}, archived\n",
            expected_sha256=note_files.content_hash(f"note {i}\n".encode()), staged=staged,
        )  # fmt: skip
    assert made == []
    assert sorted(p.name for p in (tmp_path / "Archive").iterdir()) == ["n0.md", "n1.md", "n2.md"]
    assert (tmp_path / "Archive" / "n2.md").read_text() == "note 2, archived\n"
    staged = note_files.stage_text(tmp_path / "Boxes" / "b" / "n.md", "new\n")
    note_files.create_note(tmp_path / "Boxes" / "b" / "n.md", "new\n", staged=staged)
    assert made and (tmp_path / "Boxes" / "b" / "n.md").read_text() == "new\n"


def test_a_batch_whose_temp_write_fails_shows_no_note_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an error writing a temp file of a batch is raised by commit, before any note of the
    # batch appears
    from vaultmem.store import note_batch

    real = note_batch._write_temp
    started = threading.Event()

    def failing(path: Path, data: bytes) -> tuple[str, int, int]:
        started.set()
        if path.name == "n2.md":
            raise OSError(28, "No space left on device")
        return real(path, data)

    monkeypatch.setattr(note_batch, "_write_temp", failing)
    batch = note_batch.NewNotes()
    for i in range(5):
        batch.add(tmp_path / "STM" / f"n{i}.md", f"note {i}\n")
    assert started.wait(10)
    with pytest.raises(OSError, match="No space"):
        batch.commit()
    assert list((tmp_path / "STM").iterdir()) == []
    batch.discard()
    batch.add(tmp_path / "STM" / "n0.md", "note 0\n")
    assert batch.commit() == {}
    assert [p.name for p in (tmp_path / "STM").iterdir()] == ["n0.md"]
    assert not [t for t in threading.enumerate() if t.name.startswith("vaultmem-write")]


def _removed_file_fd(folder: Path, name: str) -> int:
    path = folder / name
    path.write_text("old version\n", "utf-8")
    fd = os.open(path, os.O_RDONLY)
    path.unlink()
    return fd


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_removed_files_are_closed_aside_and_none_left_open(tmp_path: Path) -> None:
    """Inside a batch the last descriptors of removed files are closed by one helper thread;
    when the batch ends every one is closed and no closing thread is left running."""
    from vaultmem.store.durability import batched_dir_syncs, defer_close, settle_closes

    fds = [_removed_file_fd(tmp_path, f"old {i}.md") for i in range(300)]
    with batched_dir_syncs():
        assert all(defer_close(fd) for fd in fds[:200])
        settle_closes()  # what a pass does before its index may fork workers
        assert not any(_is_open(fd) for fd in fds[:200])
        assert not [t for t in threading.enumerate() if t.name == "vaultmem-close"]
        assert all(defer_close(fd) for fd in fds[200:])
    assert not any(_is_open(fd) for fd in fds)
    assert not [t for t in threading.enumerate() if t.name == "vaultmem-close"]
    assert defer_close(os.dup(0)) is False  # outside a batch the caller closes its own


def test_a_slow_closer_never_holds_more_than_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the closing thread falls behind (a slow file system), the caller closes its own
    descriptors past :data:`_Closer.MAX_PENDING`: a pass never runs out of descriptors."""
    from vaultmem.store import durability

    gate = threading.Event()
    real_close = os.close

    def held_close(fd: int) -> None:
        if threading.current_thread().name == "vaultmem-close":
            gate.wait(10)
        real_close(fd)

    monkeypatch.setattr(durability._Closer, "MAX_PENDING", 5)
    monkeypatch.setattr(durability.os, "close", held_close)
    fds = [_removed_file_fd(tmp_path, f"old {i}.md") for i in range(12)]
    closer = durability._Closer()
    for fd in fds:
        closer.add(fd)
    # the thread holds the first; five more wait in the queue; the caller closed the rest
    assert sum(_is_open(fd) for fd in fds) <= 1 + 5
    assert not any(_is_open(fd) for fd in fds[7:])
    gate.set()
    closer.settle()
    assert not any(_is_open(fd) for fd in fds)


def test_descriptors_handed_over_together_wake_the_closer_once_and_keep_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass hands a batch of removed files' descriptors to the closing thread in one put (one
    wake-up, not one per descriptor); past :data:`_Closer.MAX_PENDING` the caller closes the
    rest itself, and every one is closed once the closer settles."""
    from vaultmem.store import durability

    gate = threading.Event()
    real_close = os.close
    puts: list[int] = []

    def held_close(fd: int) -> None:
        if threading.current_thread().name == "vaultmem-close":
            gate.wait(10)
        real_close(fd)

    monkeypatch.setattr(durability._Closer, "MAX_PENDING", 5)
    monkeypatch.setattr(durability.os, "close", held_close)

    class CountedQueue(queue.SimpleQueue[list[int] | None]):
        def put(self, item: list[int] | None, *args: Any) -> None:
            puts.append(1)
            super().put(item, *args)

    closer = durability._Closer()
    closer._queue = CountedQueue()
    fds = [_removed_file_fd(tmp_path, f"old {i}.md") for i in range(12)]
    closer.add_many(fds)
    assert len(puts) == 1
    assert sum(_is_open(fd) for fd in fds) == 5  # handed over, the thread held at the first
    assert not any(_is_open(fd) for fd in fds[5:])
    closer.add_many(fds2 := [_removed_file_fd(tmp_path, "late.md")])
    assert not _is_open(fds2[0]) and len(puts) == 1  # no room: closed by the caller
    gate.set()
    closer.settle()
    assert not any(_is_open(fd) for fd in fds) and closer.closed == 5


@pytest.mark.parametrize(("soft", "limit"), [(256, 128), (1024, 512), (1_048_576, 4096)])
def test_the_closer_holds_at_most_4096_or_half_the_open_file_limit(
    monkeypatch: pytest.MonkeyPatch, soft: int, limit: int
) -> None:
    """A big pass hands thousands of old files to the closing thread; never more than half
    of what the process may open, so the pass itself can still open its notes."""
    import resource

    from vaultmem.store import durability

    monkeypatch.setattr(resource, "getrlimit", lambda _which: (soft, resource.RLIM_INFINITY))
    assert durability._Closer().limit == limit
