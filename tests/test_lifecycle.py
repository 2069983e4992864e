"""Lifecycle passes end to end: plans with reasons, immunity, journal, undo, lock, git."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot_files

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.errors import LockedError, NoteChangedError

T0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    """A new vault where a lone memory is boxed too (``box_min_members = 1``): these tests
    follow single memories through the passes; episodes are tested in test_boxes.py."""
    Vault.init(tmp_path / "v")[0].close()
    settings = tmp_path / "v" / "vaultmem.toml"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(
        text.replace("box_min_members = 2", "box_min_members = 1"), encoding="utf-8"
    )
    return Vault.open(tmp_path / "v")


def cli(vault: Vault, *args: str, input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(vault.root)], input=input)
    return result.exit_code, result.stdout, result.stderr


def test_dry_run_changes_nothing_and_equals_the_real_run(vault: Vault) -> None:
    for i in range(4):
        vault.remember(f"stale fact {i}", tags=["x"], now=T0 + i * dt.timedelta(minutes=1))
    busy = vault.remember("busy fact", tags=["y"], now=T0 + DAY)
    for h in range(4):
        vault.touch(busy.path, now=T0 + DAY + dt.timedelta(hours=h + 1))
    before = snapshot_files(vault.root)
    when = T0 + 60 * DAY
    plan = vault.lifecycle(dry_run=True, now=when)
    assert snapshot_files(vault.root) == before
    applied = vault.lifecycle(now=when)
    planned = [(m.path, m.action, m.rule) for r in plan.results for m in r.planned]
    done = [(m.path, m.action, m.rule) for r in applied.results for m in r.applied]
    assert sorted((a, r) for _, a, r in planned) == sorted((a, r) for _, a, r in done)
    assert {r.name: len(r.applied) for r in applied.results}["seal"] == 7  # 2 boxes + 5 members


def test_passes_are_idempotent_at_the_same_now(vault: Vault) -> None:
    for i in range(3):
        vault.remember(f"note {i}", tags=["a"], now=T0 + i * dt.timedelta(minutes=5))
    when = T0 + 40 * DAY
    first = vault.lifecycle(now=when)
    assert first.applied
    snapshot = snapshot_files(vault.root)
    second = vault.lifecycle(now=when)
    assert second.applied == []
    assert second.journal is None
    assert snapshot_files(vault.root) == snapshot


def test_every_move_states_rule_and_numbers(vault: Vault) -> None:
    vault.remember("old stuff", importance=0.2, now=T0)
    code, out, _ = cli(vault, "lifecycle", "--now", (T0 + DAY).isoformat())
    assert code == 0
    assert "sealed STM/old stuff.md → Boxes/2026-11-01/" in out
    assert "(seal: idle" in out
    # episodic now (30-day half-life): seed 004's age rule archives it after 90+ days
    code, out, _ = cli(vault, "lifecycle", "--now", (T0 + 200 * DAY).isoformat())
    box = r"Boxes/2026-11-01/box-old-stuff-[0-9a-z]{6}"
    assert re.search(f"archived {box}/old stuff.md → Archive/", out)
    assert "(forget: 200 d old, retention 0.1" in out and "< 0.15, importance 0.20 < 0.3)" in out
    assert "(box: its only member was archived)" in out
    journal = next((vault.sidecar / "journal").glob("*.jsonl"))
    assert "old stuff" in journal.read_text()


def test_immunity_and_protected_categories(vault: Vault) -> None:
    old = T0 - 200 * DAY
    cases = {
        "pinned one": dict(pinned=True),
        "important one": dict(imp=4),
        "semantic one": dict(layer="semantic"),
        "plain one": {},
    }
    for title, options in cases.items():
        vault.remember(title, title=title, now=old, **options)
    used = vault.remember("used one", title="used one", now=old)
    for i in range(3):
        vault.touch(used.path, now=old + dt.timedelta(minutes=i + 1))
    run = vault.lifecycle(("forget",), now=T0)
    assert [Path(m.path).name for m in run.applied] == ["plain one.md"]


def test_age_rule_spares_protected_categories(tmp_path: Path) -> None:
    root = tmp_path / "v"
    Vault.init(root)
    # a slow layer so the score stays above 0.05 and only the seed 004 age rule can apply
    (root / "vaultmem.toml").write_text("[layers.working]\nhalf_life_days = 20\n")
    with Vault.open(root) as vault:
        vault.remember("an old fact", title="old fact", importance=0.1, now=T0 - 120 * DAY)
        vault.remember(
            "an old preference",
            title="old preference",
            importance=0.1,
            category="preference",
            now=T0 - 120 * DAY,
        )
        run = vault.lifecycle(("forget",), now=T0)
    assert [Path(m.path).name for m in run.applied] == ["old fact.md"]
    assert "120 d old, retention" in run.applied[0].reason


def test_expire_speculative_and_resolved_commitments(vault: Vault) -> None:
    vault.remember("maybe true", title="maybe", confidence=0.3, imp=5, now=T0 - 40 * DAY)
    done = vault.remember(
        "ship it", title="ship it", category="commitment", imp=5, now=T0 - 200 * DAY
    )
    vault.edit(done.path, lambda f: {"resolved_at": T0 - 100 * DAY})
    vault.remember("sure thing", title="sure", confidence=0.9, imp=5, now=T0 - 40 * DAY)
    run = vault.lifecycle(("expire",), now=T0)
    reasons = {Path(m.path).name: m.reason for m in run.applied}
    assert set(reasons) == {"maybe.md", "ship it.md"}
    assert "speculative (confidence 0.30 < 0.4)" in reasons["maybe.md"]
    assert "resolved 100 d ago > 90 d" in reasons["ship it.md"]
    assert (vault.root / "Archive" / "maybe.md").exists()


def test_prune_keeps_grace_period_and_cap(tmp_path: Path) -> None:
    root = tmp_path / "v"
    Vault.init(root)
    (root / "vaultmem.toml").write_text("[lifecycle]\nmax_active = 5\nprune_batch = 2\n")
    with Vault.open(root) as vault:
        for i in range(6):
            vault.remember(
                f"older {i}",
                title=f"older {i}",
                importance=0.25,
                now=T0 - 2 * DAY + i * dt.timedelta(minutes=1),
            )
        for i in range(3):
            vault.remember(f"fresh {i}", title=f"fresh {i}", now=T0 - dt.timedelta(hours=1))
        run = vault.lifecycle(("prune",), now=T0)
    names = sorted(Path(m.path).name for m in run.applied)
    assert len(names) == 4  # 9 active, cap 5: two batches of 2
    assert all(name.startswith("older") for name in names)  # fresh ones are in the grace period
    assert "9 active > max_active 5" in run.applied[0].reason


def test_undo_restores_files_and_lines_byte_for_byte(vault: Vault) -> None:
    for i in range(5):
        vault.remember(f"memo {i}", tags=["t"], now=T0 + i * dt.timedelta(minutes=2))
    vault.remember("other topic", tags=["z"], now=T0 + dt.timedelta(minutes=20))
    # CRLF and a comment in one note survive the round trip
    crlf = vault.root / "STM" / "memo 0.md"
    crlf.write_bytes(
        crlf.read_bytes().replace(b"\n", b"\r\n").replace(b"pinned:", b"# mine\r\npinned:")
    )
    before = snapshot_files(vault.root)
    run = vault.lifecycle(now=T0 + 80 * DAY)
    assert len(run.applied) > 6
    assert snapshot_files(vault.root) != before
    report = vault.undo()
    assert len(report.restored) == len(run.applied) + 0 or report.restored
    assert snapshot_files(vault.root) == before
    assert not any((vault.root / "Boxes").rglob("*.md"))


def test_an_undo_removes_no_folder_reached_through_a_link(vault: Vault) -> None:
    for i in range(3):
        vault.remember(f"memo {i}", tags=["t"], now=T0 + i * dt.timedelta(minutes=2))
    run = vault.lifecycle(("seal",), now=T0 + DAY)
    boxed = [m.destination for m in run.applied if m.destination and "/" in m.destination]
    day = vault.root / Path(boxed[0]).parents[-3]  # Boxes/<date>
    assert day.parent.name == "Boxes" and day.is_dir()
    # the person moves the day's folder to Projects/ and leaves a link in its place
    (vault.root / "Projects").mkdir()
    moved = vault.root / "Projects" / day.name
    day.rename(moved)
    day.symlink_to(moved)
    boxes_there = sorted(p.name for p in moved.iterdir() if p.is_dir())
    assert boxes_there
    vault.undo()
    assert sorted((vault.root / "STM").glob("memo *.md"))  # the memories are back
    # the box folders the undo emptied are the person's now: not removed through the link
    assert sorted(p.name for p in moved.iterdir() if p.is_dir()) == boxes_there
    assert day.is_symlink()


def test_undo_refuses_naming_the_changed_note(vault: Vault) -> None:
    vault.remember("will move", now=T0)
    run = vault.lifecycle(now=T0 + 80 * DAY)
    moved = vault.root / run.applied[-1].destination  # type: ignore[operator]
    moved.write_text(moved.read_text() + "\nmy edit\n")
    after = snapshot_files(vault.root)
    with pytest.raises(NoteChangedError) as err:
        vault.undo()
    assert str(run.applied[-1].destination) in str(err.value)
    assert snapshot_files(vault.root) == after
    code, _, stderr = cli(vault, "undo")
    assert code == 1 and "changed after the pass; undo refused" in stderr


def test_a_save_between_the_undo_check_and_the_revert_is_kept(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The undo checks every note first, then reverts each owned against the bytes it checked:
    a person's save landing in between is kept (the undo stops there, naming the note)."""
    from vaultmem.store import journal_undo

    vault.remember("will move", now=T0)
    run = vault.lifecycle(now=T0 + 80 * DAY)
    move = next(m for m in run.applied if m.destination and m.destination != m.path)
    moved = vault.root / str(move.destination)
    real_steps = journal_undo._undo_steps

    def check_then_save(root: Path, operations: list[object]) -> object:
        checked = real_steps(root, operations)  # type: ignore[arg-type]
        moved.write_text(moved.read_text() + "\nsaved just now\n")
        return checked

    monkeypatch.setattr(journal_undo, "_undo_steps", check_then_save)
    with pytest.raises(NoteChangedError):
        vault.undo()
    assert moved.read_text().endswith("\nsaved just now\n")  # where the pass left it, kept


