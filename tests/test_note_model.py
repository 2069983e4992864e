"""The note model around the text: fields, timestamps, names, settings, atomic writes."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vaultmem.core.notes.fields import MemoryFields, normalise_tags, read_fields
from vaultmem.core.notes.naming import FORBIDDEN_CHARS, new_id, safe_title, title_from_content
from vaultmem.core.notes.timestamps import format_datetime, parse_datetime
from vaultmem.core.scoring.reinforcement import (
    is_cross_domain,
    keep_changes,
    observe_changes,
    touch_changes,
)
from vaultmem.core.settings import Settings, SettingsError, parse_settings
from vaultmem.errors import ConfigError, NoteChangedError, NoteError, UnsafeNoteError
from vaultmem.store.note_files import read_note, write_note
from vaultmem.store.settings_file import load_settings

UTC = dt.UTC


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-20T09:14:03", dt.datetime(2026, 11, 20, 9, 14, 3, tzinfo=UTC)),
        ("2026-11-20T09:14:03Z", dt.datetime(2026, 11, 20, 9, 14, 3, tzinfo=UTC)),
        ("2026-11-20T10:14:03+01:00", dt.datetime(2026, 11, 20, 9, 14, 3, tzinfo=UTC)),
        ("2026-11-20", dt.datetime(2026, 11, 20, tzinfo=UTC)),
        (dt.date(2026, 11, 20), dt.datetime(2026, 11, 20, tzinfo=UTC)),
        (dt.datetime(2026, 11, 20, 9, 14, 3), dt.datetime(2026, 11, 20, 9, 14, 3, tzinfo=UTC)),
        (1763630043, dt.datetime(2025, 11, 20, 9, 14, 3, tzinfo=UTC)),
        ("1763630043", dt.datetime(2025, 11, 20, 9, 14, 3, tzinfo=UTC)),
    ],
)
def test_datetimes_in_any_iso_form_become_aware_utc(value: object, expected: dt.datetime) -> None:
    assert parse_datetime(value) == expected


@pytest.mark.parametrize("value", [True, "soon", "", None, [], float("nan")])
def test_not_datetimes_are_refused(value: object) -> None:
    with pytest.raises(ValueError):
        parse_datetime(value)


def test_datetimes_are_written_in_obsidian_utc_form() -> None:
    local = dt.datetime(2026, 11, 20, 10, 14, 3, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert format_datetime(local) == "2026-11-20T09:14:03"


def test_wrong_typed_values_warn_and_fall_back_to_defaults() -> None:
    fields, warnings = read_fields(
        {
            "type": "memory",
            "strength": "high",
            "use_count": -3,
            "importance": 1.5,
            "pinned": "yes",
            "last_used": "someday",
            "tags": "a, #b b",
        }
    )
    assert (fields.strength, fields.use_count, fields.importance, fields.pinned) == (
        1.0,
        1,
        0.5,
        False,
    )
    assert fields.tags == ("a", "b")
    assert {w.key for w in warnings} == {
        "strength",
        "use_count",
        "importance",
        "pinned",
        "last_used",
    }
    message = next(w for w in warnings if w.key == "strength").message("STM/x.md")
    assert message == "STM/x.md: strength: 'high' is not a number; using the default"


def test_memory_fields_are_an_immutable_value_with_named_changes() -> None:
    import pickle

    fields, warnings = read_fields({"type": "memory", "use_count": 3, "tags": ["a", "b"]})
    assert not warnings
    assert (fields.type, fields.use_count, fields.tags, fields.status) == (
        "memory", 3, ("a", "b"), "active")  # fmt: skip
    assert fields == MemoryFields(type="memory", use_count=3, tags=("a", "b"), use_days=1)
    changed = fields._replace(type=None, use_count=4)
    assert (changed.type, changed.use_count, fields.type, fields.use_count) == (
        None, 4, "memory", 3)  # fmt: skip
    assert not changed.managed and fields.managed and fields.access_count == 2
    with pytest.raises(AttributeError):
        fields.use_count = 5  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(fields)) == fields
    assert hash(fields) == hash(MemoryFields(**fields._asdict()))


def test_missing_times_fall_back_to_created_then_file_time() -> None:
    mtime = dt.datetime(2026, 1, 2, tzinfo=UTC)
    fields, _ = read_fields({"type": "memory"}, fallback_time=mtime)
    assert fields.created == fields.last_used == mtime
    fields, _ = read_fields({"created": "2026-03-04"}, fallback_time=mtime)
    assert fields.last_used == dt.datetime(2026, 3, 4, tzinfo=UTC)


@given(st.text())
def test_safe_titles_never_hold_forbidden_characters(text: str) -> None:
    title = safe_title(text)
    assert not any(ch in title for ch in FORBIDDEN_CHARS)
    assert "%%" not in title and not title.startswith(".") and title == title.strip()
    assert len(title) <= 80


def test_titles_from_content() -> None:
    assert title_from_content("# Prefers: dark [[themes]]?\nmore") == "Prefers dark themes"
    assert title_from_content("\n\n   \none two three four five six seven eight nine") == (
        "one two three four five six seven eight"
    )
    assert len({new_id() for _ in range(100)}) == 100


def test_normalise_tags() -> None:
    assert normalise_tags(["#a", "b", "a", None, 3]) == ("a", "b", "3")
    with pytest.raises(ValueError):
        normalise_tags({"a": 1})


def test_reinforcement_changes() -> None:
    fields, _ = read_fields({"type": "memory", "use_count": 2, "strength": 1.95, "tags": ["api"]})
    now = dt.datetime(2026, 11, 20, tzinfo=UTC)
    assert touch_changes(fields, now) == {"last_used": now, "use_count": 3}
    assert touch_changes(fields, now, boost=True)["strength"] == 2.0  # capped
    assert observe_changes(fields, now, ["api"]) == {
        "last_used": now,
        "use_count": 3,
        "review_count": 1,
        "last_review_at": now,
    }
    crossed = observe_changes(fields, now, ["cooking"])
    assert crossed["cross_domain_count"] == 1 and crossed["strength"] == 2.0
    assert keep_changes(fields) == {"use_count": 5}
    assert not is_cross_domain([], ["x"])  # no tags: no evidence either way


def test_settings_defaults_and_errors(tmp_path: Path) -> None:
    assert load_settings(tmp_path) == Settings()
    settings = parse_settings(
        {"decay": {"model": "exponential"}, "layers": {"working": {"half_life_days": 1}}}
    )
    assert settings.decay.model == "exponential" and settings.half_life_days("working") == 1.0
    assert settings.half_life_days("semantic") == float("inf")
    for bad, words in [
        ({"decay": {"beta": "x"}}, "[decay] beta must be a number"),
        ({"decay": {"model": "linear"}}, "[decay] unknown decay model 'linear'"),
        ({"nope": {}}, "unknown section [nope]"),
        ({"folders": {"stm": ""}}, "[folders] stm must be a non-empty string"),
        ({"layers": {"working": {"half_life_days": 0}}}, "positive number or inf"),
    ]:
        with pytest.raises(SettingsError, match=words.replace("[", r"\[").replace("]", r"\]")):
            parse_settings(bad)
    (tmp_path / "vaultmem.toml").write_text("[decay\nmodel = 1")
    with pytest.raises(ConfigError, match="vaultmem.toml: not valid TOML"):
        load_settings(tmp_path)


def test_settings_of_a_vault_named_by_a_relative_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Folders named in vaultmem.toml are checked against the vault's resolved path: given a
    relative one, every folder looked like a symbolic link leading outside."""
    vault = tmp_path / "v"
    (vault / "Short").mkdir(parents=True)
    (vault / "vaultmem.toml").write_text('[folders]\nstm = "Short"\n')
    monkeypatch.chdir(tmp_path)
    assert load_settings(Path("v")).folders.stm == "Short"
    (tmp_path / "elsewhere").mkdir()
    (vault / "Short").rmdir()
    (vault / "Short").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="stm must lie inside the vault"):
        load_settings(Path("v"))


