"""Git sync between two clones: the merge driver, conflicted notes, converging passes,
``lifecycle --commit`` and ``doctor --fix`` — all with the real ``git`` binary."""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from git_clones import (
    cli,
    commit_all,
    fields,
    git,
    git_identity,  # noqa: F401  (autouse: vaultmem's commits have an author)
    make_clones,
    memory_notes,
    pull,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes.note_merge import conflict_sides, merge_note
from vaultmem.core.notes.note_text import find_conflict_markers, parse_frontmatter, split_note
from vaultmem.services.sync.merge_driver import git_merge_lines

T0 = dt.datetime(2026, 11, 20, 9, 0, tzinfo=dt.UTC)
HOUR = dt.timedelta(hours=1)
DAY = dt.timedelta(days=1)


def at(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S")


# --- the merge driver on its own ----------------------------------------------------------------

BASE = """---
id: 01TESTMEMORY0000000000000X
type: memory
status: active
layer: working
created: 2026-11-20T09:00:00
last_used: 2026-11-20T09:00:00
use_count: 2
strength: 1.0
confidence: 0.9
tags: [editor, ui]
# a comment the person wrote
---
Prefers dark themes.
"""


def test_driver_merges_each_key_by_its_meaning() -> None:
    ours = (BASE.replace("last_used: 2026-11-20T09:00:00", "last_used: 2026-11-21T10:00:00")
            .replace("use_count: 2", "use_count: 5").replace("strength: 1.0", "strength: 1.1")
            .replace("tags: [editor, ui]", "tags: [editor, ui, fonts]"))  # fmt: skip
    theirs = (BASE.replace("last_used: 2026-11-20T09:00:00", "last_used: 2026-11-22T08:00:00")
              .replace("use_count: 2", "use_count: 4").replace("strength: 1.0", "strength: 1.2")
              .replace("tags: [editor, ui]", "tags: [editor, dark]")
              .replace("themes.\n", "themes.\nAlso in the terminal.\n"))  # fmt: skip
    result = merge_note(BASE, ours, theirs, git_merge_lines)
    assert result.clean
    fm = parse_frontmatter(split_note(result.text).yaml)
    assert fm["use_count"] == 2 + 3 + 2  # base + both sides' increments
    assert fm["last_used"] == dt.datetime(2026, 11, 22, 8, 0)  # the latest
    assert fm["strength"] == pytest.approx(1.3)  # 1.0 + 0.1 + 0.2
    assert fm["tags"] == ["editor", "fonts", "dark"]  # ui removed by theirs, both additions
    assert split_note(result.text).body == "Prefers dark themes.\nAlso in the terminal.\n"
    # surgical: compared with ours, only the merged keys' lines differ
    changed = [a for a, b in zip(ours.splitlines(), result.text.splitlines(), strict=False)
               if a != b]  # fmt: skip
    assert {line.split(":")[0] for line in changed} == {"last_used", "use_count", "strength",
                                                        "tags"}  # fmt: skip
    assert "# a comment the person wrote" in result.text


def test_driver_caps_strength_and_counts_from_the_defaults_when_added_on_both_sides() -> None:
    ours = BASE.replace("strength: 1.0", "strength: 1.9")
    theirs = BASE.replace("strength: 1.0", "strength: 1.8")
    fm = parse_frontmatter(split_note(merge_note(BASE, ours, theirs, git_merge_lines).text).yaml)
    assert fm["strength"] == 2.0  # capped as touch --boost caps it
    both = merge_note("", ours, ours.replace("use_count: 2", "use_count: 3"), git_merge_lines)
    assert parse_frontmatter(split_note(both.text).yaml)["use_count"] == 2 + 3 - 1


def test_a_value_its_rule_cannot_merge_is_a_conflict_for_that_key_alone() -> None:
    ours = (
        BASE.replace("status: active", "status: active\nsource: human")
        .replace("use_count: 2", "use_count: 3")
        .replace("strength: 1.0", "strength: high")
    )  # a person's value of the wrong type
    theirs = (
        BASE.replace("status: active", "status: active\nsource: agent")
        .replace("use_count: 2", "use_count: 4")
        .replace("strength: 1.0", "strength: 1.1")
    )
    result = merge_note(BASE, ours, theirs, git_merge_lines)
    assert result.conflicts == ("key 'strength'",)
    assert find_conflict_markers(result.text)
    block = "<<<<<<< ours\nstrength: high\n||||||| base\nstrength: 1.0\n=======\nstrength: 1.1\n"
    assert block + ">>>>>>> theirs\n" in result.text
    ours_side, base_side, theirs_side = conflict_sides(result.text)
    merged = parse_frontmatter(split_note(ours_side).yaml)
    assert merged["use_count"] == 5  # merged all the same
    assert merged["source"] == "agent"  # a choice: the first by name when last_used ties
    assert parse_frontmatter(split_note(theirs_side).yaml)["strength"] == 1.1
    assert base_side is not None


def test_status_and_layer_take_the_later_lifecycle_stage() -> None:
    ours = BASE.replace("status: active", "status: promoted").replace("working", "semantic")
    theirs = BASE.replace("status: active", "status: archived").replace("working", "episodic")
    result = merge_note(BASE, ours, theirs, git_merge_lines)
    assert result.clean
    fm = parse_frontmatter(split_note(result.text).yaml)
    assert (fm["status"], fm["layer"]) == ("archived", "semantic")


REPEATING_BODY = """# Setup

```python
def f():
    return 1
```

---

| a | b |
|---|---|
| 1 | 2 |

# Setup

```python
def f():
    return 1
```

---

| a | b |
|---|---|
| 1 | 2 |

# Setup
"""


def test_a_body_that_repeats_lines_keeps_every_line_of_both_sides(tmp_path: Path) -> None:
    base = BASE.replace("Prefers dark themes.\n", REPEATING_BODY)
    lines = REPEATING_BODY.splitlines(keepends=True)
    # ours edits the first code fence and adds a row to the first table; theirs adds a row to
    # the second table and a line under the last heading, and bumps use_count
    ours_lines = list(lines)  # insertions from the bottom up, at indexes of the base lines
    ours_lines[12:12] = ["| 3 | ours |\n"]
    ours_lines[4:4] = ["    # ours: first fence\n"]
    theirs_lines = list(lines)
    theirs_lines[25:25] = ["| 3 | theirs |\n"]
    theirs_lines.append("Theirs after the last heading.\n")
    ours = BASE.replace("Prefers dark themes.\n", "".join(ours_lines))
    theirs = BASE.replace("Prefers dark themes.\n", "".join(theirs_lines)).replace(
        "use_count: 2", "use_count: 3"
    )
    files = {}
    for name, text in (("base", base), ("ours", ours), ("theirs", theirs)):
        files[name] = tmp_path / name
        files[name].write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "vaultmem", "merge-driver", str(files["base"]), str(files["ours"]),
         str(files["theirs"]), "STM/x.md"], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    merged = files["ours"].read_text(encoding="utf-8")
    body = split_note(merged).body.splitlines(keepends=True)
    expected = list(lines)
    expected[25:25] = ["| 3 | theirs |\n"]
    expected.append("Theirs after the last heading.\n")
    expected[12:12] = ["| 3 | ours |\n"]
    expected[4:4] = ["    # ours: first fence\n"]
    assert body == expected  # every line of both sides, none dropped or reordered
    assert parse_frontmatter(split_note(merged).yaml)["use_count"] == 3


# --- the scenario, step by step ----------------------------------------------------------


def test_touches_and_a_body_edit_on_two_machines_merge_without_conflict(tmp_path: Path) -> None:
    c = make_clones(tmp_path)
    a = Vault.open(c.a)
    x = a.remember("Prefers dark themes in every editor.", title="X", tags=["ui"], now=T0)
    commit_all(c.a, "remember X")
    git(c.a, "push", "--quiet")
    assert pull(c.b)
    b = Vault.open(c.b)
    for n in range(3):
        a.touch(x.fields.id or "", now=T0 + (n + 1) * HOUR)
    for n in range(2):
        b.touch("X", now=T0 + DAY + n * HOUR)
    note_b = c.b / x.path
    note_b.write_text(note_b.read_text(encoding="utf-8") + "Also in the terminal.\n")
    commit_all(c.a, "A touches")
    commit_all(c.b, "B touches and edits")
    git(c.a, "push", "--quiet")
    assert pull(c.b), git(c.b, "status").stdout
    merged = c.b / x.path
    fm = fields(merged)
    assert fm["use_count"] == 1 + 3 + 2
    assert fm["last_used"] == (T0 + DAY + HOUR).replace(tzinfo=None)  # B's later use
    assert merged.read_text(encoding="utf-8").endswith(
        "Prefers dark themes in every editor.\nAlso in the terminal.\n"
    )
    git(c.b, "push", "--quiet")
    assert pull(c.a)
    assert memory_notes(c.a) == memory_notes(c.b)


def test_a_note_merged_without_the_driver_stays_visible_and_is_fixed(tmp_path: Path) -> None:
    c = make_clones(tmp_path, driver=False)  # B: the phone, or a clone without `init --git`
    a = Vault.open(c.a)
    x = a.remember("Prefers dark themes.", title="X", tags=["ui"], importance=0.9, now=T0)
    commit_all(c.a, "remember X")
    git(c.a, "push", "--quiet")
    assert pull(c.b)
    code, out, _ = cli(c.b, "doctor")
    assert "merge-driver" in out and "vaultmem init --git" in out
    b = Vault.open(c.b)
    a.touch("X", now=T0 + HOUR)
    b.touch("X", now=T0 + 2 * HOUR)
    b.touch("X", now=T0 + 3 * HOUR)
    commit_all(c.a, "A")
    commit_all(c.b, "B")
    git(c.a, "push", "--quiet")
    assert not pull(c.b)  # line-by-line merge: a conflict on last_used/use_count
    text = (c.b / x.path).read_text(encoding="utf-8")
    assert find_conflict_markers(text)

    code, out, _ = cli(c.b, "list")
    assert code == 0 and "X.md" in out and "conflicted" in out
    code, out, _ = cli(c.b, "list", "--json")
    (row,) = json.loads(out)["memories"]
    assert row["conflicted"] is True and row["use_count"] == 3  # read from its "ours" side
    code, out, _ = cli(c.b, "status")
    assert "1 memory among" in out and "conflicted" in out
    code, out, err = cli(c.b, "show", "X", "--json")
    shown = json.loads(out)
    assert code == 0 and shown["id"] == x.fields.id and shown["conflicted"] is True
    assert "conflict markers" in err and "doctor --fix" in err
    code, out, err = cli(c.b, "touch", "X")
    assert code == 1 and "conflict markers" in err and "doctor --fix" in err
    assert (c.b / x.path).read_text(encoding="utf-8") == text  # not written
    code, out, err = cli(c.b, "lifecycle", "--dry-run", "--now", at(T0 + 30 * DAY))
    assert "skipped STM/X.md" in err and "conflict markers" in err
    code, out, _ = cli(c.b, "recall", "dark themes")
    assert "X.md" in out and "[conflicted]" in out

    code, out, _ = cli(c.b, "doctor", "--fix")
    assert "fixed STM/X.md" in out
    fm = fields(c.b / x.path)
    assert not find_conflict_markers((c.b / x.path).read_text(encoding="utf-8"))
    # no common version in the markers: counters take the larger side, times the latest
    assert fm["use_count"] == 3 and fm["last_used"] == (T0 + 3 * HOUR).replace(tzinfo=None)
    code, out, _ = cli(c.b, "undo")
    assert code == 0 and (c.b / x.path).read_text(encoding="utf-8") == text


def test_both_machines_pass_over_the_same_notes_and_converge(tmp_path: Path) -> None:
    c = make_clones(tmp_path)
    a = Vault.open(c.a)
    for n in range(3):
        a.remember(f"Python code style rule {n}", title=f"Style {n}", tags=["python", "style"],
                   now=T0 + n * dt.timedelta(minutes=5))  # fmt: skip
    # P: an episode of its own (two hours before the style rules), so it stays in STM
    a.remember("Promote me", title="P", tags=["p"], now=T0 - 2 * HOUR)
    commit_all(c.a, "memories")
    git(c.a, "push", "--quiet")
    assert pull(c.b)
    b = Vault.open(c.b)
    for k, vault in enumerate((a, b)):  # both used P five times on three days: both promote it
        for n in range(5):
            vault.touch("P", now=T0 + (n + 1) * 9 * HOUR + k * dt.timedelta(minutes=7))
    commit_all(c.a, "uses A")
    commit_all(c.b, "uses B")
    a.lifecycle(now=T0 + 2 * DAY, commit=True)
    b.lifecycle(now=T0 + 2 * DAY + 3 * HOUR, commit=True)
    boxes_a = {p: t for p, t in memory_notes(c.a).items() if p.startswith("Boxes/")}
    boxes_b = {p: t for p, t in memory_notes(c.b).items() if p.startswith("Boxes/")}
    assert boxes_a == boxes_b and boxes_a  # same box path, id and text on both machines
    box_path = next(p for p in boxes_a if p.count("/") == 2 and "python" in p)
    assert not re.search(r"\d{4}-\d\d-\d\d.*\d{4}-\d\d-\d\d", box_path)  # the date once
    assert "Memory box of 3 memories" in boxes_a[box_path]
    # no folder a pass emptied is left behind
    empty = [d for d in (c.a / "Boxes").rglob("*") if d.is_dir() and not any(d.iterdir())]
    assert empty == []
    git(c.a, "push", "--quiet")
    assert pull(c.b), git(c.b, "status").stdout
    promoted = fields(c.b / "LTM/P.md")
    assert promoted["promoted_at"] == (T0 + 2 * DAY).replace(tzinfo=None)  # the earliest
    assert promoted["use_count"] == 1 + 5 + 5
    git(c.b, "push", "--quiet")
    assert pull(c.a)
    assert memory_notes(c.a) == memory_notes(c.b)


def test_promote_on_one_machine_archive_on_the_other_is_fixed_by_doctor(tmp_path: Path) -> None:
    c = make_clones(tmp_path)
    a = Vault.open(c.a)
    x = a.remember("A memory both machines move", title="X", now=T0)
    commit_all(c.a, "X")
    git(c.a, "push", "--quiet")
    assert pull(c.b)
    b = Vault.open(c.b)
    a.touch("X", now=T0 + HOUR)
    a.promote("X", now=T0 + 2 * HOUR)
    b.touch("X", now=T0 + 3 * HOUR)
    b.touch("X", now=T0 + 4 * HOUR)
    b.lifecycle(("forget",), now=T0 + 400 * DAY, commit=False)  # faded on B: archived
    assert (c.b / "Archive/X.md").exists()
    commit_all(c.a, "promote")
    commit_all(c.b, "archive")
    git(c.a, "push", "--quiet")
    assert not pull(c.b)  # rename/rename: git cannot decide the path
    assert (c.b / "LTM/X.md").exists() and (c.b / "Archive/X.md").exists()
    code, out, _ = cli(c.b, "doctor")
    assert code == 1 and "duplicate-id" in out and "LTM/X.md" in out and "Archive/X.md" in out
    code, out, err = cli(c.b, "lifecycle", "--now", at(T0 + 401 * DAY))
    assert "shares its memory id" in err or "nothing" in out or code == 0
    assert (c.b / "LTM/X.md").exists() and (c.b / "Archive/X.md").exists()  # not moved
    before = {p: (c.b / p).read_bytes() for p in ("LTM/X.md", "Archive/X.md")}
    code, out, _ = cli(c.b, "doctor", "--fix")
    assert "fixed Archive/X.md: kept" in out and "fixed LTM/X.md: merged into Archive/X.md" in out
    assert not (c.b / "LTM/X.md").exists()
    fm = fields(c.b / "Archive/X.md")
    assert fm["id"] == x.fields.id and fm["status"] == "archived"
    assert fm["use_count"] == 1 + 1 + 2 and fm["promoted_at"] is not None
    code, out, _ = cli(c.b, "undo")
    assert code == 0 and {p: (c.b / p).read_bytes() for p in before} == before
    cli(c.b, "doctor", "--fix")
    commit_all(c.b, "resolved")
    git(c.b, "push", "--quiet")
    assert pull(c.a)
    assert memory_notes(c.a) == memory_notes(c.b)


def test_a_touch_on_one_side_and_a_move_on_the_other_merge(tmp_path: Path) -> None:
    c = make_clones(tmp_path)
    a = Vault.open(c.a)
    a.remember("Moved on A, used on B", title="Y", now=T0)
    commit_all(c.a, "Y")
    git(c.a, "push", "--quiet")
    assert pull(c.b)
    b = Vault.open(c.b)
    a.promote("Y", now=T0 + HOUR)
    b.touch("Y", now=T0 + 2 * HOUR)
    commit_all(c.a, "promote")
    commit_all(c.b, "touch")
    git(c.a, "push", "--quiet")
    assert pull(c.b)
    fm = fields(c.b / "LTM/Y.md")
    assert not (c.b / "STM/Y.md").exists()
    assert (fm["status"], fm["use_count"]) == ("promoted", 2)


def test_obsidian_copy_gets_a_new_id_and_passes_leave_both(tmp_path: Path) -> None:
    c = make_clones(tmp_path)
    a = Vault.open(c.a)
    x = a.remember("Original memory", title="X", now=T0)
    (c.a / "STM/X 1.md").write_bytes((c.a / x.path).read_bytes())  # Obsidian's "Make a copy"
    code, out, _ = cli(c.a, "doctor")
    assert code == 1 and "STM/X 1.md" in out and "STM/X.md" in out and "copy" in out
    run = a.lifecycle(now=T0 + DAY)
    assert (c.a / "STM/X.md").exists() and (c.a / "STM/X 1.md").exists()
    assert any("shares its memory id" in why for r in run.results for _, why in r.skipped)
    before = (c.a / "STM/X 1.md").read_text(encoding="utf-8")
    code, out, _ = cli(c.a, "doctor", "--fix")
    assert "fixed STM/X 1.md: a copy of STM/X.md: new id" in out
    after = (c.a / "STM/X 1.md").read_text(encoding="utf-8")
    assert fields(c.a / "STM/X.md")["id"] == x.fields.id != fields(c.a / "STM/X 1.md")["id"]
    diff = [(o, n) for o, n in zip(before.splitlines(), after.splitlines(), strict=True) if o != n]
    assert len(diff) == 1 and diff[0][0].startswith("id: ")  # one line changed
    assert cli(c.a, "undo")[0] == 0
    assert (c.a / "STM/X 1.md").read_text(encoding="utf-8") == before


# --- lifecycle --commit and undo --commit ---------------------------------------------------------


def test_lifecycle_commit_includes_memories_never_committed(tmp_path: Path) -> None:
    c = make_clones(tmp_path)
    a = Vault.open(c.a)
    a.remember("Remembered and sealed before any commit", title="New", tags=["t"], now=T0)
    a.remember("Same session, sealed with it", title="New too", tags=["t"], now=T0 + HOUR / 6)
    (c.a / "Person.md").write_text("a person's note, staged by hand\n")
    git(c.a, "add", "Person.md")
    code, out, err = cli(c.a, "lifecycle", "--commit", "--now", at(T0 + DAY))
    assert code == 0, err
    assert "seal: " in out and "committed " in out
    listed = git(c.a, "show", "--name-status", "--format=%s", "HEAD").stdout
    assert "vaultmem lifecycle:" in listed and "/New.md" in listed
    assert "Person.md" not in listed  # exactly the pass: the person's staged note waits
    assert git(c.a, "diff", "--cached", "--name-only").stdout.strip() == "Person.md"
    assert git(c.a, "status", "--porcelain", "--", "STM", "Boxes").stdout == ""
    code, out, err = cli(c.a, "undo", "--commit")
    assert code == 0 and "committed " in out, err
    assert git(c.a, "status", "--porcelain", "--", "STM", "Boxes").stdout == ""
    assert (c.a / "STM/New.md").exists()
    assert "STM/New.md" in git(c.a, "ls-files", "STM").stdout


def test_a_plain_undo_of_a_committed_pass_commits_too_and_leaves_the_tree_clean(
    tmp_path: Path,
) -> None:
    c = make_clones(tmp_path)
    a = Vault.open(c.a)
    a.remember("Sealed and committed", title="Kept", tags=["t"], now=T0)
    a.remember("Sealed with it", title="Kept too", tags=["t"], now=T0 + HOUR / 6)
    a.close()
    commit_all(c.a, "memories")
    code, out, err = cli(c.a, "lifecycle", "--commit", "--now", at(T0 + DAY))
    assert code == 0 and "committed " in out, err
    code, out, err = cli(c.a, "undo")  # no --commit: the pass was committed, so is its undo
    assert code == 0 and "committed " in out, err
    assert git(c.a, "status", "--porcelain", "--", "STM", "Boxes").stdout == ""
    assert "vaultmem undo: reverted lifecycle" in git(c.a, "log", "-1", "--format=%s").stdout
    assert (c.a / "STM/Kept.md").exists()
    # a pass left uncommitted is undone without a commit, as before; --no-commit never commits
    code, out, err = cli(c.a, "lifecycle", "--now", at(T0 + DAY))
    assert code == 0, err
    head = git(c.a, "rev-parse", "HEAD").stdout
    code, out, err = cli(c.a, "undo")
    assert code == 0 and "committed" not in out, err
    assert git(c.a, "rev-parse", "HEAD").stdout == head
    code, out, err = cli(c.a, "lifecycle", "--commit", "--now", at(T0 + DAY))
    assert code == 0, err
    head = git(c.a, "rev-parse", "HEAD").stdout
    code, out, err = cli(c.a, "undo", "--no-commit")
    assert code == 0 and "committed" not in out, err
    assert git(c.a, "rev-parse", "HEAD").stdout == head
    assert git(c.a, "status", "--porcelain", "--", "STM", "Boxes").stdout != ""


def test_lifecycle_commit_failure_still_prints_the_report(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    Vault.init(root)
    git(root, "init", "-q")
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'refused by the hook' >&2\nexit 1\n")
    hook.chmod(0o755)
    with Vault.open(root) as vault:
        vault.remember("Not committed", title="N", now=T0)
        vault.remember("Not committed either", title="N2", now=T0 + HOUR / 6)
    code, out, err = cli(root, "lifecycle", "--commit", "--now", at(T0 + DAY))
    assert code == 1
    assert "seal: 3 applied" in out  # the pass happened and says so (box + two members)
    assert "git commit failed: refused by the hook" in err and "not committed" in err


def test_init_git_is_idempotent_and_registers_the_driver_in_a_fresh_clone(tmp_path: Path) -> None:
    c = make_clones(tmp_path, driver=False)
    attributes = (c.a / ".gitattributes").read_text(encoding="utf-8")
    assert "STM/**/*.md merge=vaultmem" in attributes and "Archive/**/*.md merge=vaultmem" in (
        attributes
    )
    assert git(c.b, "config", "--get", "merge.vaultmem.driver", check=False).returncode != 0
    code, out, _ = cli(c.b, "doctor")
    assert "[merge-driver]" in out
    result = CliRunner().invoke(main, ["init", str(c.b), "--git"])
    assert result.exit_code == 0 and "merge.vaultmem.driver" in result.output
    driver = git(c.b, "config", "--get", "merge.vaultmem.driver").stdout
    assert "merge-driver %O %A %B %P" in driver
    again = CliRunner().invoke(main, ["init", str(c.b), "--git"])
    assert "already set up" in again.output
    assert (c.b / ".gitattributes").read_text(encoding="utf-8") == attributes
    assert "[merge-driver]" not in cli(c.b, "doctor")[1]


REPEATED = ["```", "---", "|---|---|", "# Setup", "", "- item", "    return 1"]


def _is_subsequence(needle: list[str], haystack: list[str]) -> bool:
    it = iter(haystack)
    return all(any(line == other for other in it) for line in needle)


@settings(max_examples=40, deadline=None)
@given(
    base=st.lists(st.sampled_from(REPEATED), min_size=3, max_size=25),
    ours_edits=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(REPEATED + ["ours"])),
                        max_size=4),
    theirs_edits=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(REPEATED + ["theirs"])),
                          max_size=4),
)  # fmt: skip
def test_the_driver_never_drops_or_reorders_body_lines(
    base: list[str], ours_edits: list[tuple[int, str]], theirs_edits: list[tuple[int, str]]
) -> None:
    def edited(edits: list[tuple[int, str]]) -> list[str]:
        lines = list(base)
        for index, line in edits:
            lines.insert(min(index, len(lines)), line)
        return lines

    ours_lines, theirs_lines = edited(ours_edits), edited(theirs_edits)
    note = BASE.replace("Prefers dark themes.\n", "{}")
    result = merge_note(
        note.format("".join(f"{x}\n" for x in base)),
        note.format("".join(f"{x}\n" for x in ours_lines)),
        note.format("".join(f"{x}\n" for x in theirs_lines)).replace(
            "use_count: 2", "use_count: 3"
        ),
        git_merge_lines,
    )
    ours_side, _, theirs_side = conflict_sides(result.text)
    for side, lines in ((ours_side, ours_lines), (theirs_side, theirs_lines)):
        body = split_note(side).body.splitlines() if result.clean else side.splitlines()
        assert _is_subsequence(lines, body)  # every line of each side, in its order
    if result.clean:
        assert parse_frontmatter(split_note(result.text).yaml)["use_count"] == 3


