"""Edits refuse a note they cannot read whole; promote ID, gc --keep and the API's ``now`` say so.

A memory holding a value vaultmem cannot read (``use_count: "3"``, ``strength: high``) is left
as it is by every edit — ``touch``, ``observe``, ``pin``, ``gc --keep``, ``promote``, ``forget``
and a ``remember`` that would reinforce it — as the passes leave it: one line names the note,
the key and the value, exit 1, nothing written. ``gc --keep`` checks every ``--keep`` before
writing any; a note whose YAML does not parse is refused naming the YAML error; ``promote ID``
exits 1 when it refuses the note it was asked for; the Python API reads a ``now`` without a
time zone as UTC, as ``--now`` does. Each test works on a copy of one ``vaultmem demo`` vault.
"""

from __future__ import annotations

import datetime as dt
import difflib
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot_files
from test_mcp_server import Client

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.errors import InputError, UnsafeNoteError

NOW = "2026-11-22T12:00:00"
LATER = "2026-12-04T15:00:00"
BIRTHDAY = "STM/Daughter's birthday.md"
BIRTHDAY_TEXT = "Daughter's birthday is on 14 December; likes drawing and dinosaurs."
GUIDE = Path(__file__).resolve().parents[1] / "docs" / "user-guide.md"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("edit-refusals") / "demo"
    result = CliRunner().invoke(main, ["demo", "--dir", str(target), "--now", NOW])
    assert result.exit_code == 0, result.output
    return target


@pytest.fixture()
def root(demo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo, tmp_path / "v", symlinks=True))