def test_atomic_write_refuses_a_note_changed_since_it_was_read(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text("one\r\n")
    snapshot = read_note(note)
    assert snapshot.text == "one\r\n"  # CRLF kept
    note.write_text("someone else's edit\n")
    with pytest.raises(NoteChangedError, match="changed on disk since it was read"):
        write_note(note, "mine\n", expected=snapshot.fingerprint)
    assert note.read_text() == "someone else's edit\n"
    with pytest.raises(NoteError, match="already exists"):
        write_note(note, "new\n", expected=None)


def test_atomic_write_keeps_mode_and_leaves_no_temp_files(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text("one\n")
    os.chmod(note, 0o600)
    snapshot = read_note(note)
    write_note(note, "two\n", expected=snapshot.fingerprint)
    assert note.read_text() == "two\n"
    assert oct(note.stat().st_mode & 0o777) == "0o600"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.md"]


def test_same_bytes_with_new_mtime_still_count_as_unchanged(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_text("one\n")
    snapshot = read_note(note)
    os.utime(note, ns=(5, 5))  # e.g. a sync tool touched it without changing it
    write_note(note, "two\n", expected=snapshot.fingerprint)
    assert note.read_text() == "two\n"


def test_non_utf8_notes_are_unsafe(tmp_path: Path) -> None:
    note = tmp_path / "n.md"
    note.write_bytes(b"caf\xe9")
    with pytest.raises(UnsafeNoteError, match="not UTF-8"):
        read_note(note)


def test_warnings_follow_the_field_order_whatever_the_key_order() -> None:
    raw = {"last_used": "someday", "pinned": "yes", "strength": "high", "id": [None]}
    _, warnings = read_fields(raw)
    assert [w.key for w in warnings] == ["strength", "pinned", "last_used"]
    _, reversed_warnings = read_fields(dict(reversed(raw.items())))
    assert reversed_warnings == warnings
