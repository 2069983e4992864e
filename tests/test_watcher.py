"""The watcher (spec section 5) on real file-system events: after any burst, the index it kept
equals a fresh rebuild. No sleeps: every wait is ``wait_idle`` (or a pipe read) with a timeout."""

from __future__ import annotations

import logging
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import index_rows

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes.content_hash import content_hash
from vaultmem.services.index import watcher as watcher_module
from vaultmem.services.index.index_sync import sync_index
from vaultmem.services.index.sync_types import SyncReport
from vaultmem.services.index.watcher import VaultWatcher
from vaultmem.store.index_db import IndexDB

pytestmark = pytest.mark.filterwarnings(
    # watchdog files one kernel watch under two paths when a folder is moved into a folder it
    # has not walked yet; the watcher re-watches the vault then (see the last test)
    "ignore:Callback with id:RuntimeWarning"
)

IDLE_SECONDS = 30.0
"""Generous: a loaded CI machine must not fail a test by being slow."""

Snapshot = tuple[set[tuple[object, ...]], Counter[tuple[str, str, str, str | None]]]


# ----------------------------------------------------------------------------- helpers
@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    root = tmp_path / "vault"
    for folder in ("STM", "LTM", ".obsidian"):
        (root / folder).mkdir(parents=True)
    (root / "vaultmem.toml").write_text("")
    with Vault.open(root) as opened:
        yield opened


@pytest.fixture
def reports() -> list[SyncReport]:
    return []


@pytest.fixture
def watcher(vault: Vault, reports: list[SyncReport]) -> Iterator[VaultWatcher]:
    with VaultWatcher(vault, on_sync=reports.append) as running:
        yield running


def settle(watcher: VaultWatcher) -> None:
    assert watcher.wait_idle(IDLE_SECONDS), f"the watcher did not catch up in {IDLE_SECONDS} s"


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def snapshot(db: IndexDB) -> Snapshot:
    """Every note's (path, id, hash, title, type, status, tags, problems) and every link."""
    notes = set(
        db.conn.execute("SELECT path, id, hash, title, type, status, tags, problems FROM notes")
    )
    links = Counter((r.source, r.target, r.kind, r.resolved) for r in db.all_links())
    return notes, links


def rebuilt(vault: Vault, sidecar: Path) -> Snapshot:
    """The index a from-scratch rebuild gives, in a sidecar of its own."""
    db = IndexDB.open(sidecar)
    try:
        sync_index(vault.root, db, vault.settings, rebuild=True)
        return snapshot(db)
    finally:
        db.close()


def assert_matches_rebuild(vault: Vault, tmp_path: Path) -> None:
    live_notes, live_links = snapshot(vault.index)
    fresh_notes, fresh_links = rebuilt(vault, tmp_path / "rebuild-sidecar")
    live_rows = index_rows(vault.index.conn)
    db = IndexDB.open(tmp_path / "rebuild-sidecar")
    try:
        fresh_rows = index_rows(db.conn)
    finally:
        db.close()
    assert live_notes == fresh_notes, (
        f"notes differ from a rebuild: only live {sorted(live_notes - fresh_notes, key=str)}; "
        f"only rebuilt {sorted(fresh_notes - live_notes, key=str)}"
    )
    assert live_links == fresh_links, (
        f"links differ from a rebuild: only live {sorted(live_links - fresh_links, key=str)}; "
        f"only rebuilt {sorted(fresh_links - live_links, key=str)}"
    )
    for table, rows in live_rows.items():  # every column too (dates, counts, stamps, FTS)
        assert rows == fresh_rows[table], f"{table} differs from a rebuild"


def indexed_hash(vault: Vault, rel: str) -> object:
    row = vault.index.note_row(rel)
    return None if row is None else row["hash"]


# ----------------------------------------------------------------------------- files
def test_start_reconciles_what_changed_while_stopped(vault: Vault, tmp_path: Path) -> None:
    write(vault.root, "STM/kept.md", "kept")
    write(vault.root, "STM/edited.md", "before")
    write(vault.root, "STM/gone.md", "gone")
    vault.sync()
    write(vault.root, "STM/edited.md", "after the edit")
    write(vault.root, "LTM/new.md", "new")
    (vault.root / "STM/gone.md").unlink()
    with VaultWatcher(vault) as running:
        report = running._initial
    assert report is not None
    assert (report.added, report.changed, report.removed, report.unchanged) == (1, 1, 1, 1)
    assert indexed_hash(vault, "STM/edited.md") == content_hash(b"after the edit")
    assert_matches_rebuild(vault, tmp_path)


