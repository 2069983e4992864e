"""Two clones of one vault, hundreds of random interleaved operations on each side, pulls and
pushes at random points (real ``git``, the merge driver, ``doctor --fix`` after a conflict):
nothing lost, nothing doubled, both clones identical at the end.

Seeded: ``VAULTMEM_SYNC_SEED=<n>`` replays a run; a failure names its seed.
"""

from __future__ import annotations

import datetime as dt
import os
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from git_clones import GIT_ENV, commit_all, git, make_clones, memory_notes, pull

from vaultmem import Vault
from vaultmem.core.note_text import find_conflict_markers, parse_frontmatter, split_note
from vaultmem.errors import VaultmemError
from vaultmem.services.index_sync import sync_index
from vaultmem.services.shared_ids import fix_vault, shared_id_groups
from vaultmem.store.index_db import IndexDB

OPERATIONS_PER_SIDE = 200
SYNC_CHANCE = 0.06
"""Chance that a step is a sync (commit, pull, fix, push) of one side instead of an operation."""
T0 = dt.datetime(2026, 11, 20, 8, 0, tzinfo=dt.UTC)
TAGS = ["python", "editor", "ui", "food", "travel", "music"]


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    yield


@dataclass
class World:
    """What the operations did, to check the vaults against."""

    rng: random.Random
    clock: dt.datetime = T0
    uses: Counter[str] = field(default_factory=Counter)
    last_used: dict[str, dt.datetime] = field(default_factory=dict)
    body_lines: dict[str, list[str]] = field(default_factory=dict)
    known: dict[str, list[str]] = field(default_factory=lambda: {"A": [], "B": []})
    counts: Counter[str] = field(default_factory=Counter)

    def tick(self) -> dt.datetime:
        self.clock += dt.timedelta(minutes=self.rng.randint(1, 40))
        return self.clock


def body(side: str, n: int) -> str:
    # each side writes only under its own heading; unchanged lines keep the two apart, as
    # separate paragraphs edited on two machines are
    return f"Memory {side}{n} about things.\n\nA notes:\n\n* * *\n\nB notes:\n"


def find_path(vault: Vault, note_id: str) -> str | None:
    try:
        return vault.resolve(note_id)
    except VaultmemError:
        return None


def operate(world: World, side: str, vault: Vault) -> None:
    rng = world.rng
    ids = world.known[side]
    choice = rng.random()
    now = world.tick()
    if choice < 0.12 or not ids:
        n = world.counts["remember"] = world.counts["remember"] + 1
        memory = vault.remember(
            body(side, n), title=f"{side}{n} memo", tags=rng.sample(TAGS, 2), now=now
        )
        note_id = str(memory.fields.id)
        ids.append(note_id)
        world.last_used[note_id] = now
        world.body_lines[note_id] = []
        return
    note_id = rng.choice(ids)
    path = find_path(vault, note_id)
    if path is None:
        return
    if choice < 0.55:
        if rng.random() < 0.7:
            vault.touch(note_id, now=now)
        else:
            vault.observe([note_id], [rng.choice(TAGS)], now=now)
        world.uses[note_id] += 1
        world.last_used[note_id] = max(world.last_used[note_id], now)
        world.counts["use"] += 1
    elif choice < 0.75:  # a person's edit in Obsidian: a line under this side's heading
        line = f"- {side} edit {world.counts['edit']} at {now:%H:%M}"
        world.counts["edit"] += 1
        note = vault.root / path
        text = note.read_text(encoding="utf-8")
        anchor = f"{side} notes:\n"
        assert anchor in text, f"{path} lost its heading {anchor!r}:\n{text}"
        note.write_text(text.replace(anchor, anchor + line + "\n", 1), encoding="utf-8")
        world.body_lines[note_id].append(line)
    elif choice < 0.85:  # an Obsidian rename in place
        note = vault.root / path
        target = note.with_name(f"{note.stem} r{world.counts['rename']}.md")
        world.counts["rename"] += 1
        if not target.exists():
            note.rename(target)
    else:
        run = vault.lifecycle(now=now + dt.timedelta(days=rng.choice([0, 1, 3])), commit=True)
        assert run.commit_error is None, run.commit_error
        world.counts["lifecycle"] += 1


