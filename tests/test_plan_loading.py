"""The fast paths under the lifecycle plan give what the plain ones gave: the walk that lists
folders through descriptors finds every note with its size and mtime, and the memory table
built as one record array holds the values a row-by-row conversion holds."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from vaultmem.core.scoring.decay import source_trust
from vaultmem.core.scoring.score_formulas import COLUMN_ORDER
from vaultmem.core.scoring.scoring import MemoryColumns, half_life_seconds
from vaultmem.core.scoring.vectorised import per_distinct
from vaultmem.core.settings import Settings
from vaultmem.services.index.vault_walk import UNSTATED, scan_vault
from vaultmem.store.confinement import linked_notes


def _walked(root: Path) -> dict[str, tuple[int, int]]:
    """Reference: os.walk without dot folders, no links followed, a stat per note."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            full = os.path.join(folder, name)
            if name.startswith(".") or not name.lower().endswith(".md") or os.path.islink(full):
                continue
            info = os.stat(full)
            found[Path(full).relative_to(root).as_posix()] = (info.st_size, info.st_mtime_ns)
    return found


@pytest.mark.parametrize("name", ["kepano-obsidian", "13th-age-srd"])
def test_the_walk_finds_every_note_of_a_real_vault_with_its_stat(
    copy_vault: Callable[[str], Path], name: str
) -> None:
    root = copy_vault(name)
    expected = _walked(root)
    assert len(expected) > 50
    assert scan_vault(root, Settings()) == expected
    folder = sorted({rel.split("/")[0] for rel in expected if "/" in rel})[0]
    below = {rel: stat for rel, stat in expected.items() if rel.startswith(folder + "/")}
    assert scan_vault(root, Settings(), folder=folder) == below
    unstated = scan_vault(root, Settings(), stats=False)  # a cold index: the paths alone
    assert unstated == dict.fromkeys(expected, UNSTATED)


