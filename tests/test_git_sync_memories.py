"""Git sync never loses, fuses or hides a memory (real ``git``, two clones): uses on different
days, two memories with one title, a sync tool's conflict copy, a NUL byte in a note."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from git_clones import (
    Clones,
    cli,
    commit_all,
    fields,
    git,
    git_identity,  # noqa: F401  (autouse: vaultmem's commits have an author)
    make_clones,
    pull,
)

from vaultmem import Vault
from vaultmem.core.notes.note_text import find_conflict_markers

MARCH = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)


def _used_on_different_days(tmp_path: Path, *, driver: bool) -> tuple[Path, Path, str]:
    """A touches X on 2, 3 and 4 March, B on 2 and 5 March; B pulls. (clone B, note, text)."""
    c = make_clones(tmp_path, driver=driver)
    a = Vault.open(c.a)
    x = a.remember("Prefers ramen for lunch.", title="X", now=MARCH)
    commit_all(c.a, "X")
    git(c.a, "push", "--quiet")
    assert pull(c.b)
    b = Vault.open(c.b)
    for day in (1, 2, 3):
        a.touch("X", now=MARCH + day * DAY)
    for day in (1, 4):
        b.touch("X", now=MARCH + day * DAY)
    commit_all(c.a, "A")
    commit_all(c.b, "B")
    git(c.a, "push", "--quiet")
    merged = pull(c.b)
    assert merged == driver, git(c.b, "status").stdout
    return c.b, c.b / x.path, (c.b / x.path).read_text(encoding="utf-8")


def test_uses_on_different_days_merge_without_conflict(tmp_path: Path) -> None:
    _, note, text = _used_on_different_days(tmp_path, driver=True)
    assert not find_conflict_markers(text)
    fm = fields(note)
    assert fm["use_count"] == 1 + 3 + 2
    assert fm["use_days"] == 5  # 1, 2, 3, 4 and 5 March: every day both sides used it
    assert fm["last_used"] == (MARCH + 4 * DAY).replace(tzinfo=None)


def test_uses_on_different_days_merged_without_the_driver_are_fixed(tmp_path: Path) -> None:
    root, note, text = _used_on_different_days(tmp_path, driver=False)
    assert find_conflict_markers(text)
    code, out, _ = cli(root, "doctor", "--fix")
    assert code == 0 and "pick by hand" not in out, out
    fm = fields(note)
    # no common version in git's markers: each key by its rule, without a base
    assert fm["use_count"] == 4 and fm["use_days"] == 4  # the larger side: never more
    assert fm["last_used"] == (MARCH + 4 * DAY).replace(tzinfo=None)


def _same_title_on_two_machines(tmp_path: Path, *, driver: bool):  # type: ignore[no-untyped-def]
    c = make_clones(tmp_path, driver=driver)
    a, b = Vault.open(c.a), Vault.open(c.b)
    (c.a / "Person.md").write_text("Lunch: [[Lunch order]]\n", encoding="utf-8")
    ramen = a.remember("Lunch order: ramen", title="Lunch order", now=MARCH)
    sushi = b.remember("Lunch order: sushi", title="Lunch order", now=MARCH + DAY / 24)
    commit_all(c.a, "A")
    commit_all(c.b, "B")
    git(c.a, "push", "--quiet")
    return c, ramen.fields.id, sushi.fields.id


@pytest.mark.parametrize("how", ["--no-rebase", "--rebase"])
def test_two_memories_with_one_title_are_both_kept_by_the_driver(tmp_path: Path, how: str) -> None:
    c, ramen, sushi = _same_title_on_two_machines(tmp_path, driver=True)
    Vault.open(c.b).touch("Lunch order", now=MARCH + DAY)  # B uses its own, a commit later
    commit_all(c.b, "B uses it")
    done = git(c.b, "pull", "--quiet", how, "--no-edit", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "at one path; kept yours here and theirs as STM/Lunch order 2.md" in done.stderr
    # merge: "yours" is B's own; rebase: the upstream's, B's commits replayed onto it
    here, apart = (sushi, ramen) if how == "--no-rebase" else (ramen, sushi)
    assert fields(c.b / "STM/Lunch order.md")["id"] == here
    assert fields(c.b / "STM/Lunch order 2.md")["id"] == apart
    notes = {fields(c.b / "STM" / n)["id"]: c.b / "STM" / n
             for n in ("Lunch order.md", "Lunch order 2.md")}  # fmt: skip
    assert "Lunch order: ramen" in notes[ramen].read_text(encoding="utf-8")
    assert fields(notes[ramen])["use_count"] == 1
    assert fields(notes[sushi])["use_count"] == 2  # B's use stays with B's memory
    assert (c.b / "Person.md").read_text(encoding="utf-8") == "Lunch: [[Lunch order]]\n"
    code, out, _ = cli(c.b, "doctor")
    assert "duplicate" not in out and "conflict" not in out
    commit_all(c.b, "both lunch orders")  # the new note is committed with the next commit
    git(c.b, "push", "--quiet")
    assert pull(c.a)
    assert fields(c.a / "STM/Lunch order 2.md")["id"] == apart
    assert fields(c.a / "STM/Lunch order.md")["id"] == here


def test_two_memories_with_one_title_merged_without_the_driver_are_split(tmp_path: Path) -> None:
    c, ramen, sushi = _same_title_on_two_machines(tmp_path, driver=False)
    assert not pull(c.b)  # add/add: one note, two ids between markers
    fused = (c.b / "STM/Lunch order.md").read_text(encoding="utf-8")
    assert find_conflict_markers(fused)
    code, out, _ = cli(c.b, "doctor", "--fix")
    assert code == 0, out
    assert "fixed STM/Lunch order 2.md: two memories in one note" in out
    assert fields(c.b / "STM/Lunch order.md")["id"] == sushi
    assert fields(c.b / "STM/Lunch order 2.md")["id"] == ramen
    for name in ("Lunch order.md", "Lunch order 2.md"):
        assert not find_conflict_markers((c.b / "STM" / name).read_text(encoding="utf-8"))
    assert cli(c.b, "undo")[0] == 0
    assert (c.b / "STM/Lunch order.md").read_text(encoding="utf-8") == fused
    assert not (c.b / "STM/Lunch order 2.md").exists()


@pytest.mark.parametrize(
    "copy",
    ["X (conflicted copy 2026-11-20).md", "X.sync-conflict-20261120-101010-ABCDEFG.md", "X 2.md"],
)
def test_doctor_fix_merges_a_sync_conflict_copy_into_the_original(
    tmp_path: Path, copy: str
) -> None:
    root = tmp_path / "v"
    Vault.init(root)
    with Vault.open(root) as vault:
        x = vault.remember("Prefers ramen", title="X", now=MARCH)
        (root / "Person.md").write_text("see [[X]]\n", encoding="utf-8")
        (root / "STM" / copy).write_bytes((root / x.path).read_bytes())  # the sync tool's copy
        vault.touch("X", now=MARCH + DAY)
        vault.touch("X", now=MARCH + 2 * DAY)
        copy_text = (root / "STM" / copy).read_text(encoding="utf-8")
        (root / "STM" / copy).write_text(copy_text + "Also gyoza.\n", encoding="utf-8")
    code, out, _ = cli(root, "doctor")
    assert f"keeps STM/X.md (the original of a sync conflict copy) and merges STM/{copy}" in out
    code, out, _ = cli(root, "doctor", "--fix")
    assert code == 0, out
    assert "fixed STM/X.md: kept (the original of a sync conflict copy)" in out
    assert not (root / "STM" / copy).exists()
    fm = fields(root / "STM/X.md")
    assert fm["id"] == x.fields.id and fm["use_count"] == 3  # the larger side (no base)
    assert "Also gyoza." in (root / "STM/X.md").read_text(encoding="utf-8")
    code, out, _ = cli(root, "recall", "ramen gyoza")
    assert "STM/X.md" in out
    code, out, _ = cli(root, "doctor")
    assert code == 0 and "unresolved" not in out  # [[X]] still resolves


def _nul_memory_changed_on_both(
    tmp_path: Path, *, driver: bool, a_line: str, b_line: str
) -> tuple[Clones, str, Path, Path]:
    """Memory X holds a NUL byte (git calls it binary); clone A touches it a day later and adds
    ``a_line`` under "A notes:", B two days later and ``b_line`` under "B notes:"; both commit.
    (the clones, X's path, its note in A, its note in B)."""
    c = make_clones(tmp_path, driver=driver)
    a = Vault.open(c.a)
    x = a.remember("Prefers ramen\n\nA notes:\n\nB notes:\n", title="X", now=MARCH)
    note_a = c.a / x.path
    note_a.write_text(note_a.read_text().replace("Prefers ramen", "Prefers\0ramen"))
    commit_all(c.a, "X")
    git(c.a, "push", "--quiet")
    assert pull(c.b)
    b = Vault.open(c.b)
    note_b = c.b / x.path
    a.touch("X", now=MARCH + DAY)
    note_a.write_text(note_a.read_text().replace("A notes:\n", f"A notes:\n- {a_line}\n"))
    b.touch("X", now=MARCH + 2 * DAY)
    note_b.write_text(note_b.read_text().replace("B notes:\n", f"B notes:\n- {b_line}\n"))
    commit_all(c.a, "A")
    commit_all(c.b, "B")
    return c, x.path, note_a, note_b


def test_a_nul_byte_in_a_memory_merges_both_sides(tmp_path: Path) -> None:
    c, _, note_a, _ = _nul_memory_changed_on_both(
        tmp_path, driver=True, a_line="ours line", b_line="theirs line"
    )
    git(c.b, "push", "--quiet")
    assert pull(c.a), git(c.a, "status").stdout  # git calls it binary; the driver merges it
    text = note_a.read_text(encoding="utf-8")
    assert "Prefers\0ramen" in text and "- ours line\n" in text and "- theirs line\n" in text
    assert fields(note_a)["use_count"] == 3


def test_when_nothing_can_merge_both_sides_stay_between_markers(tmp_path: Path) -> None:
    import subprocess
    import sys

    files = {}
    base = b"---\nid: x\ntype: memory\n---\ncaf\xe9\0\nline\n"  # not UTF-8, and a NUL
    for name, data in (("base", base), ("ours", base.replace(b"line", b"ours")),
                       ("theirs", base.replace(b"line", b"theirs"))):  # fmt: skip
        files[name] = tmp_path / name
        files[name].write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-m", "vaultmem", "merge-driver", str(files["base"]), str(files["ours"]),
         str(files["theirs"]), "STM/x.md"], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1 and "conflict" in done.stderr
    merged = files["ours"].read_bytes()
    assert b"caf\xe9\0\n" in merged and b"ours\n" in merged and b"theirs\n" in merged
    assert b"<<<<<<< ours" in merged and b">>>>>>> theirs" in merged


def test_a_note_git_kept_one_side_of_is_flagged_and_merged_by_doctor_fix(tmp_path: Path) -> None:
    c, path, _, note_b = _nul_memory_changed_on_both(  # B: no driver; git calls the note binary
        tmp_path, driver=False, a_line="theirs line", b_line="ours line"
    )
    git(c.a, "push", "--quiet")
    assert not pull(c.b)  # binary: git keeps B's side, no markers
    kept = note_b.read_text(encoding="utf-8")
    assert "- theirs line" not in kept and not find_conflict_markers(kept)
    code, out, _ = cli(c.b, "doctor")
    assert code == 1 and f"[unmerged] {path}" in out and "doctor --fix" in out
    code, out, _ = cli(c.b, "doctor", "--fix")
    assert code == 0 and f"fixed {path}: git kept one side" in out, out
    text = note_b.read_text(encoding="utf-8")
    assert "- ours line\n" in text and "- theirs line\n" in text and "Prefers\0ramen" in text
    assert fields(note_b)["use_count"] == 3  # counted against git's common version
    assert cli(c.b, "undo")[0] == 0 and note_b.read_text(encoding="utf-8") == kept
