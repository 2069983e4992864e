"""Two clones of one vault, random interleaved operations on each side over several days,
pulls and pushes at random points (real ``git``, the merge driver, ``doctor --fix`` after a
rename conflict): nothing lost, nothing doubled, no note left conflicted, ``use_days`` exact
wherever both sides' days are known, both clones identical at the end.

Seeded: ten seeds run in CI; ``VAULTMEM_SYNC_SEED=<n>`` adds one (to replay a failure). A
failure names its seed. Each sync predicts, for every memory both sides used, whether the
driver can know the days exactly (user guide, "Syncing with git": one new day after the base's
last on each side, or every day since); where it can, the merged ``use_days`` must be the true
count, and it never exceeds it.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import index_rows
from git_clones import GIT_ENV, Clones, commit_all, git, make_clones, memory_notes, pull

from vaultmem import Vault
from vaultmem.core.notes.note_text import find_conflict_markers, parse_frontmatter, split_note
from vaultmem.errors import InputError, VaultmemError
from vaultmem.services.index.index_sync import sync_index
from vaultmem.services.sync.shared_ids import fix_vault, shared_id_groups
from vaultmem.store.index_db import IndexDB

OPERATIONS = 200
"""Operations per seed, both clones together."""
SEEDS = [
    *range(20261201, 20261211),
    *map(int, filter(None, [os.environ.get("VAULTMEM_SYNC_SEED")])),
]
SYNC_CHANCE = 0.04
"""Chance that a step is a sync (commit, pull, fix, push) of one side instead of an operation."""
NEXT_DAY_CHANCE = 0.12
"""Chance that the clock jumps into a later UTC day before an operation."""
T0 = dt.datetime(2026, 11, 20, 8, 0, tzinfo=dt.UTC)
TAGS = ["python", "editor", "ui", "food", "travel", "music"]
Days = frozenset[int]
FAST_GIT = {"core.fsync": "none", "gc.auto": "0", "maintenance.auto": "false"}
"""git settings that only save time here (no fsync, no background housekeeping)."""


@pytest.fixture(autouse=True)
def _git_identity_and_no_fsync(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    for n, (key, value) in enumerate(FAST_GIT.items()):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{n}", key)
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{n}", value)
    monkeypatch.setenv("GIT_CONFIG_COUNT", str(len(FAST_GIT)))
    # what is on disk matters here, not whether it would survive a power cut: fsync is most of
    # an operation's time
    monkeypatch.setattr(os, "fsync", lambda fd: None)
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
    """Per clone: the memory ids it holds (its own, and the other's once pulled)."""
    counts: Counter[str] = field(default_factory=Counter)
    days: dict[str, dict[str, set[int]]] = field(default_factory=lambda: {"A": {}, "B": {}})
    """Per clone: memory id → the UTC days (ordinals) its note there reflects."""
    remote: dict[str, Days] = field(default_factory=dict)
    seen: dict[str, dict[str, Days]] = field(default_factory=lambda: {"A": {}, "B": {}})
    """Per clone: the remote's days when the clone last synced (the next merge's base)."""
    exact: dict[str, bool] = field(default_factory=dict)
    """Memory id → whether every merge of its days could know them (use_days must be exact)."""

    def tick(self) -> dt.datetime:
        if self.rng.random() < NEXT_DAY_CHANCE:
            self.clock += dt.timedelta(hours=self.rng.randint(6, 30))
        self.clock += dt.timedelta(minutes=self.rng.randint(1, 40))
        return self.clock

    def used(self, side: str, note_id: str, now: dt.datetime) -> None:
        self.uses[note_id] += 1
        self.last_used[note_id] = max(self.last_used[note_id], now)
        self.days[side][note_id].add(now.date().toordinal())
        self.counts["use"] += 1

    def merge_days(self, side: str) -> None:
        """What a pull of ``side`` does to the days: each memory's union; an exact count only
        where both sides' new days are known to the driver."""
        ours, base = self.days[side], self.seen[side]
        for note_id, theirs in self.remote.items():
            if note_id not in ours:
                ours[note_id] = set(theirs)
                continue
            before = base.get(note_id, frozenset())
            new_o, new_t = ours[note_id] - before, theirs - before
            if new_o and new_t:  # both clones used it on new days since they last met
                self.counts["concurrent days"] += 1
                if not (_known(new_o, before) and _known(new_t, before)):
                    self.exact[note_id] = False
            ours[note_id] |= theirs

    def pushed(self, side: str) -> None:
        self.remote = {k: frozenset(v) for k, v in self.days[side].items()}
        self.seen[side] = dict(self.remote)


def _known(new: AbstractSet[int], before: Days) -> bool:
    """Whether the driver can know a side's new days: all after the base's last day, and one
    of them or every day since."""
    start = max(before, default=min(new) - 1)
    return min(new) > start and (len(new) == 1 or new == set(range(start + 1, max(new) + 1)))


def body(side: str, n: int) -> str:
    # each side writes only under its own heading; unchanged lines keep the two apart, as
    # separate paragraphs edited on two machines are
    return f"Memory {side}{n} about things.\n\nA notes:\n\n* * *\n\nB notes:\n"


def find_path(vault: Vault, note_id: str) -> str | None:
    try:
        return vault.resolve(note_id)
    except VaultmemError:
        return None


def _remember(world: World, side: str, vault: Vault, now: dt.datetime, supersede: bool) -> None:
    ids = world.known[side]
    n = world.counts["remember"] = world.counts["remember"] + 1
    options: dict[str, Any] = {"title": f"{side}{n} memo", "tags": world.rng.sample(TAGS, 2)}
    if supersede and ids:
        old = world.rng.choice(ids)
        if find_path(vault, old) is None:
            return
        options["supersedes"] = old
    try:
        memory = vault.remember(body(side, n), now=now, **options)
    except InputError:  # archived or superseded already: refused, nothing written
        assert "supersedes" in options
        return
    world.counts["supersede"] += "supersedes" in options
    note_id = str(memory.fields.id)
    ids.append(note_id)
    world.last_used[note_id] = now
    world.body_lines[note_id] = []
    world.days[side][note_id] = {now.date().toordinal()}
    world.exact[note_id] = True


def operate(world: World, side: str, vault: Vault) -> None:
    rng = world.rng
    ids = world.known[side]
    choice = rng.random()
    now = world.tick()
    if choice < 0.12 or not ids:
        _remember(world, side, vault, now, supersede=rng.random() < 0.3)
        return
    note_id = rng.choice(ids)
    path = find_path(vault, note_id)
    if path is None:
        return
    if choice < 0.58:
        try:
            if rng.random() < 0.7:
                vault.touch(note_id, now=now)
            else:
                vault.observe([note_id], [rng.choice(TAGS)], now=now)
        except InputError as err:  # archived: a use is refused, nothing written
            assert re.search(r" is archived; (not touched|nothing observed)", str(err)), err
            return
        world.used(side, note_id, now)
    elif choice < 0.74:  # a person's edit in Obsidian: a line under this side's heading
        line = f"- {side} edit {world.counts['edit']} at {now:%H:%M}"
        world.counts["edit"] += 1
        note = vault.root / path
        text = note.read_text(encoding="utf-8")
        anchor = f"{side} notes:\n"
        assert anchor in text, f"{path} lost its heading {anchor!r}:\n{text}"
        note.write_text(text.replace(anchor, anchor + line + "\n", 1), encoding="utf-8")
        world.body_lines[note_id].append(line)
    elif choice < 0.82:  # an Obsidian rename in place
        note = vault.root / path
        target = note.with_name(f"{note.stem} r{world.counts['rename']}.md")
        world.counts["rename"] += 1
        if not target.exists():
            note.rename(target)
    elif choice < 0.86:
        if not path.startswith("Archive/"):
            forgotten = vault.forget(note_id, now=now)
            world.counts["forget"] += len(forgotten.applied)
    else:
        run = vault.lifecycle(now=now, commit=rng.random() < 0.2)
        assert run.commit_error is None, run.commit_error
        world.counts["lifecycle"] += 1


def _check_use_days(world: World, side: str, root: Path) -> None:
    """Right after a sync: each memory's ``use_days`` is its true count where it must be exact,
    else at most the true count."""
    notes: dict[str, tuple[str, dict[str, object]]] = {}
    for path, text in memory_notes(root).items():
        fm = parse_frontmatter(split_note(text).yaml)
        notes[str(fm.get("id"))] = (path, fm)
    for note_id, days in world.days[side].items():
        if note_id not in notes:
            continue
        path, fm = notes[note_id]
        got = fm.get("use_days", 1)
        if world.exact[note_id]:
            assert got == len(days), f"{path}: use_days {got}, used on {len(days)} days"
        else:
            assert got <= len(days), f"{path}: use_days {got} > {len(days)} days used"  # type: ignore[operator]
            world.counts["inexact"] += 1


def sync(world: World, side: str, root: Path, vault: Vault) -> None:
    """What the guide says: commit, pull; after a conflict `doctor --fix`, commit; push."""
    now = world.clock
    commit_all(root, "work")
    before = git(root, "rev-parse", "HEAD").stdout
    if not pull(root):
        world.counts["rename conflict"] += 1
        for path, text in memory_notes(root).items():
            assert not find_conflict_markers(text), f"{path}: the driver left markers:\n{text}"
        vault.sync()
        report = fix_vault(vault, now)
        assert not report.left, f"doctor --fix left {report.left}"
        git(root, "add", "-A")
        git(root, "commit", "--quiet", "--no-edit")
    if git(root, "rev-parse", "HEAD").stdout != before:
        world.merge_days(side)
        world.known[side] = list(world.days[side])  # the other clone's memories too, now
    vault.sync()
    if shared_id_groups(vault.index):
        fix_vault(vault, now)
        commit_all(root, "doctor --fix")
    git(root, "push", "--quiet")
    world.pushed(side)
    world.counts["sync"] += 1
    _check_use_days(world, side, root)


def snapshot(db: IndexDB) -> tuple[set[tuple[object, ...]], Counter[tuple[object, ...]]]:
    notes = set(
        db.conn.execute("SELECT path, id, hash, title, type, status, tags, problems FROM notes")
    )
    links = Counter((r.source, r.target, r.kind, r.resolved) for r in db.all_links())
    return notes, links


@pytest.fixture(scope="module")
def fresh_clones(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One set-up pair of clones and their remote, copied for each seed (set-up is git's and
    ``init``'s time, the same for every seed)."""
    folder = tmp_path_factory.mktemp("clones")
    with pytest.MonkeyPatch.context() as patch:
        for key, value in GIT_ENV.items():
            patch.setenv(key, value)
        make_clones(folder)
    return folder


def copy_clones(template: Path, tmp_path: Path) -> Clones:
    for name in ("remote.git", "a", "b"):
        shutil.copytree(template / name, tmp_path / name, symlinks=True)
    clones = Clones(tmp_path / "remote.git", tmp_path / "a", tmp_path / "b")
    for root in (clones.a, clones.b):
        git(root, "remote", "set-url", "origin", str(clones.remote))
    return clones


def run(seed: int, tmp_path: Path, template: Path | None = None) -> Counter[str]:
    world = World(random.Random(seed))
    clones = copy_clones(template, tmp_path) if template else make_clones(tmp_path)
    sides = {"A": (clones.a, Vault.open(clones.a)), "B": (clones.b, Vault.open(clones.b))}
    for _ in range(OPERATIONS):
        side = world.rng.choice("AB")
        root, vault = sides[side]
        if world.rng.random() < SYNC_CHANCE:
            sync(world, side, root, vault)
        operate(world, side, vault)
    for side in "ABA":  # A's last push reaches B; B's merge comes back to A
        root, vault = sides[side]
        sync(world, side, root, vault)
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
        days = world.days["A"][note_id]
        if world.exact[note_id]:
            assert fm.get("use_days", 1) == len(days), f"{path}: use_days"
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
            rebuilt = index_rows(db.conn)
            for table, rows in index_rows(vault.index.conn).items():  # every column, too
                assert rows == rebuilt[table], f"clone {side}: {table} ≠ a rebuild's"
        finally:
            db.close()
        vault.close()
    return world.counts


def _run_seed(seed: int, tmp_path: Path, template: Path) -> Counter[str]:
    try:
        return run(seed, tmp_path, template)
    except AssertionError as err:
        raise AssertionError(f"[VAULTMEM_SYNC_SEED={seed}] {err}") from err


@pytest.mark.parametrize("seed", SEEDS)
def test_random_operations_over_days_on_two_clones_converge(
    seed: int, tmp_path: Path, fresh_clones: Path
) -> None:
    counts = _run_seed(seed, tmp_path, fresh_clones)
    for kind in ("use", "edit", "rename", "lifecycle", "supersede", "forget", "sync"):
        assert counts[kind] >= 1, f"no {kind}: {counts}"  # the run did what it is meant to
    assert counts["concurrent days"] >= 1, counts  # both clones used a memory on new days