def test_undo_with_nothing_to_undo(vault: Vault) -> None:
    code, _, err = cli(vault, "undo")
    assert code == 1 and "nothing to undo" in err


def test_second_pass_is_told_one_is_running(vault: Vault) -> None:
    vault.remember("x", now=T0)
    lock = vault.sidecar / "lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from filelock import FileLock; l = FileLock(sys.argv[1]); l.acquire(); "
            "print('locked', flush=True); sys.stdin.read()",
            str(lock),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(LockedError):
            vault.lifecycle(now=T0 + DAY)
        code, _, err = cli(vault, "lifecycle", "--now", (T0 + DAY).isoformat())
        assert code == 1 and "a pass is running" in err
    finally:
        holder.communicate("")
    assert vault.lifecycle(now=T0 + DAY).applied


def test_unmanaged_notes_are_never_moved_or_edited(vault: Vault) -> None:
    own = vault.root / "STM" / "my own note.md"
    own.write_text("---\ntags: [x]\ncreated: 2020-01-01\n---\nmine, old, never touched\n")
    typed = vault.root / "Notes" / "outside.md"
    typed.parent.mkdir()
    typed.write_text("---\ntype: memory\ncreated: 2020-01-01\n---\na memory outside the folders\n")
    before = snapshot_files(vault.root)
    vault.lifecycle(now=T0 + 400 * DAY)
    assert own.read_bytes() == before["STM/my own note.md"]
    assert typed.read_bytes() == before["Notes/outside.md"]


