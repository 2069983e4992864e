"""Lifecycle passes, promote, gc, undo --list, touch and pin refuse what they cannot honour.

A request they would silently ignore or bend (an empty pass list run as every pass, a box note
promoted or touched as if it were a memory, a threshold of NaN, a --yes without --hard) is
refused with one line naming the problem, and nothing is written. Each test works on a copy of
one `vaultmem demo` vault: boxes, a promoted memory in LTM/, archived memories in Archive/.
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot_files
from test_mcp_server import Client

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.errors import InputError

NOW = "2026-11-22T12:00:00"
LATER = "2027-06-01T00:00:00"  # Coffee order (a box member used once) has faded below 0.1 by then
LATER_AT = dt.datetime(2027, 6, 1, tzinfo=dt.UTC)
TRACE = """---
id: 01TRACEFOODTHREAD000000000
type: trace
status: active
created: 2026-08-09T09:00:00
boxes: ["[[BOX]]"]
---
Trace of 1 box.
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo vault built once, with a trace note added; tests work on copies of it."""
    target = tmp_path_factory.mktemp("pass-refusals") / "demo"
    result = CliRunner().invoke(main, ["demo", "--dir", str(target), "--now", NOW])
    assert result.exit_code == 0, result.output
    box = next((target / "Boxes").glob("*/box-food-*.md"))
    (target / "Boxes/Traces").mkdir()
    (target / "Boxes/Traces/trace-food.md").write_text(TRACE.replace("BOX", box.stem))
    with Vault.open(target) as vault:
        vault.sync()
    return target


@pytest.fixture()
def root(demo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo, tmp_path / "v", symlinks=True))


def cli(root: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(root)], input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def box_note(root: Path) -> str:
    return next((root / "Boxes").glob("*/box-food-*.md")).relative_to(root).as_posix()


def one_line(err: str) -> str:
    """The error line of a refusal (click prints usage lines above a usage error)."""
    lines = [line for line in err.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, err
    return lines[0]


# ------------------------------------------------------------------ which passes


def test_mcp_lifecycle_refuses_an_empty_pass_list_and_touch_pin_promote_a_box(
    root: Path, tmp_path: Path
) -> None:
    before = snapshot_files(root)
    client = Client(root, tmp_path / "server-stderr.txt")
    try:
        message = client.error("lifecycle", passes=[], apply=True)
        assert "no passes given" in message and "seal, promote, expire, forget, prune" in message
        box = box_note(root)
        for tool in ("touch", "pin", "unpin", "promote"):
            message = client.error(tool, id_or_title=box)
            assert f"{box} is a box note, not a memory" in message, (tool, message)
        message = client.error("touch", id_or_title="Boxes/Traces/trace-food.md")
        assert "is a trace note, not a memory; not touched" in message
        message = client.error("pin", id_or_title="Standup time")
        assert "Archive/Standup time.md is archived; not pinned" in message, message
        plan = client.ok("lifecycle", passes=["forget"])  # a dry run of the one pass named
        assert [p["pass"] for p in plan["passes"]] == ["forget"]
    finally:
        client.close()
    assert snapshot_files(root) == before


def test_api_lifecycle_takes_one_pass_name_and_refuses_an_empty_list(root: Path) -> None:
    before = snapshot_files(root)
    with Vault.open(root) as vault:
        run = vault.lifecycle("forget", dry_run=True, now=LATER_AT)
        assert [result.name for result in run.results] == ["forget"]
        for empty in ([], ()):
            with pytest.raises(InputError, match="^no passes given: name one or more of seal"):
                vault.lifecycle(empty, now=LATER_AT)
        with pytest.raises(InputError, match="unknown pass 'forgot'"):
            vault.lifecycle("forgot", dry_run=True)
    assert snapshot_files(root) == before


# ------------------------------------------------------------------ promote


def test_promote_refuses_box_and_trace_notes_promoted_and_archived_memories(root: Path) -> None:
    before = snapshot_files(root)
    box = box_note(root)
    refused = {
        box: f"{box} is a box note, not a memory; not promoted",
        "Boxes/Traces/trace-food.md": "is a trace note, not a memory; not promoted",
        "Editor setup": "LTM/Editor setup.md is promoted already (status promoted)",
        "Standup time": "Archive/Standup time.md is archived; not promoted (`vaultmem undo`",
    }
    for ref, expected in refused.items():
        for dry_run in ((), ("--dry-run",)):
            code, out, err = cli(root, "promote", ref, *dry_run, "--now", NOW)
            assert code == 1 and expected in one_line(err), (ref, err)
            assert out == ""
    with Vault.open(root) as vault:
        for ref in refused:
            with pytest.raises(InputError):
                vault.promote(ref)
    assert snapshot_files(root) == before
    # a memory that is neither is still promoted on request
    code, out, err = cli(root, "promote", "Coffee order", "--now", NOW)
    assert code == 0 and "→ LTM/Coffee order.md  (promote: promoted on request)" in out, err


# ------------------------------------------------------------------ touch, pin, unpin


def test_touch_and_pin_refuse_box_and_trace_notes_and_archived_memories(root: Path) -> None:
    before = snapshot_files(root)
    box = box_note(root)
    for command, verb in (("touch", "touched"), ("pin", "pinned"), ("unpin", "unpinned")):
        for ref, kind in ((box, "box"), ("Boxes/Traces/trace-food.md", "trace")):
            code, _, err = cli(root, command, ref)
            assert code == 1 and f"is a {kind} note, not a memory; not {verb}" in err, err
    for command, verb in (("touch", "touched"), ("pin", "pinned")):
        code, _, err = cli(root, command, "Standup time")
        line = one_line(err)
        assert code == 1 and f"Archive/Standup time.md is archived; not {verb}" in line, err
    with Vault.open(root) as vault:
        for call in (vault.touch, vault.pin):
            with pytest.raises(InputError, match="is a box note, not a memory"):
                call(box)
            with pytest.raises(InputError, match="is archived"):
                call("Standup time")
    assert snapshot_files(root) == before
    # unpinning an archived memory is done as asked (it leaves it where it is, as it should)
    code, _, err = cli(root, "unpin", "Standup time")
    assert code == 0, err


def test_observe_keep_and_recall_touch_refuse_box_notes_and_archived_memories(
    root: Path,
) -> None:
    before = snapshot_files(root)
    box = box_note(root)
    with Vault.open(root) as vault:
        for ref, refused in ((box, "is a box note, not a memory"), ("Standup time", "archived")):
            with pytest.raises(InputError, match=refused):
                vault.observe(["Coffee order", ref], ["kitchen"])  # none observed, not even one
            with pytest.raises(InputError, match=refused):
                vault.keep(ref)
        hits = vault.recall("standup", include_archived=True)
        archived = [h for h in hits if h.path.startswith("Archive/")]
        assert archived, [h.path for h in hits]
        with pytest.raises(InputError, match="is archived; nothing touched"):
            vault.recall("standup", include_archived=True, touch=archived[0].path)
    assert snapshot_files(root) == before
    code, _, err = cli(root, "recall", "standup", "--include-archived", "--touch-hit",
                       archived[0].path)
    assert code == 1 and "is archived; nothing touched" in one_line(err), err
    assert snapshot_files(root) == before


# ------------------------------------------------------------------ gc


def test_gc_hard_asks_about_exactly_the_notes_it_deletes(root: Path) -> None:
    before = snapshot_files(root)
    args = ("gc", "--hard", "--threshold", "0.1", "--now", LATER)
    code, _, err = cli(root, *args, stdin="n\n")
    assert code == 1 and "Coffee order.md" in err and "nothing deleted" in err, err
    assert snapshot_files(root) == before
    code, _, err = cli(root, *args, "--keep", "Coffee order", stdin="n\n")
    assert code == 1 and "nothing deleted" in err, err
    asked = [line for line in err.splitlines() if line.startswith("would delete ")]
    assert asked and not any("Coffee order" in line for line in asked), err
    assert snapshot_files(root) == before
    code, out, err = cli(root, *args, "--keep", "Coffee order", stdin="y\n")
    assert code == 0, err
    deleted = [line.split("  (")[0] for line in out.splitlines() if line.startswith("deleted ")]
    assert deleted == [line.replace("would delete", "deleted").split("  (")[0] for line in asked]
    assert (root / next(p for p in before if p.endswith("/Coffee order.md"))).is_file()


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-5", "-0.01"])
def test_gc_threshold_must_be_a_finite_score(root: Path, value: str) -> None:
    before = snapshot_files(root)
    code, out, err = cli(root, "gc", "--threshold", value, "--now", LATER)
    assert code == 2 and out == ""
    assert "Invalid value for '--threshold'" in one_line(err)
    assert "is not a decay score (a finite number ≥ 0, such as 0.05)" in err
    assert snapshot_files(root) == before


def test_api_gc_and_lifecycle_refuse_a_threshold_that_is_no_score(root: Path) -> None:
    before = snapshot_files(root)
    with Vault.open(root) as vault:
        for value in (-1, float("nan"), float("inf"), True, "0.1"):
            with pytest.raises(InputError, match="threshold must be a decay score"):
                vault.gc(threshold=value, now=LATER_AT)  # type: ignore[arg-type]
            with pytest.raises(InputError, match="threshold must be a decay score"):
                vault.lifecycle(["forget"], threshold=value, now=LATER_AT)  # type: ignore[arg-type]
        assert vault.gc(threshold=0, dry_run=True, now=LATER_AT).name == "forget"
    assert snapshot_files(root) == before


def test_gc_keep_refuses_box_notes_and_archived_memories(root: Path) -> None:
    before = snapshot_files(root)
    box = box_note(root)
    code, _, err = cli(root, "gc", "--keep", box, "--now", LATER)
    assert code == 1 and f"{box} is a box note, not a memory; not kept" in one_line(err)
    code, _, err = cli(root, "gc", "--keep", "Standup time", "--now", LATER)
    assert code == 1 and "Archive/Standup time.md is archived; not kept" in one_line(err)
    assert snapshot_files(root) == before


def test_a_memory_kept_twice_is_kept_once(root: Path) -> None:
    def use_count() -> int:
        text = next(root.rglob("Coffee order.md")).read_text(encoding="utf-8")
        return int(text.split("use_count: ", 1)[1].split()[0])

    before = use_count()
    with Vault.open(root) as vault:
        memory_id = str(vault.memory("Coffee order").fields.id)
        vault.gc(keep=["Coffee order", memory_id], now=LATER_AT)
        assert any("named 2 times: kept once" in w for w in vault.warnings), vault.warnings
    assert use_count() == before + 3  # not + 6


# ------------------------------------------------------------------ --yes, undo --list


@pytest.mark.parametrize("command", ["lifecycle", "gc"])
def test_yes_without_hard_is_refused(root: Path, command: str) -> None:
    before = snapshot_files(root)
    code, out, err = cli(root, command, "--yes", "--now", LATER)
    assert code == 2 and out == ""
    assert one_line(err) == "Error: --yes goes with --hard (it skips the question before deleting)"
    assert snapshot_files(root) == before


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (("20261122",), "--list lists every entry: give ENTRY or --list, not both"),
        (("--commit",), "--list changes nothing to commit: drop --commit"),
        (("--no-commit",), "--list changes nothing to commit: drop --no-commit"),
    ],
)
def test_undo_list_refuses_an_entry_and_commit(
    root: Path, extra: tuple[str, ...], expected: str
) -> None:
    before = snapshot_files(root)
    code, out, err = cli(root, "undo", "--list", *extra)
    assert code == 2 and out == "" and one_line(err) == f"Error: {expected}"
    assert snapshot_files(root) == before
    code, out, err = cli(root, "undo", "--list", "--json")
    assert code == 0 and '"entries"' in out, err