def test_created_modified_deleted_notes(vault: Vault, watcher: VaultWatcher) -> None:
    write(vault.root, "STM/a.md", "first [[b]]")
    settle(watcher)
    assert indexed_hash(vault, "STM/a.md") == content_hash(b"first [[b]]")
    assert [row.resolved for row in vault.index.links_from("STM/a.md")] == [None]
    write(vault.root, "LTM/b.md", "the target")
    write(vault.root, "STM/a.md", "second [[b]]")
    settle(watcher)
    assert indexed_hash(vault, "STM/a.md") == content_hash(b"second [[b]]")
    assert [row.resolved for row in vault.index.links_from("STM/a.md")] == ["LTM/b.md"]
    (vault.root / "LTM/b.md").unlink()
    settle(watcher)
    assert vault.index.note_row("LTM/b.md") is None
    assert [row.resolved for row in vault.index.links_from("STM/a.md")] == [None]


def test_renamed_and_moved_notes_keep_their_rows(
    vault: Vault, watcher: VaultWatcher, reports: list[SyncReport], tmp_path: Path
) -> None:
    write(vault.root, "STM/note.md", "---\nid: 01ABC\n---\nbody")
    write(vault.root, "STM/linker.md", "see [[note]] and [[renamed]]")
    settle(watcher)
    row = vault.index.note_row("STM/note.md")
    assert row is not None
    reports.clear()
    os.rename(vault.root / "STM/note.md", vault.root / "STM/renamed.md")
    settle(watcher)
    os.rename(vault.root / "STM/renamed.md", vault.root / "LTM/renamed.md")
    settle(watcher)
    moved = vault.index.note_row("LTM/renamed.md")
    assert moved is not None and moved["nid"] == row["nid"] and moved["id"] == "01ABC"
    assert sum(r.moved for r in reports) == 2 and sum(r.added for r in reports) == 0
    assert [r.resolved for r in vault.index.links_from("STM/linker.md")] == [None, "LTM/renamed.md"]
    assert_matches_rebuild(vault, tmp_path)


def test_whole_folders_created_moved_and_deleted(
    vault: Vault, watcher: VaultWatcher, tmp_path: Path
) -> None:
    for i in range(5):
        write(vault.root, f"Projects/deep/n{i}.md", f"note {i} [[n{(i + 1) % 5}]]")
    settle(watcher)
    assert len(vault.index.file_states(under=["Projects"])) == 5
    os.rename(vault.root / "Projects", vault.root / "LTM/Projects")
    settle(watcher)
    assert vault.index.file_states(under=["Projects"]) == {}
    assert len(vault.index.file_states(under=["LTM/Projects"])) == 5
    assert_matches_rebuild(vault, tmp_path)
    os.rename(vault.root / "LTM/Projects", tmp_path / "moved-out")  # only a folder event says so
    settle(watcher)
    assert vault.index.all_paths() == []
    os.rename(tmp_path / "moved-out", vault.root / "Imported")  # moved in: a "created" folder
    settle(watcher)
    assert len(vault.index.file_states(under=["Imported"])) == 5
    os.rename(vault.root / "Imported", vault.root / ".trash")  # Obsidian's "move to trash"
    write(vault.root, "Doomed/a.md", "a")
    shutil.rmtree(vault.root / "Doomed")
    settle(watcher)
    assert vault.index.all_paths() == []


@pytest.mark.parametrize("temp_name", [".note.md.swp", ".note.md.4f2a.vaultmem-tmp", "note.md~"])
def test_saves_through_a_temp_file_and_a_rename(
    vault: Vault, watcher: VaultWatcher, temp_name: str, tmp_path: Path
) -> None:
    write(vault.root, "STM/note.md", "version 1")
    settle(watcher)
    for version in range(2, 6):
        write(vault.root, f"STM/{temp_name}", f"version {version}")
        os.replace(vault.root / f"STM/{temp_name}", vault.root / "STM/note.md")
    settle(watcher)
    assert indexed_hash(vault, "STM/note.md") == content_hash(b"version 5")
    # vim's backup style: the note is renamed away, then written anew
    os.rename(vault.root / "STM/note.md", vault.root / "STM/note.md~")
    write(vault.root, "STM/note.md", "version 6")
    (vault.root / "STM/note.md~").unlink()
    settle(watcher)
    assert indexed_hash(vault, "STM/note.md") == content_hash(b"version 6")
    assert vault.index.all_paths() == ["STM/note.md"]
    assert_matches_rebuild(vault, tmp_path)