def test_a_note_that_is_not_utf8_is_merged_as_bytes_and_reported(tmp_path: Path) -> None:
    base = b"---\nid: x\ntype: memory\n---\ncaf\xe9\n\nline\n"
    files = {}
    for name, data in (
        ("base", base),
        ("ours", base.replace(b"caf\xe9", b"caf\xe9 ours")),
        ("theirs", base.replace(b"line", b"line theirs")),
    ):
        files[name] = tmp_path / name
        files[name].write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-m", "vaultmem", "merge-driver", str(files["base"]), str(files["ours"]),
         str(files["theirs"]), "STM/latin.md"], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0  # git's own line merge had no conflict
    assert (
        files["ours"].read_bytes()
        == b"---\nid: x\ntype: memory\n---\ncaf\xe9 ours\n\nline theirs\n"
    )


def test_a_memory_moved_and_rewritten_on_both_sides_merges_against_its_history(
    tmp_path: Path,
) -> None:
    c = make_clones(tmp_path)
    a = Vault.open(c.a)
    x = a.remember("Z\n\nA notes:\n\n* * *\n\nB notes:\n", title="Z", now=T0)
    commit_all(c.a, "Z")
    git(c.a, "push", "--quiet")
    assert pull(c.b)
    b = Vault.open(c.b)
    for side, vault, root, uses in (("A", a, c.a, 2), ("B", b, c.b, 3)):
        for n in range(uses):
            vault.touch("Z", now=T0 + (n + 1) * HOUR + (DAY if side == "B" else dt.timedelta()))
        note = root / x.path
        added = "".join(f"- {side} line {n}\n" for n in range(40))  # beyond rename detection
        note.write_text(note.read_text().replace(f"{side} notes:\n", f"{side} notes:\n{added}"))
        vault.promote("Z", now=T0 + 2 * DAY)
        commit_all(root, side)
    git(c.a, "push", "--quiet")
    merged_cleanly = pull(c.b)
    status = git(c.b, "status", "--porcelain").stdout
    text = (c.b / "LTM/Z.md").read_text(encoding="utf-8")
    assert merged_cleanly, status + text
    fm = fields(c.b / "LTM/Z.md")
    assert fm["use_count"] == 1 + 2 + 3  # counted against the version both started from
    assert all(f"- A line {n}\n" in text and f"- B line {n}\n" in text for n in range(40))
