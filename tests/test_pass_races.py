"""Passes among other writers: a note saved or deleted mid-pass is skipped and reported as
skipped (never as applied, never listed by its box); notes a pass cannot write are left alone
every time; a note in a folder its status contradicts is reported and repaired."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot_files

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.services.lifecycle import pass_session
from vaultmem.store.note_files import NoteSnapshot

T0 = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
LATER = T0 + 80 * DAY


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    v, _ = Vault.init(tmp_path / "v")
    return v


def cli(vault: Vault, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(vault.root)])
    return result.exit_code, result.stdout, result.stderr


def _three(vault: Vault) -> list[str]:
    return [
        vault.remember(
            f"fact {i} on gardens", tags=["garden"], link=False, now=T0 + i * 60 * 1e-6 * DAY
        ).path
        for i in range(3)
    ]


def _race_on_read(
    monkeypatch: pytest.MonkeyPatch, victim: str, save: Callable[[Path], None], *, after: bool
) -> None:
    """A person's save of ``victim`` just before or just after the pass reads it."""
    real = pass_session.read_note

    def racing_read(path: Path) -> NoteSnapshot:
        hit = path.as_posix().endswith("/" + victim.rsplit("/", 1)[-1])
        if hit and not after:
            save(path)
        snapshot = real(path)
        if hit and after:
            save(path)
        return snapshot

    monkeypatch.setattr(pass_session, "read_note", racing_read)


def _append(path: Path) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("a line the person added\n")


@pytest.mark.parametrize("after", [True, False], ids=["save-after-read", "save-after-plan"])
def test_a_member_saved_mid_pass_is_skipped_reported_and_not_listed_by_its_box(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, after: bool
) -> None:
    paths = _three(vault)
    victim = paths[1]
    _race_on_read(monkeypatch, victim, _append, after=after)
    run = vault.lifecycle(("seal",), now=T0 + DAY)
    seal = run.results[0]
    assert victim not in [m.path for m in seal.applied]
    skipped = {m.path: why for m, why in seal.skipped}
    assert victim in skipped and "left alone" in skipped[victim]
    assert run.as_dict()["passes"][0]["skipped"][0]["path"] == victim  # type: ignore[index]
    text = (vault.root / victim).read_text(encoding="utf-8")
    assert text.endswith("a line the person added\n") and "box:" not in text
    boxes = [p for p in (vault.root / "Boxes").rglob("*.md") if p.parent.parent.name == "Boxes"]
    assert len(boxes) == 1
    listed = boxes[0].read_text(encoding="utf-8")
    title = victim.rsplit("/", 1)[-1].removesuffix(".md")
    assert title not in listed
    for other in (paths[0], paths[2]):
        assert other.rsplit("/", 1)[-1].removesuffix(".md") in listed
    # the pass's journal holds the skipped move as skipped: undo restores the rest exactly
    assert vault.undo().restored