def cli(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(root)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, err
    return lines[0]


def set_line(root: Path, path: str, old: str, new: str) -> None:
    note = root / path
    text = note.read_text(encoding="utf-8")
    assert old in text, text
    note.write_text(text.replace(old, new, 1), encoding="utf-8")


def member(root: Path, name: str) -> str:
    return next((root / "Boxes").glob(f"*/*/{name}.md")).relative_to(root).as_posix()


# ------------------------------------------------------------------ unreadable values


@pytest.mark.parametrize(
    ("line", "bad", "args", "named"),
    [
        ("use_count: 1", 'use_count: "3"', ["touch"], "use_count: '3'"),
        ("use_count: 1", "use_count: 1e3", ["touch"], "use_count: '1e3'"),
        ("strength: 1.0", "strength: high", ["touch", "--boost"], "strength: 'high'"),
        ("last_used: 2026-07-27T09:00:00", "last_used: yesterday evening", ["touch"], "last_used"),
        ("use_count: 1", 'use_count: "3"', ["observe", "--context-tags", "work"], "use_count"),
        ("use_count: 1", 'use_count: "3"', ["remember", BIRTHDAY_TEXT], "use_count: '3'"),
        # a key the edit does not write: the note is left as it is all the same
        ("strength: 1.0", "strength: high", ["pin"], "strength: 'high'"),
        ("strength: 1.0", "strength: high", ["gc", "--keep"], "strength: 'high'"),
        ("strength: 1.0", "strength: high", ["promote"], "strength: 'high'"),
        ("strength: 1.0", "strength: high", ["promote", "--dry-run"], "strength: 'high'"),
        ("strength: 1.0", "strength: high", ["forget", "--dry-run"], "strength: 'high'"),
    ],
)
def test_an_edit_refuses_a_memory_with_a_value_it_cannot_read(
    root: Path, line: str, bad: str, args: list[str], named: str
) -> None:
    set_line(root, BIRTHDAY, line, bad)
    before = snapshot_files(root)
    ref = [] if args[0] == "remember" else ["Daughter's birthday"]
    now = [] if args[0] == "pin" else ["--now", LATER]
    code, _, err = cli(root, *args, *ref, *now)
    message = error_line(err)
    assert code == 1, err
    assert message.startswith(f"Error: {BIRTHDAY}: {named}"), message
    assert "vaultmem doctor" in message and "cannot read" in message, message
    assert snapshot_files(root) == before


def test_observe_checks_every_memory_before_writing_any(root: Path) -> None:
    coffee = member(root, "Coffee order")
    set_line(root, coffee, "strength: 1.0", "strength: high")
    before = snapshot_files(root)
    code, _, err = cli(root, "observe", "Daughter's birthday", "Coffee order", "--now", LATER)
    assert code == 1 and f"{coffee}: strength: 'high'" in error_line(err), err
    assert snapshot_files(root) == before  # the birthday, named first, was not observed either


def test_the_api_and_recall_touch_leave_such_a_note_as_it_is(root: Path) -> None:
    set_line(root, BIRTHDAY, "use_count: 1", 'use_count: "3"')
    before = snapshot_files(root)
    at = dt.datetime(2026, 12, 4, 15, tzinfo=dt.UTC)
    with Vault.open(root) as vault:
        for call in (
            lambda: vault.touch("Daughter's birthday", now=at),
            lambda: vault.keep("Daughter's birthday", now=at),
            lambda: vault.pin("Daughter's birthday", now=at),
            lambda: vault.observe(["Daughter's birthday"], ["x"], now=at),
            lambda: vault.remember(BIRTHDAY_TEXT, now=at),
        ):
            with pytest.raises(UnsafeNoteError, match="use_count: '3' is not a whole number"):
                call()
        vault.warnings.clear()
        vault.recall("daughter birthday", touch=True, now=at)
        assert any(w.startswith(f"not reinforced: {BIRTHDAY}") for w in vault.warnings)
    assert snapshot_files(root) == before


def test_mcp_touch_and_promote_refuse_such_a_note(root: Path, tmp_path: Path) -> None:
    set_line(root, BIRTHDAY, "strength: 1.0", "strength: high")
    before = snapshot_files(root)
    client = Client(root, tmp_path / "server-stderr.txt")
    try:
        for tool in ("touch", "pin", "promote"):
            message = client.error(tool, id_or_title="Daughter's birthday")
            assert f"{BIRTHDAY}: strength: 'high' is not a number" in message, (tool, message)
    finally:
        client.close()
    assert snapshot_files(root) == before


# ------------------------------------------------------------------ gc --keep


@pytest.mark.parametrize("dry_run", [False, True])
def test_gc_checks_every_keep_before_writing_any(root: Path, dry_run: bool) -> None:
    coffee = member(root, "Coffee order")
    set_line(root, coffee, "strength: 1.0", "strength: high")
    before = snapshot_files(root)
    journals = sorted((root / ".vaultmem" / "journal").iterdir())
    dry = ["--dry-run"] if dry_run else []
    code, _, err = cli(
        root, "gc", "--keep", "Font size", "--keep", "Coffee order", *dry, "--now", LATER
    )
    message = error_line(err)
    assert code == 1, err
    assert f"{coffee}: strength: 'high' is not a number; not kept; nothing was changed" in message
    assert snapshot_files(root) == before  # Font size, kept first, was not written either
    assert sorted((root / ".vaultmem" / "journal").iterdir()) == journals


# ------------------------------------------------------------------ YAML that does not parse


@pytest.mark.parametrize("command", ["touch", "pin", "promote", "forget"])
def test_a_memory_whose_yaml_does_not_parse_is_refused_naming_the_yaml_error(
    root: Path, command: str
) -> None:
    set_line(root, BIRTHDAY, "tags: [family]", "tags: [family")
    before = snapshot_files(root)
    now = [] if command == "pin" else ["--now", LATER]
    code, _, err = cli(root, command, "Daughter's birthday", *now)
    message = error_line(err)
    assert code == 1, err
    assert message.startswith(f"Error: {BIRTHDAY}: frontmatter is not valid YAML"), message
    assert "not a note vaultmem manages" not in message, message
    assert snapshot_files(root) == before


# ------------------------------------------------------------------ promote ID


def _conflicted(root: Path) -> None:
    set_line(
        root,
        BIRTHDAY,
        "importance: 0.9\n",
        "<<<<<<< HEAD\nimportance: 0.9\n=======\nimportance: 0.5\n>>>>>>> theirs\n",
    )


def _not_utf8(root: Path) -> None:
    with (root / BIRTHDAY).open("ab") as note:
        note.write(b"caf\xe9\n")


def _name_taken(root: Path) -> None:
    (root / "LTM" / "Daughter's birthday.md").write_text("My own note.\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (_conflicted, f"Error: {BIRTHDAY}: git conflict markers at line"),
        (_not_utf8, f"Error: {BIRTHDAY}: not UTF-8 (byte"),
        (
            _name_taken,
            f"Error: LTM/Daughter's birthday.md: already exists; {BIRTHDAY} not promoted",
        ),
    ],
)
@pytest.mark.parametrize("dry_run", [False, True])
def test_promote_id_exits_1_when_it_refuses_the_note(
    root: Path, spoil: object, said: str, dry_run: bool
) -> None:
    spoil(root)  # type: ignore[operator]
    before = snapshot_files(root)
    dry = ["--dry-run"] if dry_run else []
    code, out, err = cli(root, "promote", BIRTHDAY, *dry, "--now", LATER)
    assert code == 1, (out, err)
    assert error_line(err).startswith(said), err
    assert "nothing to promote" not in out and "would promote" not in out, out
    assert snapshot_files(root) == before