def test_ignored_paths_are_never_indexed(
    vault: Vault, watcher: VaultWatcher, reports: list[SyncReport]
) -> None:
    for rel in (
        ".obsidian/x.md",
        "notes.txt",
        ".trash/old.md",
        "STM/.hidden.md",
        ".git/HEAD.md",
        "STM/image.png",
        ".vaultmem/fake.md",
    ):
        write(vault.root, rel, "ignored")
    write(vault.root, "STM/real.md", "indexed")
    os.rename(vault.root / "notes.txt", vault.root / "STM/notes.txt.bak")
    settle(watcher)
    assert vault.index.all_paths() == ["STM/real.md"]
    touched = {path for report in reports for path in report.touched_paths}
    assert touched == {"STM/real.md"}


def test_vaultmems_own_writes_resync_idempotently(
    vault: Vault, watcher: VaultWatcher, tmp_path: Path
) -> None:
    memories = [vault.remember(f"Memory {i} about editors", tags=["ui"]) for i in range(5)]
    settle(watcher)
    assert sorted(vault.index.all_paths()) == sorted(m.path for m in memories)
    assert_matches_rebuild(vault, tmp_path)


# ----------------------------------------------------------------------------- robustness
def test_stop_flushes_the_pending_batch(vault: Vault) -> None:
    running = VaultWatcher(vault, debounce_seconds=60.0, max_delay_seconds=60.0)
    running.start()
    try:
        write(vault.root, "STM/late.md", "saved just before stopping")
        assert not running.wait_idle(0.5), "a 60 s debounce cannot have synced the note yet"
    finally:
        running.stop()
    assert not running.running
    assert indexed_hash(vault, "STM/late.md") == content_hash(b"saved just before stopping")


