"""The sidecar index: incremental sync, moves, removals, rebuilds, and the real vaults."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import index_content

from vaultmem import Vault
from vaultmem.services.index import index_reads, index_stamps, index_sync
from vaultmem.store import index_load, index_queries
from vaultmem.store.index_db import PAGE_SIZE, IndexDB


def _vault(tmp_path: Path) -> Vault:
    root = tmp_path / "v"
    (root / "STM").mkdir(parents=True)
    (root / "vaultmem.toml").write_text("")
    return Vault.open(root)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    real = index_sync._read

    def counting(root: Path, rel: str) -> index_sync.NoteRead | None:
        reads.append(rel)
        return real(root, rel)

    monkeypatch.setattr(index_sync, "_read", counting)
    return reads


def _age(path: Path, seconds: float = 60.0) -> None:
    """Set the file's mtime ``seconds`` in the past: read long after its last write, it is not
    racily clean (see index_stamps.RACY_NS)."""
    past = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(past, past))


def test_unchanged_notes_are_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path)
    for i in range(5):
        _write(vault.root, f"n{i}.md", f"note {i}")
        _age(vault.root / f"n{i}.md")
    first = vault.sync()
    assert first.added == 5
    reads = _count_reads(monkeypatch)
    second = vault.sync()
    assert (second.added, second.changed, second.unchanged) == (0, 0, 5)
    assert reads == []
    _write(vault.root, "n1.md", "note one, edited")
    third = vault.sync()
    assert third.changed == 1 and reads == ["n1.md"]


def test_touched_file_with_same_bytes_is_read_but_not_reparsed(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "a.md", "same")
    vault.sync()
    os.utime(vault.root / "a.md", ns=(1, 1))
    report = vault.sync()
    assert (report.changed, report.unchanged) == (0, 1)
    assert vault.index.file_states()["a.md"].mtime_ns == 1


def test_move_keeps_rows_and_links_follow(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "STM/Target.md", "---\nid: t1\ntype: memory\n---\nbody")
    _write(vault.root, "Linker.md", "see [[Target]]")
    vault.sync()
    nid = vault.index.file_states()["STM/Target.md"].nid
    (vault.root / "LTM").mkdir()
    os.rename(vault.root / "STM/Target.md", vault.root / "LTM/Target.md")
    report = vault.sync()
    assert (report.moved, report.added, report.removed) == (1, 0, 0)
    assert vault.index.file_states()["LTM/Target.md"].nid == nid
    assert [r.resolved for r in vault.index.links_from("Linker.md")] == ["LTM/Target.md"]


def test_move_with_edit_is_matched_by_id(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "STM/M.md", "---\nid: m1\ntype: memory\n---\nbody")
    vault.sync()
    nid = vault.index.file_states()["STM/M.md"].nid
    os.remove(vault.root / "STM/M.md")
    _write(vault.root, "Archive/M.md", "---\nid: m1\ntype: memory\nstatus: archived\n---\nbody")
    report = vault.sync()
    assert report.moved == 1
    assert vault.index.file_states()["Archive/M.md"].nid == nid
    assert vault.index.note_row("Archive/M.md")["status"] == "archived"  # type: ignore[index]


def test_vanished_note_is_removed_and_links_become_unresolved(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "A.md", "[[B]]")
    _write(vault.root, "B.md", "b")
    vault.sync()
    assert vault.index.links_from("A.md")[0].resolved == "B.md"
    os.remove(vault.root / "B.md")
    assert vault.sync().removed == 1
    assert vault.index.links_from("A.md")[0].resolved is None
    _write(vault.root, "sub/B.md", "b again")
    vault.sync()
    assert vault.index.links_from("A.md")[0].resolved == "sub/B.md"


def test_second_stat_keeps_a_note_that_reappears(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "flaky.md", "x")
    vault.sync()
    real_scan = index_sync.scan_vault
    monkeypatch.setattr(  # the walk misses it (e.g. mid-rename by an editor)…
        index_sync,
        "scan_vault",
        lambda root, settings, **kw: {
            k: v for k, v in real_scan(root, settings, **kw).items() if k != "flaky.md"
        },
    )
    report = vault.sync()  # …but the second stat sees it: not removed
    assert report.removed == 0
    assert "flaky.md" in vault.index.file_states()


def test_ignored_paths_are_not_indexed(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, ".obsidian/x.md", "x")
    _write(vault.root, ".trash/y.md", "y")
    _write(vault.root, "notes.txt", "z")
    _write(vault.root, "real.md", "r")
    vault.sync()
    assert vault.index.all_paths() == ["real.md"]


def test_exclude_patterns_from_settings(tmp_path: Path) -> None:
    root = tmp_path / "v"
    _write(root, "vaultmem.toml", '[index]\nexclude = ["Private/*"]\n')
    _write(root, "Private/secret.md", "s")
    _write(root, "open.md", "o")
    with Vault.open(root) as vault:
        vault.sync()
        assert vault.index.all_paths() == ["open.md"]


@pytest.mark.parametrize("damage", ["delete", "corrupt"])
def test_lost_or_corrupt_index_is_rebuilt_without_loss(tmp_path: Path, damage: str) -> None:
    vault = _vault(tmp_path)
    memory = vault.remember("something to keep", tags=["x"])
    _write(vault.root, "Other.md", f"[[{memory.title}]]")
    vault.sync()
    before = sorted(vault.index.all_paths())
    vault.close()
    db = vault.sidecar / "index.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    if damage == "corrupt":
        db.write_bytes(b"this is not a database" * 100)
    with Vault.open(vault.root) as again:
        report = again.sync()
        assert report.rebuilt
        assert sorted(again.index.all_paths()) == before
        assert again.memory(memory.fields.id or "").fields.tags == ("x",)
        assert again.index.links_into(memory.path)[0].source == "Other.md"


def test_indexing_never_writes_notes(copy_vault: Callable[[str], Path]) -> None:
    root = copy_vault("13th-age-srd")
    for path in root.rglob("*.md"):
        path.chmod(0o444)
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*.md")}
    with Vault.open(root) as vault:
        report = vault.sync()
        assert report.added == len(before)
        assert vault.sync(rebuild=True).added == len(before)
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*.md")} == before


def test_fts_finds_words_of_real_notes(copy_vault: Callable[[str], Path]) -> None:
    root = copy_vault("13th-age-srd")
    with Vault.open(root) as vault:
        vault.sync()
        rows = vault.index.conn.execute(
            "SELECT n.path FROM notes_fts f JOIN notes n ON n.nid = f.rowid "
            "WHERE notes_fts MATCH 'fireball' ORDER BY rank LIMIT 5"
        ).fetchall()
    assert rows and any("Fireball" in r[0] or "Wizard" in r[0] for r in rows)


def _edge_counts(vault: Vault) -> dict[str, int]:
    return dict(vault.index.conn.execute("SELECT path, edges FROM notes").fetchall())


@pytest.mark.parametrize("seed", [5, 11, 23])
def test_edge_counts_stay_equal_to_a_full_recount(tmp_path: Path, seed: int) -> None:
    """Only the notes whose distinct neighbours change are recounted after each sync (a note,
    and the notes it stopped or started linking to); every count still equals a full recount,
    after every sync of random edits, moves, deletions and self-links."""
    import random

    vault = _vault(tmp_path)
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(30)]
    for name in names:
        _write(vault.root, f"{name}.md", " ".join(f"[[{t}]]" for t in rng.sample(names, 3)))
    vault.sync()
    for step in range(90):
        name = rng.choice(names)
        action = rng.random()
        path = vault.root / f"{name}.md"
        if action < 0.4:
            _write(vault.root, f"{name}.md", " ".join(f"[[{t}]]" for t in rng.sample(names, 2)))
        elif action < 0.6 and path.exists():
            path.unlink()
        elif action < 0.8 and path.exists():
            (vault.root / "sub").mkdir(exist_ok=True)
            os.rename(path, vault.root / "sub" / f"{name}.md")
        else:
            _write(vault.root, f"{name}.md", f"[[{rng.choice(names)}]] and [[{name}]]")
        if step % 3 == 0:
            vault.sync()
            incremental = _edge_counts(vault)
            vault.index.recount_edges()
            assert _edge_counts(vault) == incremental, f"step {step}"
    vault.sync()
    incremental = _edge_counts(vault)
    vault.index.recount_edges()
    full = _edge_counts(vault)
    assert incremental == full
    assert any(full.values())
    for path in list(full)[:10]:  # and both equal the definition: distinct linked notes
        outgoing = {
            r.resolved for r in vault.index.links_from(path) if r.resolved not in (None, path)
        }
        incoming = {r.source for r in vault.index.links_into(path) if r.source != path}
        assert full[path] == len(outgoing | incoming)


def test_links_after_a_pass_equal_a_rebuild(tmp_path: Path) -> None:
    # regression: links re-resolved after a sync must not be matched to rows re-inserted under
    # freed row ids (a box note's member links once pointed at the wrong members)
    import datetime as dt

    vault, _ = Vault.init(tmp_path / "v")
    t0 = dt.datetime(2026, 9, 1, 8, tzinfo=dt.UTC)
    for i in range(6):
        vault.remember(
            f"note {i} see [[sim {i - 1}]]",
            title=f"sim {i}",
            tags=["a"],
            link=False,
            now=t0 + dt.timedelta(minutes=i),
        )
    vault.lifecycle(now=t0 + dt.timedelta(days=1))
    vault.sync()
    incremental = sorted((r.source, r.target, r.resolved) for r in vault.index.all_links())
    edges = dict(vault.index.conn.execute("SELECT path, edges FROM notes").fetchall())
    vault.sync(rebuild=True)
    assert sorted((r.source, r.target, r.resolved) for r in vault.index.all_links()) == incremental
    assert dict(vault.index.conn.execute("SELECT path, edges FROM notes").fetchall()) == edges
    assert any(
        r.target == "sim 3" and r.resolved and r.resolved.endswith("/sim 3.md")
        for r in vault.index.all_links()
    )


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_worker_processes_index_exactly_what_one_process_does(
    copy_vault: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, start_method: str
) -> None:
    root = copy_vault("13th-age-srd")

    def rows(vault: Vault) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
        notes = vault.index.conn.execute(
            "SELECT path, hash, title, type, tags, problems, edges FROM notes ORDER BY path"
        ).fetchall()
        links = sorted((r.source, r.target, r.kind, r.resolved) for r in vault.index.all_links())
        return notes, links

    with Vault.open(root) as vault:
        monkeypatch.setattr(index_reads, "PARALLEL_MIN_NOTES", 10**9)
        monkeypatch.setattr(index_reads, "SPAWN_MIN_NOTES", 10**9)
        vault.sync(rebuild=True)
        serial = rows(vault)
        monkeypatch.setattr(index_reads, "PARALLEL_MIN_NOTES", 10)
        monkeypatch.setattr(index_reads, "SPAWN_MIN_NOTES", 10)
        monkeypatch.setattr(index_reads, "_start_method", lambda: start_method)
        report = vault.sync(rebuild=True)
        assert report.added == len(serial[0]) > 1000
        assert rows(vault) == serial


def test_an_incremental_sync_with_forked_workers_stores_what_one_process_does(
    copy_vault: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many notes changed in an index that holds them (a git pull, say): a forked worker reads
    and parses them, and the index ends exactly as a cold index of the same notes."""
    from vaultmem.services.index import forked_workers

    root = copy_vault("kepano-obsidian")
    maps: list[int] = []
    real_map = forked_workers.forked_map

    def counting(*args: Any, **kwargs: Any) -> Any:
        maps.append(len(args[1]))
        return real_map(*args, **kwargs)

    with Vault.open(root) as vault:
        vault.sync()
        notes = sorted(root.rglob("*.md"))
        for n, path in enumerate(notes):
            with open(path, "a", encoding="utf-8") as out:
                out.write(f"\nedited {n}, see [[{notes[(n + 1) % len(notes)].stem}]]\n")
        monkeypatch.setattr(index_reads, "PARALLEL_MIN_NOTES", 10)
        monkeypatch.setattr(index_reads, "_start_method", lambda: "fork")
        monkeypatch.setattr(forked_workers, "forked_map", counting)
        report = vault.sync()
        assert report.changed == len(notes) > 100 and maps == [-(-len(notes) // 64)]
        incremental = index_content(vault)
        assert any("edited 7," in str(row) for row in incremental["fts"])
        monkeypatch.setattr(index_reads, "PARALLEL_MIN_NOTES", 10**9)
        vault.sync(rebuild=True)
        assert index_content(vault) == incremental


def test_an_edit_that_removes_a_notes_last_link_drops_its_edge(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "Tea.md", "see [[Coffee]] and ![[Kettle.png]]\n")
    _write(vault.root, "Coffee.md", "a drink\n")
    vault.sync()
    assert {link.target for link in vault.links("Tea").outgoing} == {"Coffee", "Kettle.png"}
    assert [link.source for link in vault.links("Coffee").backlinks] == ["Tea.md"]
    _write(vault.root, "Tea.md", "steep oolong at 90 C\n")  # no link left
    vault.sync()
    assert vault.links("Tea").outgoing == []
    assert vault.links("Coffee").backlinks == []
    fresh = vault.index.conn.execute("SELECT count(*) FROM links").fetchone()[0]
    assert fresh == 0




@pytest.mark.parametrize("name", ["13th-age-srd", "kepano-obsidian"])
def test_bulk_loaded_index_equals_the_incrementally_synced_one(
    copy_vault: Callable[[str], Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """A cold index (bulk load, in worker processes or not) holds exactly the rows an index
    synced note by note holds: every column of every table, links resolved to the same notes."""
    root = copy_vault(name)
    held = tmp_path / "held"
    notes = sorted(p for p in root.rglob("*") if p.is_file() and ".obsidian" not in p.parts)
    keep = next(p for p in notes if p.suffix == ".md")
    for path in notes:  # the vault starts as one note; the rest arrive after the first sync
        if path != keep:
            (held / path.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, held / path.relative_to(root))
    with Vault.open(root) as vault:
        assert vault.sync().added == 1
        for path in notes:
            if path != keep:
                os.replace(held / path.relative_to(root), path)
        report = vault.sync()
        assert report.added == sum(p.suffix == ".md" for p in notes) - 1 > 50
        assert report.unchanged == 1  # the incremental path: the first note was known
        incremental = index_content(vault)
        schema = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
        tables = vault.index.conn.execute(schema).fetchall()
        assert incremental["links"] and incremental["fts"] and incremental["notes"]
        assert any(link[-1] for link in incremental["links"])
        monkeypatch.setattr(index_reads, "PARALLEL_MIN_NOTES", 10**9)
        vault.sync(rebuild=True)
        assert index_content(vault) == incremental
        monkeypatch.setattr(index_reads, "PARALLEL_MIN_NOTES", 10)
        monkeypatch.setattr(index_reads, "SPAWN_MIN_NOTES", 10)
        vault.sync(rebuild=True)
        assert index_content(vault) == incremental
        # the other way of loading: indexes kept for a large vault, dropped for a small one
        small = len(incremental["notes"]) < index_load.SMALL_LOAD_NOTES
        monkeypatch.setattr(index_load, "SMALL_LOAD_NOTES", 0 if small else 10**9)
        vault.sync(rebuild=True)
        assert index_content(vault) == incremental
        assert vault.index.conn.execute(schema).fetchall() == tables  # indexes and FTS as made
        word = str(incremental["fts"][0][1]).split()[0]
        assert vault.index.conn.execute(
            "SELECT count(*) FROM notes_fts WHERE notes_fts MATCH ?", (f'"{word}"',)
        ).fetchone()[0]


@pytest.mark.parametrize(("name", "rebuilt"), [("kepano-obsidian", False), ("13th-age-srd", True)])
def test_only_a_large_load_drops_and_rebuilds_the_secondary_indexes(
    copy_vault: Callable[[str], Path], name: str, rebuilt: bool
) -> None:
    """Below SMALL_LOAD_NOTES notes (kepano-obsidian: 103) the rows go into the indexes as they
    are: dropping and making the secondary indexes again costs more than it saves there."""
    root = copy_vault(name)
    with Vault.open(root) as vault:
        statements: list[str] = []
        vault.index.conn.set_trace_callback(statements.append)
        report = vault.sync(rebuild=True)
        vault.index.conn.set_trace_callback(None)
    assert (report.added >= index_load.SMALL_LOAD_NOTES) == rebuilt
    assert any(s.startswith("DROP INDEX") for s in statements) == rebuilt
    assert any(s.startswith("CREATE INDEX") for s in statements) == rebuilt
    assert any("'hashsize'" in s for s in statements) == rebuilt


def test_a_new_index_has_large_pages_and_an_old_one_keeps_its_own(tmp_path: Path) -> None:
    """New index files get PAGE_SIZE pages (fewer pages to write, checkpoint and index in a cold
    index); a file made with SQLite's default 4096 keeps them and works as before."""
    vault = _vault(tmp_path)
    _write(vault.root, "Tea.md", "steep green tea, see [[Coffee]]\n")
    assert vault.sync(rebuild=True).added == 1
    assert vault.index.conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE == 8192
    vault.close()

    old = tmp_path / "old" / ".vaultmem"
    old.mkdir(parents=True)
    conn = sqlite3.connect(old / "index.db")
    conn.execute("PRAGMA journal_mode=WAL")  # made by an earlier vaultmem: 4096-byte pages
    conn.close()
    db = IndexDB.open(old)
    try:
        assert db.conn.execute("PRAGMA page_size").fetchone()[0] == 4096
        assert db.conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 0
    finally:
        db.close()


def test_a_note_that_vanishes_during_a_bulk_load_is_left_out_and_unlinked(
    copy_vault: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_vault("13th-age-srd")
    with Vault.open(root) as vault:
        vault.sync()
        linked = vault.index.conn.execute(
            "SELECT resolved FROM links WHERE resolved LIKE '%.md' "
            "GROUP BY resolved ORDER BY count(*) DESC LIMIT 1"
        ).fetchone()[0]
        real = index_sync._read

        def vanishing(vault_root: Path, rel: str) -> index_sync.NoteRead | None:
            return None if rel == linked else real(vault_root, rel)

        monkeypatch.setattr(index_sync, "_read", vanishing)
        report = vault.sync(rebuild=True)
        assert vault.index.note_row(linked) is None
        during = index_content(vault)
        monkeypatch.setattr(index_sync, "_read", real)
        (root / linked).unlink()
        vault.sync(rebuild=True)
        after = index_content(vault)
    assert report.added == len(during["notes"]) == len(after["notes"])
    assert during == after
    assert not any(link[-1] == linked or link[-2] == linked for link in during["links"])


def test_planning_reads_the_partial_indexes_of_a_bulk_built_index(
    copy_vault: Callable[[str], Path],
) -> None:
    """The per-pass lookups of notes left alone and of superseded notes read the few rows of
    their partial indexes, not every memory — also in an index built in bulk."""
    import datetime as dt

    from vaultmem.services.lifecycle.lifecycle import plan_pass

    root = copy_vault("13th-age-srd")
    with Vault.open(root) as vault:
        vault.sync(rebuild=True)
        seen: list[str] = []
        vault.index.conn.set_trace_callback(seen.append)
        for name in ("promote", "expire", "forget", "prune"):
            plan_pass(vault, name, dt.datetime(2026, 11, 20, tzinfo=dt.UTC))
        vault.index.conn.set_trace_callback(None)
        plans = {
            sql: " ".join(
                str(row[-1])
                for row in vault.index.conn.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
            )
            for sql in seen
            if "problems != '[]'" in sql or "status = 'superseded'" in sql
        }
    assert any("notes_hands_off" in plan for plan in plans.values()), plans
    assert any("notes_superseded" in plan for plan in plans.values()), plans
    assert all("notes_hands_off" in p or "notes_superseded" in p for p in plans.values()), plans


@pytest.mark.parametrize("small_load_notes", [index_load.SMALL_LOAD_NOTES, 0])
def test_a_rebuild_that_fails_midway_leaves_the_previous_index_whole(
    copy_vault: Callable[[str], Path], monkeypatch: pytest.MonkeyPatch, small_load_notes: int
) -> None:
    """The bulk load drops the FTS table and (from SMALL_LOAD_NOTES notes) the secondary
    indexes inside its transaction: a rebuild that dies half-way rolls all of it back."""
    monkeypatch.setattr(index_load, "SMALL_LOAD_NOTES", small_load_notes)
    root = copy_vault("kepano-obsidian")
    with Vault.open(root) as vault:
        vault.sync()
        before = index_content(vault)
        schema = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
        tables = vault.index.conn.execute(schema).fetchall()
        real = index_sync._read
        reads: list[str] = []

        def failing(vault_root: Path, rel: str) -> index_sync.NoteRead | None:
            reads.append(rel)
            if len(reads) == 50:
                raise RuntimeError("killed half-way")
            return real(vault_root, rel)

        monkeypatch.setattr(index_sync, "_read", failing)
        with pytest.raises(RuntimeError, match="half-way"):
            vault.sync(rebuild=True)
        assert len(reads) == 50
        assert vault.index.conn.execute(schema).fetchall() == tables
        assert index_content(vault) == before
        monkeypatch.setattr(index_sync, "_read", real)
        assert not vault.sync().any_change


def test_a_note_rewritten_in_place_while_read_is_never_filed_under_its_new_mtime(
    tmp_path: Path,
) -> None:
    """An editor writing in place races the reader. Whenever the size and mtime the index would
    keep are the note's current ones, the bytes kept must be its current bytes; otherwise the
    next sync would never read the edit."""
    import threading
    import time

    from vaultmem.core.notes.content_hash import content_hash

    root = tmp_path / "v"
    root.mkdir()
    path = root / "n.md"
    path.write_bytes(b"a" * 400_000)
    stop = threading.Event()

    base = os.stat(path).st_mtime_ns

    def rewrite() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            with open(path, "r+b") as handle:  # in place: same inode, new bytes and mtime
                handle.write(bytes([97 + n % 26]) * 400_000)
            # each version gets an mtime of its own once written (the kernel's clock ticks more
            # coarsely than writes land; a read overlapping the write itself is not this test's)
            os.utime(path, ns=(base, base + n * 1_000_000))
            time.sleep(0.001)

    writer = threading.Thread(target=rewrite)
    writer.start()
    stale = checked = 0
    try:
        for _ in range(1500):
            read = index_sync._read(root, "n.md")
            assert read is not None
            before = os.stat(path)
            data = path.read_bytes()
            after = os.stat(path)
            if before.st_mtime_ns != after.st_mtime_ns or (after.st_mtime_ns - base) % 1_000_000:
                continue  # no quiet moment, or a write still in progress, to compare against
            if (read.size, read.mtime_ns) == (after.st_size, after.st_mtime_ns):
                checked += 1
                stale += read.hash != content_hash(data)
    finally:
        stop.set()
        writer.join()
    assert checked > 0 and stale == 0


def test_a_note_that_grows_between_its_stat_and_its_read_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read takes one byte more than the stat said: bytes appended after the stat show, and
    the note is read again with a new stat (its new size, never the old size with new bytes)."""
    from vaultmem.core.notes.content_hash import content_hash

    root = tmp_path / "v"
    root.mkdir()
    path = root / "n.md"
    path.write_bytes(b"a" * 1000)
    real_fstat = os.fstat
    stats: list[os.stat_result] = []

    def fstat_then_append(fd: int) -> os.stat_result:
        stats.append(real_fstat(fd))
        if len(stats) == 1:  # another writer appends right after the first stat
            with open(path, "ab") as handle:
                handle.write(b"b" * 500)
        return stats[-1]

    monkeypatch.setattr(os, "fstat", fstat_then_append)
    read = index_sync._read(root, "n.md")
    monkeypatch.undo()
    assert read is not None
    assert len(stats) == 4  # stat, read, stat (grown: again), stat, read, stat
    assert read.size == 1500 == len(read.text)
    assert read.hash == content_hash(path.read_bytes())


@pytest.mark.parametrize(
    "path", ["STM/a\0b.md", "\0", "../outside.md", "STM/../../outside.md", "/abs/outside.md"]
)
def test_a_hostile_path_handed_to_a_sync_is_passed_over(tmp_path: Path, path: str) -> None:
    """A path holding NUL names no file (the system calls raise ``ValueError`` on it); one
    leading out of the vault is never read. Either way the sync goes on and indexes nothing."""
    vault = _vault(tmp_path)
    (tmp_path / "outside.md").write_text("secret [[x]]\n")
    _write(vault.root, "STM/kept.md", "kept\n")
    with vault:
        vault.sync()
        path = path.replace("/abs", str(tmp_path))
        report = vault.refresh([path, "STM/kept.md"])
        assert report.added == report.changed == report.removed == 0
        paths = [row[0] for row in vault.index.conn.execute("SELECT path FROM notes")]
        assert paths == ["STM/kept.md"]


def test_openers_racing_to_create_the_index_all_use_the_one_on_disk(tmp_path: Path) -> None:
    """The watcher's thread and the first command open a new index at the same moment: they
    must end up on the same file (before the schema lock, the loser of the race to apply the
    first migration deleted the winner's fresh index, and the winner wrote on into a deleted
    file nobody else could see)."""
    from racing_openers import open_at_once

    from vaultmem.store.index_db import IndexDB

    for attempt in range(15):
        sidecar = tmp_path / f"v{attempt}" / ".vaultmem"
        opened, errors = open_at_once(lambda sidecar=sidecar: IndexDB.open(sidecar))
        assert errors == []
        for i, db in enumerate(opened):
            db.conn.execute("INSERT INTO meta (key, value) VALUES (?, 'x')", (f"opener{i}",))
        for db in opened:
            seen = db.conn.execute("SELECT count(*) FROM meta WHERE key LIKE 'opener%'")
            assert seen.fetchone()[0] == len(opened), f"attempt {attempt}: not one file"
            db.close()


def _hold_the_write_lock(db_path: Path) -> sqlite3.Connection:
    """Another opener in the middle of a write: its connection holds the index's write lock."""
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO meta (key, value) VALUES ('holder', 'mid-write')")
    return holder


def test_a_busy_index_with_a_pending_migration_is_waited_for_never_discarded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index someone holds is sound: the opener that must migrate it waits and then says it
    is busy. Before, "database is locked" counted as damage, the file was deleted under its
    holder (in one process SQLite then mapped a stale -shm file: CI died of a bus error), and
    the holder wrote on into a file nobody else could see."""
    import vaultmem.store.index_db as index_db
    from vaultmem.errors import IndexBusyError

    sidecar = tmp_path / "v" / ".vaultmem"
    IndexDB.open(sidecar).close()
    db_path = sidecar / "index.db"
    with contextlib.closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        conn.executescript(  # as an index from before m007 left it
            "DROP INDEX notes_hands_off; DROP INDEX notes_warned; DROP INDEX notes_superseded;"
            "DELETE FROM migrations WHERE name = 'm007_few_row_indexes';"
        )
    inode = db_path.stat().st_ino
    holder = _hold_the_write_lock(db_path)
    monkeypatch.setattr(index_db, "BUSY_WAIT_SECONDS", 0.3)
    try:
        with pytest.raises(IndexBusyError, match="index.db: the index is busy"):
            IndexDB.open(sidecar)
        assert db_path.stat().st_ino == inode, "the busy index was replaced"
        holder.execute("COMMIT")
    finally:
        holder.close()
    reopened = IndexDB.open(sidecar)
    try:
        assert not reopened.recreated
        held = reopened.conn.execute("SELECT value FROM meta WHERE key = 'holder'").fetchone()
        assert held == ("mid-write",), "the holder's write was lost"
        assert not index_db.migrations_pending(reopened.conn)
    finally:
        reopened.close()


def test_a_rebuild_never_discards_an_index_another_connection_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`vaultmem index --rebuild` replaces a damaged index, not one that is merely in use."""
    import vaultmem.store.index_db as index_db
    from vaultmem.errors import IndexBusyError

    vault = _vault(tmp_path)
    _write(vault.root, "a.md", "alpha")
    vault.sync()
    db_path = vault.sidecar / "index.db"
    inode = db_path.stat().st_ino
    holder = _hold_the_write_lock(db_path)
    monkeypatch.setattr(index_db, "BUSY_WAIT_SECONDS", 0.3)
    vault.index.conn.execute("PRAGMA busy_timeout = 300")
    try:
        with pytest.raises(IndexBusyError):
            vault.sync(rebuild=True)
        assert db_path.stat().st_ino == inode, "the busy index was replaced"
        holder.execute("COMMIT")
    finally:
        holder.close()
    assert vault.sync(rebuild=True).rebuilt
    assert vault.index.all_paths() == ["a.md"]
    vault.close()


def _archive(vault: Vault, head: str, body: str) -> None:
    """Rewrite STM/Brew.md as a lifecycle move does: ``status: archived``, the body unchanged."""
    _write(vault.root, "STM/Brew.md", head.replace("active", "archived") + body)


def _clock_at(monkeypatch: pytest.MonkeyPatch, now_ns: int) -> None:
    monkeypatch.setattr(index_stamps, "clock_ns", lambda: now_ns)


def test_a_second_write_in_the_same_clock_tick_is_read_by_the_next_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two same-size writes stamped with one mtime (one coarse clock tick): the sync that read
    the first must not let the second pass as unchanged (the "racy git" problem)."""
    vault = _vault(tmp_path)
    note = vault.root / "STM" / "counter.md"
    _write(vault.root, "STM/counter.md", "---\nuse_count: 1\n---\nbody\n")
    tick = os.stat(note).st_mtime_ns
    _clock_at(monkeypatch, tick + 1_000_000)  # read 1 ms after the write, in the same tick
    vault.sync()
    assert vault.index.file_states()["STM/counter.md"].mtime_ns == index_stamps.racy_stamp(tick)
    _write(vault.root, "STM/counter.md", "---\nuse_count: 2\n---\nbody\n")
    os.utime(note, ns=(tick, tick))  # same size, same mtime: only the bytes differ
    _clock_at(monkeypatch, tick + 10**10)
    report = vault.sync()
    assert report.changed == 1
    assert vault.index.conn.execute("SELECT use_count FROM notes").fetchone() == (2,)


def test_a_racily_clean_stamp_is_verified_once_then_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "a.md", "text")
    tick = os.stat(vault.root / "a.md").st_mtime_ns
    _clock_at(monkeypatch, tick)
    vault.sync()
    reads = _count_reads(monkeypatch)
    _clock_at(monkeypatch, tick + 10**10)
    second = vault.sync()
    assert reads == ["a.md"] and (second.changed, second.unchanged) == (0, 1)
    assert vault.index.file_states()["a.md"].mtime_ns == tick
    vault.sync()
    assert reads == ["a.md"]  # verified: not read again


@pytest.mark.parametrize(
    ("offset_ns", "mtime_ns", "racy"),
    [
        (0, 1_700_000_000_123_456_789, True),
        (-15_000_000, 1_700_000_000_123_456_789, True),  # a tick earlier: still racy
        (-25_000_000, 1_700_000_000_123_456_789, False),  # older than any fine tick
        (3_600 * 10**9, 1_700_000_000_123_456_789, True),  # in the future: a clock ahead
        (-1_500_000_000, 1_700_000_000_000_000_000, True),  # whole seconds: a coarse clock
        (-2_500_000_000, 1_700_000_000_000_000_000, False),
    ],
)
def test_racy_window(offset_ns: int, mtime_ns: int, racy: bool) -> None:
    read_at = mtime_ns - offset_ns
    assert index_stamps.is_racy(mtime_ns, read_at) is racy


def test_a_note_written_by_vaultmem_is_read_once_by_the_next_sync(tmp_path: Path) -> None:
    """Indexed from the text vaultmem wrote (no read), its stamp stays pending: a same-size
    write by someone else in the same tick is still caught."""
    vault = _vault(tmp_path)
    note = vault.root / "w.md"
    _write(vault.root, "w.md", "mine")
    info = os.stat(note)
    written = {"w.md": index_sync.WrittenNote("mine", info.st_size, info.st_mtime_ns)}
    index_sync.sync_paths(vault.root, vault.index, vault.settings, ["w.md"], written=written)
    _write(vault.root, "w.md", "them")
    os.utime(note, ns=(info.st_mtime_ns, info.st_mtime_ns))
    assert vault.sync().changed == 1
    assert "them" in vault.index.conn.execute("SELECT body FROM notes_fts").fetchone()[0]


@pytest.mark.parametrize("named_after_ns", [30_000_000, 5_000_000])
def test_a_note_written_under_another_name_is_trusted_once_named_a_tick_after_its_write(
    tmp_path: Path, named_after_ns: int
) -> None:
    """A note written under a temporary name and named later (``visible_ns``): any write to it
    under its name comes after that moment, so when its write was more than a clock tick
    before, the text handed over is indexed with a final stamp; else the note is read back."""
    vault = _vault(tmp_path)
    _write(vault.root, "w.md", "disk")
    info = os.stat(vault.root / "w.md")
    # the same size, another word: which one the index holds tells where it was read from
    written = {
        "w.md": index_sync.WrittenNote(
            "text", info.st_size, info.st_mtime_ns, info.st_mtime_ns + named_after_ns
        )
    }
    index_sync.sync_paths(vault.root, vault.index, vault.settings, ["w.md"], written=written)
    body = vault.index.conn.execute("SELECT body FROM notes_fts").fetchone()[0]
    stamp = vault.index.file_states()["w.md"].mtime_ns
    if named_after_ns > index_stamps.RACY_NS:
        assert "text" in body and stamp == info.st_mtime_ns
    else:
        assert "disk" in body
        assert stamp in (info.st_mtime_ns, index_stamps.racy_stamp(info.st_mtime_ns))


def test_doctor_does_not_call_a_pending_stamp_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.services.sync.doctor import check_vault

    vault = _vault(tmp_path)
    _write(vault.root, "a.md", "text")
    _clock_at(monkeypatch, os.stat(vault.root / "a.md").st_mtime_ns)
    vault.sync()
    assert check_vault(vault).stale_index == []

def test_a_field_edit_keeps_the_full_text_and_tag_rows_and_a_text_edit_replaces_them(
    tmp_path: Path,
) -> None:
    # a lifecycle move changes a few frontmatter fields: re-indexing it rewrites the notes row
    # only, yet the index ends exactly as a rebuild makes it
    vault = _vault(tmp_path)
    head = "---\ntype: memory\nstatus: active\ntags: [tea, kettle]\n---\n"
    _write(vault.root, "STM/Brew.md", head + "steep oolong at ninety degrees\n")
    vault.sync()
    statements: list[str] = []
    vault.index.conn.set_trace_callback(statements.append)
    _archive(vault, head, "steep oolong at ninety degrees\n")
    assert vault.refresh(["STM/Brew.md"]).changed == 1
    written = [s for s in statements if s.lstrip().upper().startswith(("INSERT", "DELETE"))]
    assert not [s for s in written if "notes_fts" in s or " tags" in s], written
    assert vault.index.note_row("STM/Brew.md")["status"] == "archived"  # type: ignore[index]
    kept = index_content(vault)
    statements.clear()
    _write(vault.root, "STM/Brew.md", head.replace("kettle", "pot") + "brew sencha cooler\n")
    vault.refresh(["STM/Brew.md"])
    assert any("notes_fts" in s for s in statements) and any(" tags" in s for s in statements)
    vault.index.conn.set_trace_callback(None)
    edited = index_content(vault)
    assert [row[2] for row in edited["fts"]] == ["brew sencha cooler\n"]
    assert sorted(tag for _, tag in edited["tags"]) == ["pot", "tea"]
    vault.sync(rebuild=True)
    assert index_content(vault) == edited
    assert kept["fts"][0][2] == "steep oolong at ninety degrees\n"


def test_refreshing_many_notes_of_one_folder_resolves_the_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path)
    rels = [f"STM/n{i}.md" for i in range(40)]
    for rel in rels:
        _write(vault.root, rel, f"note {rel}\n")
    calls: list[str] = []
    real_linked, real_inside = index_sync.is_symlinked, index_sync.resolves_inside
    monkeypatch.setattr(
        index_sync, "is_symlinked", lambda root, rel: calls.append(rel) or real_linked(root, rel)
    )
    monkeypatch.setattr(
        index_sync, "resolves_inside", lambda root, rel: calls.append(rel) or real_inside(root, rel)
    )
    looked: list[str] = []
    real_islink = os.path.islink
    monkeypatch.setattr(
        os.path, "islink", lambda path: looked.append(os.fspath(path)) or real_islink(path)
    )
    assert vault.refresh(rels).added == 40
    assert calls == []  # no path resolved from / ...
    assert looked == [str(vault.root / "STM")]  # ...the folder looked at once, by itself


def test_a_note_whose_links_are_unchanged_keeps_its_link_rows(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    head = "---\ntype: memory\nstatus: active\n---\n"
    _write(vault.root, "STM/Brew.md", head + "see [[Kettle]] and [[Cup#rim]]\n")
    _write(vault.root, "Kettle.md", "a kettle\n")
    _write(vault.root, "Cup.md", "see [[Brew]]\n")
    vault.sync()
    before = vault.index.conn.execute("SELECT lid, nid, target FROM links ORDER BY lid").fetchall()
    statements: list[str] = []
    vault.index.conn.set_trace_callback(statements.append)
    _archive(vault, head, "see [[Kettle]] and [[Cup#rim]]\n")
    vault.refresh(["STM/Brew.md"])
    assert not [s for s in statements if s.startswith(("DELETE FROM links", "INSERT INTO links"))]
    assert (
        vault.index.conn.execute("SELECT lid, nid, target FROM links ORDER BY lid").fetchall()
        == before
    )
    _write(
        vault.root, "STM/Brew.md", head + "see [[Cup]] and [[Kettle]]\n"
    )  # same targets, new order
    vault.refresh(["STM/Brew.md"])
    vault.index.conn.set_trace_callback(None)
    assert [r.target for r in vault.index.links_from("STM/Brew.md")] == ["Cup", "Kettle"]
    edges = dict(vault.index.conn.execute("SELECT path, edges FROM notes").fetchall())
    content = index_content(vault)
    vault.sync(rebuild=True)
    assert index_content(vault) == content
    assert dict(vault.index.conn.execute("SELECT path, edges FROM notes").fetchall()) == edges


def test_a_moved_note_is_renamed_and_refreshed_in_one_update(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    head = "---\nid: M1\ntype: memory\nstatus: active\n---\n"
    _write(vault.root, "STM/Brew.md", head + "steep oolong, see [[Cup]]\n")
    _write(vault.root, "Cup.md", "see [[Brew]]\n")
    vault.sync()
    nid = vault.index.conn.execute("SELECT nid FROM notes WHERE path = 'STM/Brew.md'").fetchone()
    (vault.root / "Archive").mkdir()
    (vault.root / "STM" / "Brew.md").rename(vault.root / "Archive" / "Brew.md")
    _write(
        vault.root,
        "Archive/Brew.md",
        head.replace("active", "archived") + "steep oolong, see [[Cup]]\n",
    )
    statements: list[str] = []
    vault.index.conn.set_trace_callback(statements.append)
    report = vault.refresh(["STM/Brew.md", "Archive/Brew.md"])
    vault.index.conn.set_trace_callback(None)
    assert report.moved == 1
    assert len([s for s in statements if s.startswith("UPDATE notes SET path")]) == 1
    row = vault.index.note_row("Archive/Brew.md")
    assert row is not None and (row["nid"], row["status"]) == (nid[0], "archived")
    assert [link.source for link in vault.links("Cup").backlinks] == ["Archive/Brew.md"]
    assert vault.index.links_into("Archive/Brew.md")[0].source == "Cup.md"
    content = index_content(vault)
    vault.sync(rebuild=True)
    assert index_content(vault) == content


@pytest.mark.parametrize("scan_per_path", [0, index_queries.SCAN_ATTACHMENTS_PER_PATH])
def test_states_under_many_paths_are_each_path_and_what_lies_below_it(
    tmp_path: Path, scan_per_path: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``file_states`` and ``attachment_paths`` ``under=`` a pass's thousands of paths (asked in
    groups, or the attachments all read and picked): a note path selects itself, a folder
    everything below it, nothing else."""
    monkeypatch.setattr(index_queries, "SCAN_ATTACHMENTS_PER_PATH", scan_per_path)
    vault = _vault(tmp_path)
    for i in range(250):
        _write(vault.root, f"STM/n{i:03}.md", f"note {i}")
    for rel in ("Projects/a.md", "Projects/deep/b.md", "Projects0/c.md", "Projectsx.md"):
        _write(vault.root, rel, "x")
    for rel in ("Projects/pic.png", "Projects0/pic.png", "Projectsx.png", "STM/n000.md.png"):
        (vault.root / rel).write_bytes(b"\x89PNG")
    vault.sync()
    under = [f"STM/n{i:03}.md" for i in range(0, 250, 2)] + ["Projects", "STM/gone.md"]
    states = vault.index.file_states(under=sorted(under))
    expected = {f"STM/n{i:03}.md" for i in range(0, 250, 2)}
    assert set(states) == expected | {"Projects/a.md", "Projects/deep/b.md"}
    assert all(states[rel].size == len(f"note {int(rel[5:8])}") for rel in expected)
    assert vault.index.attachment_paths(under=sorted(under)) == {"Projects/pic.png"}


def test_a_rebuild_makes_the_full_text_table_anew_only_when_it_holds_something(
    tmp_path: Path,
) -> None:
    # dropping and recreating an FTS5 table as created is work without effect (a first index);
    # one that held rows is made anew, and either way the rebuild equals the vault
    vault = _vault(tmp_path)
    statements: list[str] = []
    vault.index.conn.set_trace_callback(statements.append)
    vault.index.clear()
    assert not [s for s in statements if "DROP TABLE" in s.upper()]
    _write(vault.root, "STM/Brew.md", "---\ntype: memory\n---\nsteep oolong\n")
    vault.sync()
    statements.clear()
    vault.sync(rebuild=True)
    vault.index.conn.set_trace_callback(None)
    assert any("DROP TABLE notes_fts" in s for s in statements)
    fts = vault.index.conn.execute("SELECT body FROM notes_fts").fetchall()
    assert fts == [("steep oolong\n",)]


def test_an_index_from_before_m008_loses_the_resolved_path_index_and_keeps_its_links(
    tmp_path: Path,
) -> None:
    """m008: links into a note are found by nid. An index made before it keeps its rows; the
    index on the ``resolved`` path text is dropped, and backlinks, moves and a rebuild agree."""
    vault = _vault(tmp_path)
    _write(vault.root, "Cup.md", "see [[Tea]] and [[Tea#Brew]]\n")
    _write(vault.root, "STM/Tea.md", "green, with [[Cup]]\n")
    vault.sync()
    db_path = vault.sidecar / "index.db"
    vault.close()
    with contextlib.closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        conn.executescript(  # as an index from before m008 left it
            "CREATE INDEX links_resolved ON links(resolved);"
            "DELETE FROM migrations WHERE name = 'm008_links_into_by_nid';"
        )
    vault = Vault.open(vault.root)
    try:
        names = {r[0] for r in vault.index.conn.execute("SELECT name FROM sqlite_master")}
        assert "links_resolved" not in names and "links_resolved_nid" in names
        assert [r.source for r in vault.index.links_into("STM/Tea.md")] == ["Cup.md", "Cup.md"]
        (vault.root / "LTM").mkdir()
        (vault.root / "STM" / "Tea.md").rename(vault.root / "LTM" / "Tea.md")
        assert vault.refresh(["STM/Tea.md", "LTM/Tea.md"]).moved == 1
        assert vault.index.links_into("STM/Tea.md") == []
        into = vault.index.links_into("LTM/Tea.md")
        assert [(r.source, r.resolved) for r in into] == [("Cup.md", "LTM/Tea.md")] * 2
        assert [r.source for r in vault.links("Tea").backlinks] == ["Cup.md", "Cup.md"]
        content = index_content(vault)
        vault.sync(rebuild=True)
        assert index_content(vault) == content
    finally:
        vault.close()


def test_a_note_whose_name_is_not_utf8_is_left_out_and_the_rest_is_indexed(
    tmp_path: Path,
) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "STM/plain.md", "---\nid: p1\ntype: memory\n---\nsee [[café]]\n")
    raw = os.fsencode(vault.root) + b"/STM/caf\xe9.md"  # Latin-1, not UTF-8
    with open(raw, "wb") as handle:
        handle.write(b"---\nid: c1\ntype: memory\n---\nbody\n")
    folder = os.fsencode(vault.root) + b"/Notes \xff"
    os.mkdir(folder)
    with open(folder + b"/inside.md", "wb") as handle:
        handle.write(b"a note in a folder whose name is not UTF-8\n")
    with open(folder + b"/../STM/image \xe9.png", "wb") as handle:
        handle.write(b"\x89PNG")
    report = vault.sync()  # a cold index
    assert sorted(vault.index.file_states()) == ["STM/plain.md"]
    assert report.added == 1
    assert vault.index.attachment_paths() == set()
    assert vault.refresh([os.fsdecode(raw[len(os.fsencode(vault.root)) + 1 :])]).added == 0
    os.utime(raw)
    assert vault.sync().any_change is False  # an incremental sync passes it over too
    vault.close()


def test_a_touched_note_dated_by_its_mtime_is_stored_as_a_rebuild_stores_it(
    copy_vault: Callable[[str], Path],
) -> None:
    """A note without ``created`` takes it (and ``last_used``) from its file's mtime; touching
    every note of a real vault (a copy without ``-p``, a restore) leaves the index exactly as a
    rebuild of the touched vault, while a note whose frontmatter dates it keeps its date."""
    root = copy_vault("kepano-obsidian")
    _write(root, "STM/Dated.md", "---\ntype: memory\ncreated: 2026-01-02T03:04:05\n---\nbody")
    vault = Vault.open(root)
    vault.sync()
    before = vault.index.conn.execute(
        "SELECT created FROM notes WHERE path = 'STM/Dated.md'"
    ).fetchone()
    for path in root.rglob("*.md"):
        if ".vaultmem" not in path.parts:
            info = path.stat()
            os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 3 * 86_400 * 10**9))
    report = vault.sync()
    assert (report.changed, report.added, report.removed) == (0, 0, 0)
    touched = index_content(vault)
    vault.sync(rebuild=True)
    assert touched == index_content(vault)
    assert vault.index.conn.execute(
        "SELECT created FROM notes WHERE path = 'STM/Dated.md'"
    ).fetchone() == before


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_edits_synced_now_and_then_leave_the_index_a_rebuild_gives(
    tmp_path: Path, seed: int
) -> None:
    """Creates, edits, saves by rename, touches, renames, moves, copies, deletes, folder moves
    and removals (the watcher tests' burst), synced every 40: after each sync every row of every
    table is what a rebuild of a copy of the vault (mtimes kept) stores."""
    from test_watcher import random_burst

    root = tmp_path / "v"
    for folder in ("STM", "LTM", ".obsidian"):
        (root / folder).mkdir(parents=True)
    (root / "vaultmem.toml").write_text("")
    rng = random.Random(seed)
    with Vault.open(root) as vault:
        for round_ in range(6):
            random_burst(root, rng, 40)
            vault.sync()
            copy = tmp_path / f"copy{round_}"
            shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".vaultmem"))
            with Vault.open(copy) as fresh:
                fresh.sync()
                assert index_content(vault) == index_content(fresh), f"after round {round_}"
            shutil.rmtree(copy)