def sync(root: Path, vault: Vault, now: dt.datetime) -> None:
    """What the guide says: commit, pull; after a conflict `doctor --fix`, commit; push."""
    commit_all(root, "work")
    if not pull(root):
        vault.sync()
        report = fix_vault(vault, now)
        assert not report.left, f"doctor --fix left {report.left}"
        for path, text in memory_notes(root).items():
            assert not find_conflict_markers(text), f"{path} still conflicted:\n{text}"
        git(root, "add", "-A")
        git(root, "commit", "--quiet", "--no-edit")
    vault.sync()
    if shared_id_groups(vault.index):
        fix_vault(vault, now)
        commit_all(root, "doctor --fix")
    git(root, "push", "--quiet")


def snapshot(db: IndexDB) -> tuple[set[tuple[object, ...]], Counter[tuple[object, ...]]]:
    notes = set(
        db.conn.execute("SELECT path, id, hash, title, type, status, tags, problems FROM notes")
    )
    links = Counter((r.source, r.target, r.kind, r.resolved) for r in db.all_links())
    return notes, links


def run(seed: int, tmp_path: Path) -> None:
    world = World(random.Random(seed))
    clones = make_clones(tmp_path)
    sides = {"A": (clones.a, Vault.open(clones.a)), "B": (clones.b, Vault.open(clones.b))}
    done = Counter[str]()
    while min(done.values(), default=0) < OPERATIONS_PER_SIDE or len(done) < 2:
        side = world.rng.choice("AB")
        root, vault = sides[side]
        if world.rng.random() < SYNC_CHANCE:
            sync(root, vault, world.clock)
            continue
        operate(world, side, vault)
        done[side] += 1
    for side in "ABA":  # A's last push reaches B; B's merge comes back to A
        root, vault = sides[side]
        sync(root, vault, world.clock)
    assert pull(clones.a) and pull(clones.b)

    notes_a, notes_b = memory_notes(clones.a), memory_notes(clones.b)
    assert notes_a == notes_b, "the clones differ after the final sync"
    files_a = set(git(clones.a, "ls-files").stdout.splitlines())
    assert files_a == set(git(clones.b, "ls-files").stdout.splitlines())
    by_id: dict[str, list[tuple[str, dict[str, object], str]]] = {}
    for path, text in notes_a.items():
        assert not find_conflict_markers(text), f"{path} holds conflict markers"
        note = split_note(text)
        fm = parse_frontmatter(note.yaml)
        by_id.setdefault(str(fm.get("id")), []).append((path, fm, note.body))
    doubled = {i: [p for p, _, _ in found] for i, found in by_id.items() if len(found) > 1}
    assert not doubled, f"ids held by several notes: {doubled}"
    for note_id in world.last_used:
        found = by_id.get(note_id, [])
        assert len(found) == 1, f"memory {note_id} is at {[p for p, _, _ in found]}"
        path, fm, text_body = found[0]
        assert fm["use_count"] == 1 + world.uses[note_id], f"{path}: use_count"
        expected_last = world.last_used[note_id].replace(tzinfo=None)
        assert fm["last_used"] == expected_last, f"{path}: last_used"
        lines = text_body.splitlines()
        for line in world.body_lines[note_id]:
            assert line in lines, f"{path} lost the body edit {line!r}"
    for side in "AB":
        root, vault = sides[side]
        vault.sync()
        db = IndexDB.open(tmp_path / f"rebuild-{side}")
        try:
            sync_index(root, db, vault.settings, rebuild=True)
            assert snapshot(vault.index) == snapshot(db), f"clone {side}: index ≠ a rebuild"
        finally:
            db.close()
        vault.close()
    assert world.counts["lifecycle"] >= 10 and world.counts["edit"] >= 20
    assert world.counts["rename"] >= 10 and world.counts["use"] >= 100


def test_random_interleaved_operations_on_two_clones_converge(tmp_path: Path) -> None:
    seed = int(os.environ.get("VAULTMEM_SYNC_SEED", "20261123"))
    try:
        run(seed, tmp_path)
    except AssertionError as err:
        raise AssertionError(f"[VAULTMEM_SYNC_SEED={seed}] {err}") from err