def test_links_resolve_to_the_same_notes_after_a_pass(vault: Vault) -> None:
    a = vault.remember("alpha", tags=["a"], now=T0)
    (vault.root / "Hub.md").write_text(f"[[{a.title}]] and [[beta]]\n")
    vault.remember("beta links [[alpha]]", title="beta", tags=["a"], now=T0)
    vault.sync()
    before = {
        (r.source.rsplit("/", 1)[-1], r.target): Path(r.resolved or "").name
        for r in vault.index.all_links()
    }
    vault.lifecycle(now=T0 + DAY)
    vault.sync()
    after = {
        (r.source.rsplit("/", 1)[-1], r.target): Path(r.resolved or "").name
        for r in vault.index.all_links()
    }
    assert {k: after[k] for k in before} == before and all(before.values())
    assert any(r.target.startswith("box-") for r in vault.index.all_links())  # box: links too


def test_box_archived_with_its_last_member(vault: Vault) -> None:
    vault.remember("lonely", tags=["solo"], importance=0.2, now=T0)
    vault.lifecycle(now=T0 + DAY)
    box = next((vault.root / "Boxes").rglob("box-*.md"))
    vault.lifecycle(now=T0 + 200 * DAY)
    assert not box.exists()
    archived = vault.root / "Archive" / box.name
    assert "status: archived" in archived.read_text()