def test_a_changed_templates_folder_reparses_the_notes_it_takes_in_or_lets_go(
    tmp_path: Path,
) -> None:
    """Obsidian's Templates plugin folder is a setting, not part of any note: when it changes, a
    sync (and the watcher's path sync) re-parses exactly the notes that entered or left it, as
    a rebuild parses them (a ``type: memory`` template is no memory)."""
    vault = _vault(tmp_path)
    (vault.root / ".obsidian").mkdir()
    memory = "---\nid: t1\ntype: memory\n---\n{{title}}\n"
    _write(vault.root, "Tpl/Memory template.md", memory)
    _write(vault.root, "Tpl/Sub/Deeper.md", memory.replace("t1", "t2"))
    _write(vault.root, "STM/Real.md", "---\nid: r1\ntype: memory\n---\nkept as it is\n")

    def types() -> dict[str, object]:
        return dict(vault.index.conn.execute("SELECT path, type FROM notes").fetchall())

    vault.sync()
    assert set(types().values()) == {"memory"}
    settings = vault.root / ".obsidian" / "templates.json"
    settings.write_text('{"folder": "Tpl"}')
    report = vault.sync()
    assert report.changed == 2
    assert types() == {
        "Tpl/Memory template.md": None, "Tpl/Sub/Deeper.md": None, "STM/Real.md": "memory"
    }
    synced = index_content(vault)
    vault.sync(rebuild=True)
    assert index_content(vault) == synced
    settings.write_text('{"folder": "Tpl/Sub"}')  # the watcher syncs paths, not the vault
    index_sync.sync_paths(vault.root, vault.index, vault.settings, ["STM/Real.md"])
    assert types() == {
        "Tpl/Memory template.md": "memory", "Tpl/Sub/Deeper.md": None, "STM/Real.md": "memory"
    }
    assert vault.sync().changed == 0  # recorded: not parsed again