def test_a_member_deleted_mid_pass_stays_deleted(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = _three(vault)
    victim = paths[0]
    _race_on_read(monkeypatch, victim, Path.unlink, after=True)
    run = vault.lifecycle(("seal",), now=T0 + DAY)
    assert victim in {m.path for m, _ in run.results[0].skipped}
    name = victim.rsplit("/", 1)[-1]
    assert not [p for p in vault.root.rglob(name)]


def test_a_note_in_archive_with_status_active_is_reported_and_repaired(vault: Vault) -> None:
    memory = vault.remember("kept for later", link=False, now=T0)
    source = vault.root / memory.path
    target = vault.root / "Archive" / source.name
    target.parent.mkdir(exist_ok=True)
    source.rename(target)  # a crash between a move and its field edit, or a drag in Obsidian
    code, out, _ = cli(vault, "doctor", "--json")
    report = json.loads(out)
    found = [f for f in report["problems"] if f["kind"] == "misplaced"]
    assert code == 1 and found and found[0]["path"] == f"Archive/{source.name}"
    assert "status: active" in found[0]["detail"]
    run = vault.lifecycle(now=T0 + DAY)
    assert run.results[0].name == "repair"
    assert [m.path for m in run.results[0].applied] == [f"Archive/{source.name}"]
    assert "status: archived" in target.read_text(encoding="utf-8")
    code, out, _ = cli(vault, "doctor", "--json")
    assert not [f for f in json.loads(out)["problems"] if f["kind"] == "misplaced"]
    assert vault.lifecycle(now=T0 + DAY).applied == []


def test_a_memory_marked_archived_in_stm_is_moved_to_archive(vault: Vault) -> None:
    memory = vault.remember("done with this", link=False, now=T0)
    path = vault.root / memory.path
    path.write_text(
        path.read_text(encoding="utf-8").replace("status: active", "status: archived"),
        encoding="utf-8",
    )
    run = vault.lifecycle(now=T0 + DAY)
    assert not path.exists()
    assert (vault.root / "Archive" / path.name).is_file()
    assert run.results[0].name == "repair"


def test_every_status_that_contradicts_its_folder_is_found_and_nothing_else(
    vault: Vault,
) -> None:
    """The index hands over only the candidates (a filter in SQL), each decided as before: the
    four contradictions of "Lifecycle", none for a status that fits or a folder passes ignore."""
    from vaultmem.services.lifecycle.placement import misplaced

    cases = {  # where it lies, its status → the repair, or None
        ("Archive", "active"): ("edit", "set status: archived"),
        ("Archive", "promoted"): ("edit", "set status: archived"),
        ("LTM", "active"): ("edit", "set status: promoted"),
        ("STM", "archived"): ("archive", "move it to Archive/"),
        ("LTM", "archived"): ("archive", "move it to Archive/"),
        ("Boxes/2026-11-01/box-x", "promoted"): ("promote", "move it to LTM/"),
        ("STM", "promoted"): ("promote", "move it to LTM/"),
        ("STM", "active"): None,
        ("Boxes/2026-11-01/box-x", "active"): None,
        ("LTM", "promoted"): None,
        ("Archive", "archived"): None,
        ("Projects", "archived"): None,
        ("Projects", "promoted"): None,
    }
    expected = {}
    for i, ((folder, status), repair) in enumerate(cases.items()):
        memory = vault.remember(f"placed memory number {i}", link=False, now=T0)
        source = vault.root / memory.path
        target = vault.root / folder / f"placed {i}.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.read_text(encoding="utf-8").replace(
            "status: active", f"status: {status}"), encoding="utf-8")
        source.unlink()
        if repair is not None:
            expected[f"{folder}/placed {i}.md"] = repair
    vault.sync()
    found = {m.path: (m.fix.action, m.fix.reason) for m in misplaced(vault, T0 + DAY)}
    assert found == expected


def _memory_text(note_id: str, extra: str = "") -> str:
    return (
        f"---\nid: {note_id}\ntype: memory\nstatus: active\nlayer: working\n"
        f"created: 2026-01-01T09:00:00\nlast_used: 2026-01-01T09:00:00\nuse_count: 1\n"
        f"importance: 0.1\ntags: [odd]\n{extra}---\nAn old memory.\n"
    )


def test_passes_leave_unwritable_and_wrong_typed_notes_alone_every_time(vault: Vault) -> None:
    stm = vault.root / "STM"
    (stm / "latin1.md").write_bytes(_memory_text("L1").encode() + "caf\xe9\n".encode("latin-1"))
    (stm / "wrong type.md").write_text(_memory_text("W1", "strength: high\n"), encoding="utf-8")
    (stm / "conflicted.md").write_text(
        _memory_text("C1") + "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n",
        encoding="utf-8",
    )
    for i in range(2):
        vault.remember(f"normal memory {i}", tags=["n"], link=False, now=T0 + i * 1e-3 * DAY)
    first = vault.lifecycle(now=LATER)
    moved = {m.path for m in first.applied}
    assert not moved & {"STM/latin1.md", "STM/wrong type.md", "STM/conflicted.md"}
    # notes it must not write are left out and said so (naming the problem); nothing else
    skipped = {m.path: why for r in first.results for m, why in r.skipped}
    assert set(skipped) <= {"STM/latin1.md", "STM/conflicted.md"}
    for path, why in skipped.items():
        assert "not UTF-8" in why or "conflict markers" in why, (path, why)
    for name in ("latin1.md", "wrong type.md", "conflicted.md"):
        assert (stm / name).is_file()
    boxes = sorted(p.name for p in (vault.root / "Boxes").rglob("*.md"))
    snapshot = snapshot_files(vault.root)
    for _ in range(2):
        again = vault.lifecycle(now=LATER)
        assert again.applied == [] and again.journal is None
        assert snapshot_files(vault.root) == snapshot
    assert sorted(p.name for p in (vault.root / "Boxes").rglob("*.md")) == boxes
    code, out, _ = cli(vault, "doctor", "--json")
    report = json.loads(out)
    kinds = {(f["kind"], f["path"]) for f in report["problems"] + report["warnings"]}
    assert ("wrong-type", "STM/wrong type.md") in kinds
    assert ("not-utf8", "STM/latin1.md") in kinds
    assert ("conflict-markers", "STM/conflicted.md") in kinds


