"""A note's row in the index: fields that are not set are bound as SQL_NULL and stored as NULL."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem import Vault
from vaultmem.core.notes.note_parse import parse_note
from vaultmem.services.index.index_stamps import real_mtime
from vaultmem.store.note_rows import (
    FIELD_COLUMNS,
    INSERT_COLUMNS,
    SQL_NULL,
    _json_list,
    note_values,
)


def test_sqlite_stores_the_null_placeholder_as_null_in_every_column_type(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "nulls.db")
    conn.execute("CREATE TABLE t (r REAL, s TEXT NOT NULL DEFAULT '', i INTEGER, n NUMERIC, b)")
    conn.execute("CREATE TABLE u (r REAL, s TEXT, i INTEGER, n NUMERIC, b)")
    conn.executemany("INSERT INTO u VALUES (?, ?, ?, ?, ?)", [(SQL_NULL,) * 5])
    stored = conn.execute("SELECT typeof(r), typeof(s), typeof(i), typeof(n), typeof(b) FROM u")
    assert stored.fetchall() == [("null",) * 5]
    assert conn.execute("SELECT count(*) FROM u WHERE s IS NULL AND r IS NULL").fetchone() == (1,)
    with pytest.raises(sqlite3.IntegrityError, match="NOT NULL"):  # a NULL, as None would be
        conn.execute("INSERT INTO t (s) VALUES (?)", (SQL_NULL,))
    conn.close()


def test_a_plain_note_binds_no_none_and_reads_back_none(tmp_path: Path) -> None:
    """An ordinary note sets none of the memory fields: every one is bound as SQL_NULL, never
    as None, and the index gives None back, in a cold index and in a note-by-note sync alike."""
    when = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)  # the file's mtime stands in for `created`
    values = note_values(parse_note("Plain.md", "Just text.\n", fallback_time=when), 11, 1, "h")
    assert not any(value is None for value in values)
    unset = [c for c, v in zip(INSERT_COLUMNS, values, strict=True) if v is SQL_NULL]
    assert {"id", "type", "box", "trace", "archived_at", "supersedes", "previous"} <= set(unset)
    assert set(unset) <= set(FIELD_COLUMNS)

    root = tmp_path / "v"
    (root / "STM").mkdir(parents=True)
    (root / "vaultmem.toml").write_text("")
    (root / "Plain.md").write_text("Just text.\n")
    (root / "STM" / "m.md").write_text(
        "---\nid: m1\ntype: memory\ncreated: 2026-01-02T03:04:05Z\n---\nA memory.\n"
    )
    columns = ", ".join(f"typeof({c})" for c in FIELD_COLUMNS)
    with Vault.open(root) as vault:
        for rebuild in (True, False):
            if not rebuild:  # the note-by-note path: a second note arrives after the first sync
                (root / "Later.md").write_text("More text.\n")
            vault.sync(rebuild=rebuild)
            conn = vault.index.conn
            for path in ("Plain.md", *(() if rebuild else ("Later.md",))):
                kinds = conn.execute(f"SELECT {columns} FROM notes WHERE path = ?", (path,))
                kind_of = dict(zip(FIELD_COLUMNS, kinds.fetchone(), strict=True))
                assert {c for c, kind in kind_of.items() if kind == "null"} == set(unset)
            memory = conn.execute(
                "SELECT id, type, typeof(created), box FROM notes WHERE path = 'STM/m.md'"
            ).fetchone()
            assert memory == ("m1", "memory", "real", None)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.text(), max_size=4))
def test_a_list_of_strings_is_written_as_json_dumps_writes_it(items: list[str]) -> None:
    assert _json_list(tuple(items)) == json.dumps(items, ensure_ascii=False)
    assert json.loads(_json_list(items)) == items


def test_an_update_writes_only_the_changed_columns_and_equals_a_fresh_row(tmp_path: Path) -> None:
    """A moved note whose fields changed (one set, one cleared, one new) is updated in place:
    the ``UPDATE`` names only the columns that changed (not ``id``, ``type`` or ``name_key``,
    each indexed), and the row then equals the one a rebuild makes from the same file."""
    root = tmp_path / "v"
    (root / "STM").mkdir(parents=True)
    (root / "Boxes" / "b").mkdir(parents=True)
    (root / "vaultmem.toml").write_text("")
    before = (
        "---\nid: m1\ntype: memory\nstatus: active\nlayer: episodic\n"
        "created: 2026-01-02T03:04:05Z\nvalid_until: 2027-01-01T00:00:00Z\ntags: [a]\n---\n"
        "A memory about [[Other]].\n"
    )
    after = before.replace("valid_until: 2027-01-01T00:00:00Z\n", "box: '[[b]]'\n").replace(
        "layer: episodic", "layer: semantic"
    )
    (root / "STM" / "m.md").write_text(before)
    columns = ", ".join(INSERT_COLUMNS)
    with Vault.open(root) as vault:
        vault.sync()
        (root / "STM" / "m.md").unlink()
        (root / "Boxes" / "b" / "m.md").write_text(after)
        statements: list[str] = []
        vault.index.conn.set_trace_callback(statements.append)
        vault.refresh(["STM/m.md", "Boxes/b/m.md"])
        vault.index.conn.set_trace_callback(None)
        updated = vault.index.conn.execute(
            f"SELECT nid, {columns} FROM notes WHERE path = 'Boxes/b/m.md'"
        ).fetchone()
        updates = [s for s in statements if s.startswith("UPDATE notes SET path")]
        assert len(updates) == 1
        assignments = updates[0].split(" SET ")[1].split(" WHERE")[0]
        named = {part.split(" = ")[0] for part in assignments.split(", ")}
        assert {"path", "layer", "box", "valid_until", "size", "hash", "mtime_ns"} <= named
        assert not named & {"id", "type", "name_key", "status", "title", "tags", "created"}
        vault.sync(rebuild=True)
        fresh = vault.index.conn.execute(
            f"SELECT {columns} FROM notes WHERE path = 'Boxes/b/m.md'"
        ).fetchone()
    stamp = INSERT_COLUMNS.index("mtime_ns")  # racily clean under load: stored as pending

    def as_read(row: tuple[object, ...]) -> tuple[object, ...]:
        return (*row[:stamp], real_mtime(int(row[stamp])), *row[stamp + 1 :])  # type: ignore[call-overload]

    assert as_read(tuple(updated[1:])) == as_read(tuple(fresh))
    kept = dict(zip(INSERT_COLUMNS, updated[1:], strict=True))
    assert (kept["valid_until"], kept["box"], kept["layer"]) == (None, "[[b]]", "semantic")