def test_a_failing_batch_falls_back_to_a_full_sync(
    vault: Vault,
    watcher: VaultWatcher,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(*args: object) -> SyncReport:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(watcher_module, "sync_paths", broken)
    with caplog.at_level(logging.ERROR, logger="vaultmem.services.index.watcher"):
        write(vault.root, "STM/a.md", "still indexed")
        settle(watcher)
    assert indexed_hash(vault, "STM/a.md") == content_hash(b"still indexed")
    assert "running a full sync" in caplog.text and "disk on fire" in caplog.text


def test_an_event_queue_overflow_triggers_a_full_sync(
    vault: Vault, watcher: VaultWatcher, reports: list[SyncReport]
) -> None:
    for i in range(4):
        write(vault.root, f"STM/n{i}.md", f"note {i}")
    settle(watcher)
    reports.clear()
    # what watchdog's inotify reader logs when the kernel dropped events
    logging.getLogger("watchdog.observers.inotify_c").warning(
        "Inotify queue overflowed; filesystem events were lost"
    )
    settle(watcher)
    assert [r.unchanged for r in reports] == [4], "a full sync looks at every note"


def test_an_observer_that_delivers_nothing_is_restarted_and_the_vault_synced(
    vault: Vault, watcher: VaultWatcher
) -> None:
    """An observer whose threads run but whose watches are gone hears nothing: the probe fence
    it never sees makes the worker stop the heartbeat, restart it and sync the whole vault."""
    from vaultmem.services.index.live_index import index_is_live

    observer = watcher._observer
    assert observer is not None
    observer.unschedule_all()  # alive, no emitters: deaf, and no thread died
    write(vault.root, "STM/Unheard.md", "said while nobody listened")
    deadline = time.monotonic() + 20
    while indexed_hash(vault, "STM/Unheard.md") is None:
        assert time.monotonic() < deadline, "a deaf observer was never noticed"
        time.sleep(0.1)
    assert watcher._observer is not observer  # replaced
    write(vault.root, "STM/Heard.md", "said after the restart")
    settle(watcher)
    assert indexed_hash(vault, "STM/Heard.md") is not None
    deadline = time.monotonic() + 10
    while not index_is_live(vault.sidecar):
        assert time.monotonic() < deadline, "the heartbeat did not come back"
        time.sleep(0.1)


def test_a_wait_for_idle_outlives_an_observer_restarted_under_it(
    vault: Vault, watcher: VaultWatcher
) -> None:
    """A fence written while the observer is deaf is never reported by it; the observer that
    replaces it is told about the fences still awaited, so ``wait_idle`` returns (True) at once
    instead of timing out, and the vault's changes are in the index by then."""
    observer = watcher._observer
    assert observer is not None
    observer.unschedule_all()  # deaf: the fence below goes unheard
    write(vault.root, "STM/During.md", "written while nobody listened")
    started = time.monotonic()
    assert watcher.wait_idle(IDLE_SECONDS), "the fence was lost with the old observer"
    assert watcher._observer is not observer
    assert time.monotonic() - started < IDLE_SECONDS / 2
    assert indexed_hash(vault, "STM/During.md") is not None


# ----------------------------------------------------------------------------- parity
def _random_text(rng: random.Random, names: list[str]) -> str:
    head = ""
    if rng.random() < 0.5:
        head = (
            f"---\nid: {rng.randrange(10**9):09d}\ntype: {rng.choice(['memory', 'note'])}\n"
            f"status: {rng.choice(['active', 'archived'])}\ntags: [t{rng.randrange(5)}]\n---\n"
        )
    links = " ".join(
        rng.choice(["[[{}]]", "![[{}]]", "[[../{}|x]]", "[[STM/{}#h]]"]).format(rng.choice(names))
        for _ in range(rng.randrange(4))
    )
    return f"{head}words {rng.random():.6f} {links}\n"


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _parent(rel: str) -> str:
    return rel.rpartition("/")[0]


KINDS = "create modify save_by_rename touch delete rename move copy mkdir move_folder rmtree noise"
KINDS_WEIGHTS = (KINDS.split(), [20, 15, 10, 3, 8, 10, 10, 4, 3, 4, 1, 3])


def random_burst(root: Path, rng: random.Random, operations: int) -> Counter[str]:
    """``operations`` random edits as fast as possible; returns how often each kind ran."""
    names = [f"n{i}" for i in range(25)] + ["Alpha", "alpha", "Beta"]
    notes = {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    }
    folders = {_parent(n) for n in notes} | {"", "STM", "LTM"}
    done: Counter[str] = Counter()
    for _ in range(operations):
        kind = rng.choices(*KINDS_WEIGHTS)[0]
        existing = sorted(notes)
        note = rng.choice(existing) if existing else None
        folder = rng.choice(sorted(folders))
        target = _join(folder, rng.choice(names) + ".md")
        if kind in ("create", "copy") or note is None:
            if (root / target).exists():
                continue
            copied = kind == "copy" and note is not None
            text = (root / str(note)).read_text() if copied else _random_text(rng, names)
            write(root, target, text)
            notes.add(target)
        elif kind in ("modify", "save_by_rename"):
            text = _random_text(rng, names)
            if kind == "modify":
                write(root, note, text)
            else:
                temp = root / _join(_parent(note), f".{Path(note).name}.swp")
                temp.write_text(text)
                os.replace(temp, root / note)
        elif kind == "touch":
            os.utime(root / note)
        elif kind == "delete":
            (root / note).unlink()
            notes.discard(note)
        elif kind in ("rename", "move"):
            if kind == "rename":
                target = _join(_parent(note), rng.choice(names) + ".md")
            if (root / target).exists():
                continue
            os.rename(root / note, root / target)
            notes.discard(note)
            notes.add(target)
        elif kind == "mkdir":
            new = _join(folder, f"F{rng.randrange(1000)}")
            for name in rng.sample(names, 3):
                write(root, f"{new}/{name}.md", _random_text(rng, names))
                notes.add(f"{new}/{name}.md")
            folders.add(new)
        elif kind in ("move_folder", "rmtree"):
            movable = sorted(f for f in folders if f not in ("", "STM", "LTM"))
            if not movable:
                continue
            source = rng.choice(movable)
            dest = f"{rng.choice(['STM', 'LTM'])}/M{rng.randrange(1000)}"
            if kind == "rmtree":
                shutil.rmtree(root / source)
            elif (root / dest).exists():
                continue
            else:
                (root / dest).parent.mkdir(parents=True, exist_ok=True)
                os.rename(root / source, root / dest)
            inside = {n for n in notes if n.startswith(source + "/")}
            notes -= inside
            folders = {f for f in folders if f != source and not f.startswith(source + "/")}
            if kind == "move_folder":
                notes |= {dest + n[len(source) :] for n in inside}
                folders |= {dest + f[len(source) :] for f in {_parent(n) for n in inside}}
                folders.add(dest)
        elif kind == "noise":
            write(
                root,
                rng.choice([".obsidian/workspace.json", "STM/notes.txt", ".trash/x.md"]),
                f"{rng.random()}",
            )
        done[kind] += 1
    return done


def test_a_random_burst_leaves_the_index_equal_to_a_rebuild(
    vault: Vault, watcher: VaultWatcher, tmp_path: Path
) -> None:
    done = random_burst(vault.root, random.Random(20261120), 600)
    assert sum(done.values()) > 400 and len(done) >= 10
    settle(watcher)
    assert len(vault.index.all_paths()) > 20
    assert_matches_rebuild(vault, tmp_path)
    assert not vault.sync().any_change, "a full sync after the watcher should find nothing to do"


def test_a_random_burst_on_the_13th_age_srd_vault(
    copy_vault: Callable[[str], Path], tmp_path: Path
) -> None:
    with Vault.open(copy_vault("13th-age-srd")) as srd, VaultWatcher(srd) as running:
        assert len(srd.index.all_paths()) > 900
        random_burst(srd.root, random.Random(13), 400)
        settle(running)
        assert_matches_rebuild(srd, tmp_path)
        assert not srd.sync().any_change, "a full sync after the watcher should find nothing to do"


# ----------------------------------------------------------------------------- other modules' bugs
def test_a_folder_matching_an_exclude_pattern_stays_out_of_the_index(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "vaultmem.toml", '[index]\nexclude = ["Private/*"]\n')
    with Vault.open(root) as excluding, VaultWatcher(excluding) as running:
        write(root, "Private/secret.md", "not for the index")
        write(root, "Public/open.md", "indexed")
        settle(running)
        assert excluding.index.all_paths() == ["Public/open.md"], (
            "BUG in index_sync.sync_paths: a folder path is expanded with scan_vault(root / rel), "
            "which matches [index] exclude patterns against paths relative to that folder "
            "('secret.md'), not the vault ('Private/secret.md')"
        )


def test_a_note_renamed_to_a_conflict_copy_is_flagged_like_a_rebuild(
    vault: Vault, watcher: VaultWatcher, tmp_path: Path
) -> None:
    write(vault.root, "STM/plan.md", "the plan")
    settle(watcher)
    os.rename(vault.root / "STM/plan.md", vault.root / "STM/plan (Conflicted copy laptop 1).md")
    settle(watcher)
    row = vault.index.note_row("STM/plan (Conflicted copy laptop 1).md")
    assert row is not None and "sync conflict copy" in str(row["problems"]), (
        "BUG in index_sync._Syncer.apply: a move found by content hash keeps the rows parsed at "
        "the old path (db.move), so path-dependent results — the 'sync conflict copy' problem, "
        "the Templates-folder type override — are not recomputed as a rebuild would"
    )


# ----------------------------------------------------------------------------- CLI
def test_watch_help_explains_the_command() -> None:
    # through the group, as a user runs it: invoked alone, click caches the command's help
    # option without the group's "-h", and docs/cli.md made later in the run lacked it
    result = CliRunner().invoke(main, ["watch", "-h"])
    assert result.exit_code == 0
    for words in ("Ctrl-C", "--debounce", "SECONDS", "--verbose", "--vault", "temp file"):
        assert words in result.output


def _read_until(process: subprocess.Popen[bytes], needle: str, seconds: float = 30.0) -> str:
    """Stdout of ``process`` until it holds ``needle``: unbuffered reads of the pipe, bounded."""
    assert process.stdout is not None
    fd = process.stdout.fileno()
    seen = b""
    deadline = time.monotonic() + seconds
    while needle.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {needle!r} within {seconds} s in {seen.decode()!r}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"stdout closed (exit {process.wait()}) before {needle!r}: {seen!r}"
            seen += chunk
    return seen.decode()


@pytest.mark.parametrize(("signum", "flag"), [(signal.SIGINT, "-v"), (signal.SIGTERM, "--json")])
def test_watch_stops_cleanly_on_a_signal(vault: Vault, signum: int, flag: str) -> None:
    write(vault.root, "STM/before.md", "before")
    command = "from vaultmem.cli.watch_command import watch; watch(prog_name='vaultmem watch')"
    process = subprocess.Popen(
        [sys.executable, "-c", command, "--vault", str(vault.root), flag],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        started = _read_until(process, "initial sync" if flag == "-v" else '"event": "start"')
        write(vault.root, "STM/during.md", "during")
        batch = _read_until(process, "STM/during.md")
        process.send_signal(signum)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err.decode()
    assert "watching" in started or '"event": "start"' in started
    assert "1 added" in started or '"added": 1' in started
    assert "1 added" in batch or '"added": 1' in batch
    assert "stopped" in out.decode()
    assert indexed_hash(vault, "STM/during.md") == content_hash(b"during")


def test_ctrl_c_during_a_stuck_first_sync_still_ends_start(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first sync that cannot make progress (here: blocked for good, as behind a lock another
    process holds) must not make Ctrl-C hang: start() gives it a bounded wait, then raises."""
    import threading

    blocked = threading.Event()
    never = threading.Event()

    def stuck_sync(*args: object, **kwargs: object) -> SyncReport:
        blocked.set()
        never.wait(60)
        raise RuntimeError("released")

    monkeypatch.setattr(watcher_module, "sync_index", stuck_sync)
    monkeypatch.setattr(watcher_module, "STOP_DURING_START_SECONDS", 0.5)
    main = threading.main_thread().ident
    assert main is not None and threading.current_thread().ident == main

    def interrupt() -> None:
        blocked.wait(10)
        time.sleep(0.1)
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    started = time.monotonic()
    watcher = VaultWatcher(vault)
    with pytest.raises(KeyboardInterrupt):
        watcher.start()
    assert time.monotonic() - started < 10
    never.set()  # let the abandoned worker finish


def test_ctrl_c_anywhere_in_join_leaves_stop_able_to_finish(vault: Vault) -> None:
    """Ctrl-C raises ``KeyboardInterrupt`` at whatever instruction the main thread is on. A
    profile hook raises it as each C call inside ``join()`` returns, one place per round, until
    a round's join ends untouched; each time, ``stop()`` must still end the worker.

    ``Event.wait`` failed this: interrupted just after taking its internal lock, it left the lock
    held, the worker then blocked for good setting the event, and ``watch`` hung on Ctrl-C."""
    import threading

    place = 0
    while True:
        watcher = VaultWatcher(vault)
        watcher.start()
        returns = 0

        def hook(frame: object, event: str, arg: object, strike: int = place + 1) -> None:
            nonlocal returns
            if event == "c_return":
                returns += 1
                if returns == strike:
                    sys.setprofile(None)
                    raise KeyboardInterrupt

        interrupted = False
        sys.setprofile(hook)
        try:
            watcher.join(timeout=0.02)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            sys.setprofile(None)
        stopper = threading.Thread(target=watcher.stop, daemon=True)
        stopper.start()
        stopper.join(IDLE_SECONDS)
        assert not stopper.is_alive(), f"stop() hung after Ctrl-C at C call {place} of join()"
        assert not watcher.running
        if not interrupted:
            break
        place += 1
    assert place >= 3, f"join() made only {place} C calls: the hook reached too little of it"


@pytest.mark.parametrize("fresh", ["Fresh{n}", "Fresh{n}/inside"])
def test_a_folder_moved_into_a_folder_just_created_stays_watched(
    vault: Vault, watcher: VaultWatcher, tmp_path: Path, fresh: str
) -> None:
    """``mkdir -p new && mv old new/``: watchdog walks the new folder when its creation event
    arrives, finds the moved folder already inside, and files that folder's watch under both
    paths; the move then drops the kernel's watch through the stale entry (the CI failure of
    the random burst on the SRD vault). The watcher re-watches the vault instead of going
    deaf to the moved folder."""
    for n in range(5):
        write(vault.root, f"Projects{n}/old.md", "old")
        settle(watcher)
        folder = fresh.format(n=n)
        (vault.root / folder).mkdir(parents=True)
        os.rename(vault.root / f"Projects{n}", vault.root / folder / f"Projects{n}")
        settle(watcher)
        write(vault.root, f"{folder}/Projects{n}/later.md", "written later")
        settle(watcher)
        assert vault.index.note_row(f"{folder}/Projects{n}/later.md"), f"round {n}"
    assert_matches_rebuild(vault, tmp_path)