def test_lifecycle_commit_records_exactly_the_pass(vault: Vault) -> None:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=vault.root, capture_output=True, text=True, check=True
        ).stdout

    git("init", "-q")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    vault.remember("first", tags=["a"], now=T0)
    vault.remember("second", tags=["a"], now=T0 + dt.timedelta(minutes=1))
    git("add", "-A")
    git("commit", "-qm", "start")
    later = (T0 + DAY).isoformat()
    for command, last in (("lifecycle", "nothing changed"), ("seal", "3 planned, nothing changed")):
        code, out, err = cli(vault, command, "--commit", "--dry-run", "--now", later)
        assert code == 0, err  # a dry run commits nothing, and says so
        assert out.splitlines()[-1] == f"(dry run: {last}, nothing committed)"
    assert git("log", "--format=%s") == "start\n"
    (vault.root / "unrelated.md").write_text("a person's work in progress\n")
    code, out, err = cli(vault, "lifecycle", "--commit", "--now", (T0 + DAY).isoformat())
    assert code == 0, err
    message = git("log", "-1", "--format=%B")
    assert message.startswith("vaultmem lifecycle: ")
    assert "sealed" in message and "STM/first.md -> Boxes/2026-11-01/" in message
    status = git("show", "--name-status", "-M", "--format=", "HEAD").splitlines()
    assert sum(line.startswith("R") for line in status) == 2
    assert sum(line.startswith("A") for line in status) == 1  # the box note
    assert "unrelated.md" not in git("show", "--name-only", "--format=", "HEAD")
    assert "?? unrelated.md" in git("status", "--porcelain")


def test_commit_outside_git_is_refused_before_anything_changes(vault: Vault) -> None:
    journal = vault.root / ".vaultmem" / "journal"
    later = (T0 + DAY).isoformat()
    code, out, err = cli(vault, "lifecycle", "--commit", "--now", later)  # nothing to do: still
    assert code == 1 and out == ""
    assert err.startswith("Error: ") and err.count("\n") == 1  # one line
    assert "not in a git repository" in err and "`git init`" in err and "drop --commit" in err
    vault.remember("first", now=T0)
    before = snapshot_files(vault.root)
    for command in ("lifecycle", "seal"):
        code, out, err = cli(vault, command, "--commit", "--now", later)
        assert code == 1 and "`git init`" in err and "seal" not in out
        code, out, _ = cli(vault, command, "--commit", "--json", "--now", later)
        assert code == 1 and json.loads(out)["exit_code"] == 1  # one object: the error
        assert "`git init`" in json.loads(out)["error"]
    assert snapshot_files(vault.root) == before
    assert not list(journal.glob("*.jsonl"))  # no pass was applied
    assert cli(vault, "lifecycle", "--now", later)[0] == 0  # without --commit it runs
    changed = snapshot_files(vault.root)
    code, out, err = cli(vault, "undo", "--commit")
    assert code == 1 and "`git init`" in err and "drop --commit" in err and out == ""
    assert snapshot_files(vault.root) == changed  # the undo was refused, not half done
    assert [p.name.endswith(".undone.jsonl") for p in journal.glob("*.jsonl")] == [False]
    code, out, err = cli(vault, "undo")
    assert code == 0 and "undid lifecycle" in out, err
    assert snapshot_files(vault.root) == before


def test_json_output_of_a_run(vault: Vault) -> None:
    vault.remember("first", now=T0)
    code, out, _ = cli(vault, "lifecycle", "--json", "--dry-run", "--now", (T0 + DAY).isoformat())
    data = json.loads(out)
    assert data["dry_run"] is True
    assert [p["pass"] for p in data["passes"]] == ["seal", "promote", "expire", "forget", "prune"]
    assert data["passes"][0]["planned"][0]["rule"] == "seal"