def test_a_changed_note_size_limit_rereads_the_notes_between_the_two_limits(
    tmp_path: Path,
) -> None:
    vault = _vault(tmp_path)
    _write(vault.root, "small.md", "s" * 500)
    _write(vault.root, "big.md", "b" * 3000)
    for name in ("small.md", "big.md"):
        _age(vault.root / name)  # not racily clean: only a changed limit reads them again
    vault.sync()

    def problems() -> dict[str, object]:
        return dict(vault.index.conn.execute("SELECT path, problems FROM notes").fetchall())

    assert problems() == {"small.md": "[]", "big.md": "[]"}
    for limit, big in (("0.002", "over the note size limit"), ("10", "[]")):
        (vault.root / "vaultmem.toml").write_text(f"[index]\nmax_note_mb = {limit}\n")
        vault.close()
        vault = Vault.open(vault.root)
        assert vault.sync().changed == 1
        assert problems()["small.md"] == "[]" and big in str(problems()["big.md"])
        synced = index_content(vault)
        vault.sync(rebuild=True)
        assert index_content(vault) == synced
    vault.close()


def test_a_cold_index_reports_its_progress_once_a_batch_up_to_every_note(
    copy_vault: Callable[[str], Path],
) -> None:
    vault = Vault.open(copy_vault("13th-age-srd"))
    calls: list[tuple[int, int]] = []
    report = vault.sync(progress=lambda done, total: calls.append((done, total)))
    vault.close()
    total = report.added
    assert total > 900 and calls[-1] == (total, total)
    assert all(t == total for _, t in calls)
    assert [d for d, _ in calls] == sorted({d for d, _ in calls})  # only ever forward
    assert len(calls) < total / 8  # a terminal's bar is redrawn per call: not once per note