def test_the_walk_does_not_enter_a_linked_folder_but_keeps_a_linked_note_inside(
    tmp_path: Path,
) -> None:
    root = tmp_path / "v"
    (root / "Notes").mkdir(parents=True)
    (root / "Notes" / "a.md").write_text("a\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("s\n")
    (root / "Linked").symlink_to(outside)
    (root / "Notes" / "alias.md").symlink_to(root / "Notes" / "a.md")
    (root / "Notes" / "escape.md").symlink_to(outside / "secret.md")
    linked: set[str] = set()
    found = scan_vault(root, Settings(), linked=linked)
    assert sorted(found) == ["Notes/a.md", "Notes/alias.md"]
    assert found["Notes/alias.md"] == found["Notes/a.md"]
    assert linked_notes(root, sorted(found)) == {"Notes/alias.md"} == linked


def test_a_vault_reached_through_a_link_is_walked(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "STM").mkdir(parents=True)
    (real / "STM" / "m.md").write_text("m\n")
    link = tmp_path / "vault-link"
    link.symlink_to(real)
    assert list(scan_vault(link, Settings())) == ["STM/m.md"]


def _rows(n: int) -> list[tuple[object, ...]]:
    rng = np.random.default_rng(5)
    rows = []
    for i in range(n):
        values: dict[str, object] = {
            "path": f"F{i % 3}/sub/m{i}.md" if i % 4 else f"top{i}.md",
            "id": None if i % 5 == 0 else f"id{i}",
            "type": "memory",
            "status": ("active", "archived")[i % 2],
            "layer": ("working", "episodic", None, "semantic")[i % 4],
            "category": "fact",
            "source": ("human", " Agent ", None, "robot")[i % 4],
            "created": None if i % 7 == 0 else 1.7e9 + float(rng.uniform(0, 1e7)),
            "last_used": None if i % 3 == 0 else 1.75e9 + float(rng.uniform(0, 1e7)),
            "use_count": int(rng.integers(0, 40)),
            "strength": float(rng.uniform(0, 2)),
            "importance": float(rng.uniform(0, 1)),
            "confidence": 1.0,
            "pinned": i % 6 == 0,
            "resolved_at": None,
            "use_days": int(rng.integers(1, 9)),
            "edges": i % 5,
        }
        rows.append(tuple(values[name] for name in COLUMN_ORDER))
    return rows


def test_columns_from_rows_hold_each_value_of_each_row() -> None:
    rows = _rows(300)
    columns = MemoryColumns.from_rows(rows)
    assert len(columns) == 300
    for i, row in enumerate(rows):
        for name, value in zip(COLUMN_ORDER, row, strict=True):
            got = getattr(columns, name)[i]
            if name == "pinned":
                assert got is np.True_ if value else got is np.False_
            elif isinstance(got, float):
                assert (math.isnan(got) and value is None) or got == value, (name, i)
            else:
                assert got == value, (name, i)
        path = str(row[0])
        assert columns.top_folder[i] == (path.split("/", 1)[0] if "/" in path else "")
    for name in COLUMN_ORDER:
        assert getattr(columns, name).flags.c_contiguous
    as_lists = MemoryColumns.from_rows([list(row) for row in rows])
    assert np.array_equal(as_lists.last_used, columns.last_used, equal_nan=True)
    assert list(as_lists.path) == list(columns.path)


def test_columns_from_no_rows_are_empty_and_score() -> None:
    columns = MemoryColumns.from_rows([])
    assert len(columns) == 0 and columns.created.dtype == np.float64
    assert half_life_seconds(columns.layer, columns.source, Settings()).shape == (0,)


def test_lookups_per_distinct_value_equal_lookups_per_memory() -> None:
    settings = Settings()
    columns = MemoryColumns.from_rows(_rows(200))
    each = np.array([settings.half_life_days(str(layer)) for layer in columns.layer])
    assert np.array_equal(per_distinct(columns.layer, settings.half_life_days), each)
    trust = np.array([source_trust(None if s is None else str(s)) for s in columns.source])
    assert np.array_equal(source_trust(columns.source), trust)
    grid = np.array([["agent", "human"], [None, "IMPORT"]], dtype=object)
    assert source_trust(grid).tolist() == [[0.7, 1.0], [1.0, 0.5]]
    assert per_distinct(np.array([], dtype=object), settings.half_life_days).shape == (0,)


def test_the_plan_table_holds_only_what_a_pass_can_move_and_plans_the_same(
    tmp_path: Path,
) -> None:
    """The passes are planned from the active and superseded memories only; archived and
    promoted ones (40 % of a grown vault) are not loaded, and every pass plans what it plans
    from every memory."""
    import datetime as dt

    from vaultmem import Vault
    from vaultmem.services.lifecycle.lifecycle import plan_pass, plan_table

    t0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
    day = dt.timedelta(days=1)
    Vault.init(tmp_path / "v")[0].close()
    settings = tmp_path / "v" / "vaultmem.toml"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(text.replace("max_active = 1000", "max_active = 3"), encoding="utf-8")
    with Vault.open(tmp_path / "v") as vault:
        for i in range(8):
            vault.remember(f"plain fact number {i}", tags=["x"], importance=0.2,
                           now=t0 + i * dt.timedelta(minutes=1))
        used = vault.remember("a fact used on many days", tags=["y"], now=t0)
        for d in range(1, 6):
            vault.touch(used.path, now=t0 + d * day)
        vault.lifecycle(now=t0 + 6 * day)
        vault.remember("the old standup time is 9", tags=["z"], now=t0 + 7 * day)
        vault.remember("the standup time is 10", supersedes="the old standup time is 9",
                       now=t0 + 7 * day)
        for i in range(6):
            vault.remember(f"a later fact {i}", tags=["w"], importance=0.1,
                           now=t0 + 8 * day + i * dt.timedelta(minutes=1))
        when = t0 + 30 * day
        full = vault.table(now=when)
        statuses = sorted({str(s) for s in full.columns.status})
        assert {"active", "archived", "promoted", "superseded"} <= set(statuses), statuses
        table = plan_table(vault, when)
        assert sorted({str(s) for s in table.columns.status}) == ["active", "superseded"]
        assert len(table) < len(full)
        moves = 0
        for name in ("promote", "expire", "forget", "prune"):
            planned = plan_pass(vault, name, when, table=table).planned
            assert planned == plan_pass(vault, name, when, table=full).planned, name
            assert planned == plan_pass(vault, name, when).planned, name
            moves += len(planned)
        assert moves > 0


def test_a_plan_after_a_walk_leaves_linked_memories_in_place_without_a_stat_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sync before the plan tells which memories are symbolic links (its walk saw them);
    without that walk (a live watcher, a read-only sidecar) the plan asks the file system —
    both leave the same memories in place and plan the same moves."""
    import dataclasses
    import datetime as dt

    from vaultmem import Vault
    from vaultmem.services.lifecycle import lifecycle
    from vaultmem.services.lifecycle.lifecycle import plan_pass, plan_table

    root = tmp_path / "v"
    Vault.init(root)[0].close()
    (root / "vaultmem.toml").write_text('[index]\nexclude = ["Sources/*"]\n')
    (root / "Sources").mkdir()
    for name in ("walnuts", "pecans"):
        (root / "Sources" / f"{name}.md").write_text(
            f"---\nid: 01JTESTLINKED{name.upper():0<13}\ntype: memory\nstatus: active\n"
            "layer: working\ncreated: 2025-01-01T00:00:00\nlast_used: 2025-01-01T00:00:00\n"
            "use_count: 1\nstrength: 1.0\nimportance: 0.1\nconfidence: 1.0\nsource: human\n"
            f"pinned: false\ntags: [linked]\n---\nLinked memory about {name}\n"
        )
        (root / "STM" / f"{name.title()}.md").symlink_to(Path("..") / "Sources" / f"{name}.md")
    (root / "STM" / "Plain.md").write_text(
        (root / "Sources" / "pecans.md").read_text().replace("PECANS", "PLAIN0")
        .replace("pecans", "plain things")
    )
    when = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)
    with Vault.open(root) as vault:
        walked = plan_table(vault, when)
        assert walked.linked == {"STM/Walnuts.md", "STM/Pecans.md"}
        asked = dataclasses.replace(walked, linked=None)
        by_stat = plan_pass(vault, "forget", when, table=asked)
        vault.warnings.clear()

        def no_stat(root: Path, paths: list[str]) -> set[str]:
            raise AssertionError("the walk already told which notes are links")

        monkeypatch.setattr(lifecycle, "linked_notes", no_stat)
        by_walk = plan_pass(vault, "forget", when, table=walked)
    assert [m.path for m in by_walk.planned] == ["STM/Plain.md"]
    assert by_walk.planned == by_stat.planned
    assert sorted(vault.warnings) == [
        "STM/Pecans.md: a symbolic link; left in place (a pass does not move links — move the "
        "note it points to instead)",
        "STM/Walnuts.md: a symbolic link; left in place (a pass does not move links — move the "
        "note it points to instead)",
    ]


def test_a_lifecycle_run_walks_the_vault_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The passes after seal are planned from the index the run's first sync brought up to
    date (what the run writes is re-indexed as it goes): no second walk of every note, in a
    dry run or a real one, and both plan the same."""
    import datetime as dt

    from vaultmem import Vault
    from vaultmem.services.index import index_sync

    t0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
    Vault.init(tmp_path / "v")[0].close()
    with Vault.open(tmp_path / "v") as vault:
        for i in range(6):
            vault.remember(f"a fact about walking number {i}", tags=["walk"], importance=0.1,
                           now=t0 + i * dt.timedelta(minutes=2))
        walks: list[str] = []
        walk = index_sync.scan_vault

        def counted(root: Path, settings: Settings, **options: object) -> dict[str, object]:
            walks.append(str(options.get("folder", "")))
            return walk(root, settings, **options)  # type: ignore[arg-type]

        monkeypatch.setattr(index_sync, "scan_vault", counted)
        when = t0 + 200 * dt.timedelta(days=1)
        plan = vault.lifecycle(dry_run=True, now=when)
        assert walks == [""]
        done = vault.lifecycle(now=when)
        assert walks == ["", ""]
    planned = sorted((m.action, m.rule) for r in plan.results for m in r.planned)
    applied = sorted((m.action, m.rule) for r in done.results for m in r.applied)
    assert planned == applied and ("archive", "forget") in applied and ("seal", "seal") in [
        (m.action, m.rule) for m in done.applied
    ]


def test_a_run_plans_from_what_it_read_during_the_walk_only_when_the_walk_found_no_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seal inputs and the passes' table are read while a forked process walks the vault.
    When the walk finds nothing new they are what the plan uses (each read once); when it finds
    a change they are read again, and the plan shows the change — the same plan a run without
    a fork makes."""
    import datetime as dt

    from vaultmem import Vault
    from vaultmem.services.index import forked_workers, sync_walk
    from vaultmem.services.lifecycle import boxing, lifecycle
    from vaultmem.services.memories import memory_view

    t0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
    when = t0 + dt.timedelta(days=2)
    Vault.init(tmp_path / "v")[0].close()
    monkeypatch.setattr(sync_walk, "FORKED_WALK_FROM", 1)
    reads: list[str] = []
    read_seal, load_table = boxing.read_seal_inputs, memory_view.memory_table

    def counted_seal(*args: object) -> object:
        reads.append("seal")
        return read_seal(*args)  # type: ignore[arg-type]

    def counted_table(*args: object, **options: object) -> object:
        reads.append("table")
        return load_table(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(lifecycle, "read_seal_inputs", counted_seal)
    monkeypatch.setattr(boxing, "read_seal_inputs", counted_seal)
    monkeypatch.setattr(memory_view, "memory_table", counted_table)

    def sealed(vault: Vault) -> list[str]:
        run = vault.lifecycle(dry_run=True, now=when)
        return sorted(m.path for r in run.results if r.name == "seal" for m in r.planned
                      if m.action == "seal")

    with Vault.open(tmp_path / "v") as vault:
        for i in range(3):
            vault.remember(f"a note on rivers number {i}", tags=["rivers"],
                           now=t0 + i * dt.timedelta(minutes=2))
        vault.sync()
        before = sealed(vault)
        assert len(before) == 3 and reads == ["seal", "table"]  # read once, meanwhile
        reads.clear()
        late = (tmp_path / "v" / before[0]).read_text().replace("rivers number 0",
                                                                "rivers number 9")
        (tmp_path / "v" / "STM" / "Late river.md").write_text(
            late.replace(late.split("id: ", 1)[1].split("\n", 1)[0], "01JTESTLATERIVER0000000000")
        )
        forked = sealed(vault)
        assert "STM/Late river.md" in forked and len(forked) == 4
        assert reads == ["seal", "table", "seal", "table"]  # the walk saw a new note: again
        monkeypatch.setattr(forked_workers, "can_fork", lambda: False)
        assert sealed(vault) == forked


def test_the_seal_pass_after_a_walk_leaves_linked_memories_in_place_without_a_stat_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's walk tells the seal pass which STM memories are symbolic links: they are left
    in place with a warning, as when each memory is looked at, and no memory is stat'ed."""
    import datetime as dt

    from vaultmem import Vault
    from vaultmem.services.lifecycle import boxing

    t0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
    Vault.init(tmp_path / "v")[0].close()
    root = tmp_path / "v"
    with Vault.open(root) as vault:
        for i in range(3):
            vault.remember(f"a note on lakes number {i}", tags=["lakes"],
                           now=t0 + i * dt.timedelta(minutes=2))
        first = sorted((root / "STM").glob("*.md"))[0]
        (root / "Sources").mkdir()
        first.rename(root / "Sources" / first.name)
        first.symlink_to(Path("..") / "Sources" / first.name)
        (root / "vaultmem.toml").write_text('[index]\nexclude = ["Sources/*"]\n')

    def no_stat(root: Path, paths: list[str]) -> set[str]:
        raise AssertionError("the walk already told which notes are links")

    monkeypatch.setattr(boxing, "linked_notes", no_stat)
    with Vault.open(root) as vault:
        run = vault.lifecycle(dry_run=True, now=t0 + dt.timedelta(days=2))
        moved = sorted(m.path for r in run.results if r.name == "seal" for m in r.planned
                       if m.action == "seal")
        link = f"STM/{first.name}"
        assert len(moved) == 2 and link not in moved
        assert any(w.startswith(f"{link}: a symbolic link; left in place") for w in vault.warnings)