@pytest.mark.parametrize("taken_by", ["note", "broken link"])
def test_a_move_onto_a_taken_place_is_skipped_and_both_files_are_kept(
    vault: Vault, taken_by: str
) -> None:
    from vaultmem.core.lifecycle.lifecycle_plan import Move
    from vaultmem.services.lifecycle.pass_session import PassResult, PassSession

    memory = vault.remember("kept where it is", now=T0)
    place = vault.root / "LTM" / Path(memory.path).name
    place.parent.mkdir(exist_ok=True)
    if taken_by == "note":
        place.write_text("# A person's note of that name\n", encoding="utf-8")
    else:
        place.symlink_to(vault.root / "gone.md")
    before = snapshot_files(vault.root)
    move = Move(
        memory.path, memory.fields.id, "promote", f"LTM/{place.name}", {"layer": "semantic"}
    )
    with PassSession(vault, "promote", T0 + DAY, dry_run=False) as session:
        result = session.run(PassResult("promote", [move], dry_run=False))
    assert result.applied == []
    assert [why for _, why in result.skipped] == [
        f"LTM/{place.name}: already exists; {memory.path} not moved there"
    ]
    assert snapshot_files(vault.root) == before
    assert place.is_symlink() == (taken_by == "broken link")


def test_a_run_leaves_no_emptied_folder_and_tries_none_it_left_a_note_in(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.generate_vault import REFERENCE_TIME
    from vaultmem.services.lifecycle import emptied_folders

    tried: list[Path] = []
    real_rmdir = os.rmdir

    def recording_rmdir(path: str | Path) -> None:
        tried.append(Path(path))
        real_rmdir(path)

    monkeypatch.setattr(emptied_folders.os, "rmdir", recording_rmdir)
    vault = Vault.open(generated_vault)
    vault.sync()
    run = vault.lifecycle(now=REFERENCE_TIME)
    written = {vault.root / m.destination for r in run.results for m in r.applied if m.destination}
    full = {p.parent for p in written if p.exists()}
    assert len(full) > 50  # the seal's box folders among them
    assert [p for p in tried if p in full] == []  # not one rmdir refused by a note put there
    memory_folders = [vault.root / f for f in ("STM", "LTM", "Boxes", "Archive")]
    assert [
        d for top in memory_folders for d in top.rglob("*") if d.is_dir() and not any(d.iterdir())
    ] == []
    vault.close()


def test_a_folder_swapped_for_a_link_after_the_run_leads_no_rmdir_through_it(
    tmp_path: Path,
) -> None:
    from vaultmem.services.lifecycle.emptied_folders import remove_emptied_folders

    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (outside / "d" / "box-a").mkdir(parents=True)  # empty folders of someone else's
    (vault / "Projects" / "d" / "box-a").mkdir(parents=True)  # an empty folder of the person's
    (vault / "Boxes").mkdir(parents=True)
    (vault / "Boxes" / "d").symlink_to(outside / "d")  # the box's day folder, now a link out
    (vault / "Boxes" / "e").symlink_to(vault / "Projects" / "d")  # and one to another folder
    touched = ["Boxes/d/box-a/n.md", "Boxes/e/box-a/m.md"]
    assert remove_emptied_folders(vault, touched, ["Boxes"]) == []
    assert (outside / "d" / "box-a").is_dir()
    assert (vault / "Projects" / "d" / "box-a").is_dir()
    assert (vault / "Boxes" / "d").is_symlink() and (vault / "Boxes" / "e").is_symlink()


def test_folders_a_run_emptied_go_and_those_it_left_a_note_in_stay(tmp_path: Path) -> None:
    from vaultmem.core.lifecycle.lifecycle_plan import Move
    from vaultmem.services.lifecycle.emptied_folders import places_left, remove_emptied_folders

    for folder in ("Boxes/d/box-a", "Boxes/d/box-b", "STM", "Archive"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "Boxes/d/box-b/m.md").write_text("sealed\n", encoding="utf-8")
    (tmp_path / "Archive/n.md").write_text("sealed, then archived\n", encoding="utf-8")
    moves = [
        Move("STM/m.md", "1", "seal", "Boxes/d/box-b/m.md"),
        Move("STM/n.md", "2", "seal", "Boxes/d/box-a/n.md"),
        Move("Boxes/d/box-a/n.md", "2", "archive", "Archive/n.md"),
    ]
    kept = places_left(moves)
    assert kept == {"Boxes/d/box-b/m.md", "Archive/n.md"}
    touched = [p for m in moves for p in (m.path, m.destination or m.path)]
    removed = remove_emptied_folders(tmp_path, touched, ["STM", "Boxes", "Archive"], kept)
    assert removed == ["Boxes/d/box-a"]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.md")) == [
        "Archive/n.md",
        "Boxes/d/box-b/m.md",
    ]
