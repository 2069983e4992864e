"""Values no note or option may crash a command with: huge counts, far dates, NUL bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes.fields import MAX_COUNT, read_fields
from vaultmem.core.notes.timestamps import format_datetime, parse_datetime

HUGE = 100000000000000000000  # ≥ 2^63: no SQLite integer holds it
NOW = "2026-11-20T09:00:00"


def run(*args: str, vault: Path, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(vault)], input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    v, _ = Vault.init(root)
    with v:
        v.remember("The user likes ramen", title="Ramen", now=parse_datetime(NOW))
    return root


def test_a_count_past_sqlite_integers_is_a_wrong_typed_value_in_every_path(vault: Path) -> None:
    person = vault / "People" / "Ann.md"
    person.parent.mkdir()
    person.write_text(f"---\nuse_count: {HUGE}\n---\nAnn, a friend.\n", encoding="utf-8")
    memory = vault / "STM" / "Ramen.md"
    memory.write_text(
        memory.read_text(encoding="utf-8").replace("use_count: 1\n", f"use_count: {HUGE}\n"),
        encoding="utf-8",
    )
    before = memory.read_bytes(), person.read_bytes()
    for command in (["list"], ["recall", "ramen"], ["status"], ["index", "--rebuild"],
                    ["index"], ["lifecycle", "--dry-run", "--now", NOW]):
        code, out, err = run(*command, vault=vault)
        assert code == 0, (command, out, err)
    code, out, _ = run("doctor", vault=vault)
    assert "STM/Ramen.md: use_count: 100000000000000000000 is not a whole number" in out
    assert "People/Ann.md" not in out  # a person's own property: not vaultmem's to judge
    assert (memory.read_bytes(), person.read_bytes()) == before  # the notes left as they are


def test_counts_are_read_up_to_two_to_the_53_and_reinforcement_stays_there() -> None:
    fields, warnings = read_fields({"use_count": MAX_COUNT, "review_count": MAX_COUNT + 1})
    assert fields.use_count == MAX_COUNT
    assert [w.key for w in warnings] == ["review_count"]
    from vaultmem.core.scoring.reinforcement import touch_changes

    assert touch_changes(fields, parse_datetime(NOW))["use_count"] == MAX_COUNT


@pytest.mark.parametrize("value", ["1e20", "inf", "-1e20", "nan", "253402300800"])
def test_now_and_since_outside_years_1_to_9999_are_a_usage_error(
    vault: Path, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for command in (["list", "--now", value], ["recall", "ramen", "--since", value]):
        code, _out, err = run(*command, vault=vault)
        assert code == 2, (command, err)
        assert "is not a datetime" in err and "Traceback" not in err
    monkeypatch.setenv("VAULTMEM_NOW", value)
    code, _out, err = run("status", vault=vault)
    assert code == 2 and "VAULTMEM_NOW" in err


def test_dates_of_year_1_and_9999_are_written_and_read_back(vault: Path) -> None:
    for moment in ("0001-01-01T00:00:00", "9999-12-31T23:59:59"):
        assert format_datetime(parse_datetime(moment)) == moment
        code, out, err = run("remember", f"made at {moment}", "--now", moment, vault=vault)
        assert code == 0, err
        code, out, err = run("list", "--now", moment, vault=vault)
        assert code == 0, err


def test_mcp_recall_since_out_of_range_is_an_input_error(vault: Path) -> None:
    from vaultmem.errors import InputError

    with Vault.open(vault) as v, pytest.raises(InputError, match="since is not a datetime"):
        v.recall("ramen", since="1e20", now=parse_datetime(NOW))


def test_nul_is_refused_in_new_content_with_one_line(vault: Path, tmp_path: Path) -> None:
    before = sorted(p.name for p in (vault / "STM").iterdir())
    code, _out, err = run("remember", "--title", "Nul", vault=vault, stdin="a\0b")
    assert code == 1 and err.strip() == (
        "Error: content holds a NUL byte (git would take the note for binary)"
    )
    lines = tmp_path / "in.jsonl"
    lines.write_text(
        json.dumps({"content": "a\0b"}) + "\n"
        + json.dumps({"content": "c", "note": "x\0"}) + "\n"
        + json.dumps({"content": "big", "use_count": HUGE}) + "\n"
        + json.dumps({"content": "big", "use_days": HUGE}) + "\n",
        encoding="utf-8",
    )
    code, _out, err = run("import", str(lines), vault=vault)
    assert code == 1, err
    assert "line 1: content holds a NUL byte" in err
    assert "line 2: property 'note' holds a NUL byte" in err
    assert "line 3: use_count must be a whole number in 1..2^53" in err
    assert "line 4: property use_days: 100000000000000000000 is not a whole number" in err
    assert sorted(p.name for p in (vault / "STM").iterdir()) == before
    from vaultmem.errors import InputError

    with Vault.open(vault) as v, pytest.raises(InputError, match="NUL"):
        v.remember("a\0b", now=parse_datetime(NOW))


def test_a_note_over_the_size_limit_is_never_read_and_is_listed(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.store import raw_reads

    monkeypatch.setattr(raw_reads, "_LIMIT", [raw_reads._LIMIT[0]])  # one per process: restored
    huge = vault / "STM" / "Huge.md"
    with open(huge, "wb") as sparse:  # 20 GB, sparse: reading it whole would exhaust memory
        sparse.truncate(20 * 2**30)
    big = vault / "STM" / "Big.md"
    big.write_text("---\ntype: memory\n---\n" + "a" * (2 * 2**20), encoding="utf-8")
    (vault / "vaultmem.toml").write_text("[index]\nmax_note_mb = 1.5\n", encoding="utf-8")
    for command in (["list"], ["recall", "ramen"], ["status"], ["lifecycle", "--now", NOW]):
        code, out, err = run(*command, vault=vault)
        assert code == 0, (command, err)
        assert "Big.md" not in out and "Huge.md" not in out
    code, out, _err = run("doctor", vault=vault)
    assert code == 1
    assert ("problem [too-big] STM/Huge.md: 20480.0 MB, over the note size limit "
            "([index] max_note_mb): not read") in out
    assert "problem [too-big] STM/Big.md: 2.0 MB" in out
    code, _out, err = run("show", "Huge", vault=vault)
    assert code == 1 and "over the note size limit" in err
    (vault / "vaultmem.toml").write_text("[index]\nmax_note_mb = 3\n", encoding="utf-8")
    code, out, _err = run("list", vault=vault)  # a raised limit: the note is read now
    assert code == 0 and "STM/Big.md" in out
    (vault / "vaultmem.toml").write_text("[index]\nmax_note_mb = 0\n", encoding="utf-8")
    code, _out, err = run("list", vault=vault)
    assert code == 1 and "[index] max_note_mb must be a positive number, not 0" in err