# ------------------------------------------------------------------ now without a time zone


def test_the_api_reads_a_now_without_a_time_zone_as_utc(root: Path) -> None:
    naive = dt.datetime(2026, 12, 4, 15, 0, 0)
    with Vault.open(root) as vault:
        touched = vault.touch("Daughter's birthday", now=naive)
        assert touched.fields.last_used == naive.replace(tzinfo=dt.UTC)
        observed = vault.observe(["Daughter's birthday"], ["family"], now=naive)
        assert observed[0].fields.last_review_at == naive.replace(tzinfo=dt.UTC)
        vault.keep("Daughter's birthday", now=naive)
        vault.pin("Daughter's birthday", now=naive)
        vault.pin("Daughter's birthday", False, now=naive)
        again = vault.remember(BIRTHDAY_TEXT, now=naive + dt.timedelta(days=1))
        assert again.fields.last_used == dt.datetime(2026, 12, 5, 15, tzinfo=dt.UTC)
        vault.recall("daughter birthday", touch=True, now=naive + dt.timedelta(days=2))
        assert vault.memory("Daughter's birthday", now=naive).fields.use_count == 8
        assert vault.promote("Daughter's birthday", dry_run=True, now=naive).planned
        assert vault.forget("Daughter's birthday", dry_run=True, now=naive).planned
        vault.gc(keep=["Font size"], now=naive)
        run = vault.lifecycle(dry_run=True, now=naive)
        assert run.now == naive.replace(tzinfo=dt.UTC)
    assert "use_count: 8" in (root / BIRTHDAY).read_text(encoding="utf-8")


def test_the_api_refuses_a_now_that_is_not_a_datetime(root: Path) -> None:
    before = snapshot_files(root)
    with Vault.open(root) as vault:
        for now in ("2026-12-04T15:00:00", dt.date(2026, 12, 4), 1.5e9):
            with pytest.raises(InputError, match=r"^now: .* is not a datetime"):
                vault.touch("Daughter's birthday", now=now)  # type: ignore[arg-type]
            with pytest.raises(InputError, match=r"^now: .* is not a datetime"):
                vault.gc(keep=["Font size"], now=now)  # type: ignore[arg-type]
            with pytest.raises(InputError, match=r"^now: .* is not a datetime"):
                vault.promote("Daughter's birthday", now=now)  # type: ignore[arg-type]
    assert snapshot_files(root) == before


# ------------------------------------------------------------------ the touch diff


def _changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="")
        if line.startswith("+") and not line.startswith("+++")
    ]


def test_a_touch_changes_two_lines_and_the_first_of_a_later_day_three(root: Path) -> None:
    note = root / BIRTHDAY
    first = note.read_text(encoding="utf-8")
    assert cli(root, "touch", "Daughter's birthday", "--now", LATER)[0] == 0
    second = note.read_text(encoding="utf-8")
    assert [line.split(":")[0] for line in _changed_lines(first, second)] == [
        "+last_used",
        "+use_count",
        "+use_days",
    ]
    assert cli(root, "touch", "Daughter's birthday", "--now", "2026-12-04T16:00:00")[0] == 0
    third = note.read_text(encoding="utf-8")
    assert len(_changed_lines(second, third)) == 2
    guide = " ".join(GUIDE.read_text(encoding="utf-8").split())
    assert "A `touch` is a two-line diff" not in guide
    assert "changes `use_days` too (three lines)" in guide


def test_reading_methods_read_a_now_without_a_time_zone_as_utc_too(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setenv("TZ", "America/New_York")  # a local time that is not UTC
    time.tzset()
    try:
        naive = dt.datetime(2026, 12, 4, 15, 0, 0)
        aware = naive.replace(tzinfo=dt.UTC)
        with Vault.open(root) as vault:
            assert vault.status(now=naive) == vault.status(now=aware)
            assert vault.review(now=naive) == vault.review(now=aware)
            assert vault.memories(now=naive) == vault.memories(now=aware)
            naive_table, aware_table = vault.table(now=naive), vault.table(now=aware)
            assert list(naive_table.scores.score) == list(aware_table.scores.score)
            for call in (vault.status, vault.review, vault.memories, vault.table):
                with pytest.raises(InputError, match=r"^now: .* is not a datetime"):
                    call(now="2026-12-04")  # type: ignore[operator]
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