def test_a_full_pass_twice_at_the_same_now_changes_nothing_the_second_time(
    vault: Vault,
) -> None:
    for i in range(30):
        vault.remember(
            f"memory {i} about topic {i % 4}",
            tags=[f"t{i % 4}"],
            importance=0.1 if i % 3 else 0.9,
            link=False,
            now=T0 + i * dt.timedelta(minutes=20),
        )
    first = vault.lifecycle(now=LATER)
    assert first.applied
    snapshot = snapshot_files(vault.root)
    second = vault.lifecycle(now=LATER)
    assert second.applied == [] and second.journal is None
    assert snapshot_files(vault.root) == snapshot


def test_a_folder_swapped_for_a_link_out_after_a_batch_was_prepared_moves_nothing(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The notes of a batch are read and checked ahead; when their folder then becomes a link
    to elsewhere holding the very same bytes, each note is confined again as it is moved, so
    nothing outside the vault is moved in, written or removed."""
    paths = _three(vault)
    stm = vault.root / "STM"
    outside = tmp_path / "outside"
    real_prepare = pass_session.PassSession.prepare
    around: dict[str, bytes] = {}

    def prepare_then_swap(self: pass_session.PassSession, *args: object, **kwargs: object) -> None:
        real_prepare(self, *args, **kwargs)  # type: ignore[arg-type]
        if not outside.exists():  # same names, same bytes: every hash check would pass
            shutil.copytree(stm, outside, ignore=shutil.ignore_patterns(".*"))
            stm.rename(vault.root / "STM moved away")
            stm.symlink_to(outside, target_is_directory=True)
            around.update(snapshot_files(outside))

    monkeypatch.setattr(pass_session.PassSession, "prepare", prepare_then_swap)
    run = vault.lifecycle(("seal",), now=T0 + DAY)
    seal = run.results[0]
    assert sorted(Path(p).name for p in around) == sorted(Path(p).name for p in paths)
    assert seal.applied == []
    skipped = {m.path: why for m, why in seal.skipped}
    assert set(paths) <= set(skipped)
    assert all("outside the vault" in skipped[p] for p in paths), skipped
    assert snapshot_files(outside) == around
    assert not list((vault.root / "Boxes").rglob("*.md"))


def test_a_kept_path_outside_the_vault_is_refused_before_anything_is_read(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``keep`` paths (Python API) are confined before the note is read, not after."""
    from vaultmem.errors import UnsafePathError
    from vaultmem.services.lifecycle.pass_commands import run_lifecycle

    _three(vault)
    vault.sync()
    outside = tmp_path / "outside.md"
    outside.write_text("---\ntype: memory\n---\nnot the vault's\n", encoding="utf-8")
    read: list[Path] = []
    real = pass_session.read_note
    monkeypatch.setattr(pass_session, "read_note", lambda path: read.append(path) or real(path))
    before = snapshot_files(vault.root)
    with pytest.raises(UnsafePathError):
        run_lifecycle(vault, ("forget",), now=LATER, keep=("../outside.md",))
    assert all(vault.root in p.resolve().parents for p in read)
    assert outside.read_text(encoding="utf-8").endswith("not the vault's\n")
    assert {k: v for k, v in snapshot_files(vault.root).items() if ".vaultmem" not in k} == {
        k: v for k, v in before.items() if ".vaultmem" not in k
    }
