"""The shortcuts that make ``import`` fast give exactly what the long way gives: a note rendered
from lines read back before, ids made by vaultmem, titles that need no clean-up, content keys of
ASCII text, and names read from the index once per import."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import time
import unicodedata
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ulid import ULID

from vaultmem import Vault
from vaultmem.core.notes import naming, note_text, yaml_scalars
from vaultmem.core.notes.content_hash import content_key
from vaultmem.core.notes.note_text import (
    FrontmatterError,
    parse_frontmatter,
    render_note,
    split_note,
)
from vaultmem.services.memories.remembering import IMPORT_BATCH

SCALARS = (
    st.text(max_size=12)
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, width=32)
    | st.booleans()
    | st.datetimes(min_value=dt.datetime(1000, 1, 1))
    | st.datetimes(min_value=dt.datetime(1000, 1, 1), timezones=st.just(dt.UTC))
    | st.sampled_from(["memory", "active", "fact", "true", "0.5", "-0.0", "[[Link]]", "a: b"])
)
FIELDS = st.dictionaries(
    st.sampled_from(["type", "status", "source", "tags", "importance", "pinned", "n", "k"]),
    SCALARS | st.lists(st.text(max_size=8), max_size=3),
    max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(first=FIELDS, second=FIELDS)
def test_a_note_rendered_from_lines_read_before_is_the_note_rendered_afresh(
    first: dict[str, object], second: dict[str, object]
) -> None:
    body = "The body.\n"
    note_text._CHECKED_LINES.clear()
    try:
        fresh = render_note(second, body)
    except (FrontmatterError, TypeError) as err:
        fresh = type(err).__name__
    note_text._CHECKED_LINES.clear()
    try:
        render_note(first, body)  # its lines are now known
        known = render_note(second, body)
    except (FrontmatterError, TypeError) as err:
        known = type(err).__name__
    assert known == fresh
    if not isinstance(known, str) or known.startswith("---"):
        note = split_note(known)
        assert note.body == body and note.has_frontmatter
        assert parse_frontmatter(note.yaml) == {
            k: yaml_scalars.normalised(v) for k, v in second.items()
        }


def test_equal_values_written_differently_never_share_a_line() -> None:
    note_text._CHECKED_LINES.clear()
    pairs: list[tuple[dict[str, object], dict[str, object]]] = [
        ({"a": 0.0}, {"a": -0.0}),
        ({"a": True}, {"a": 1}),
        ({"a": 1}, {"a": 1.0}),
    ]
    for one, other in pairs:
        assert render_note(one, "") != render_note(other, "")
    zone = ZoneInfo("America/New_York")  # 1:30 twice on 1 November 2026: EDT, then EST
    first, second = (dt.datetime(2026, 11, 1, 1, 30, fold=f, tzinfo=zone) for f in (0, 1))
    assert first == second
    assert render_note({"a": first}, "") == "---\na: 2026-11-01T05:30:00\n---\n"
    assert render_note({"a": second}, "") == "---\na: 2026-11-01T06:30:00\n---\n"
    assert render_note({"a": -0.0}, "") == "---\na: -0.0\n---\n"
    assert render_note({"a": 1}, "") == "---\na: 1\n---\n"


def test_a_line_that_would_not_read_back_is_refused_beside_lines_read_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    note_text._CHECKED_LINES.clear()
    render_note({"type": "memory", "importance": 0.5}, "x\n")
    real = yaml_scalars.render_float
    monkeypatch.setattr(yaml_scalars, "render_float", lambda n: "0.25" if n == 0.75 else real(n))
    with pytest.raises(FrontmatterError, match="importance"):
        render_note({"type": "memory", "importance": 0.75}, "x\n")
    assert render_note({"type": "memory", "importance": 0.5}, "x\n").count("\n") == 5


def test_ids_are_ulids_in_the_order_made_and_a_forked_child_starts_afresh() -> None:
    before = time.time()
    ids = [naming.new_id() for _ in range(5000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[0-7][0-9A-HJKMNP-TV-Z]{25}", i) for i in ids)
    for i in ids[::500]:
        assert str(ULID.from_str(i)) == i
        assert before - 0.01 <= ULID.from_str(i).timestamp <= time.time() + 0.01
    read, write = os.pipe()
    parent_last = naming.new_id()
    pid = os.fork()
    if pid == 0:  # the child: the id it makes next
        os.write(write, naming.new_id().encode())
        os._exit(0)
    os.waitpid(pid, 0)
    child = os.read(read, 64).decode()
    os.close(read)
    os.close(write)
    following = naming.new_id()
    assert child != following and following > parent_last  # not the parent's next in line


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=90)
    | st.sampled_from(["CON", "nul.txt", "Com1 notes", "a  b", ".hidden", "end.", "50%% off"])
)
def test_a_title_that_needs_no_clean_up_is_what_the_clean_up_gives(text: str) -> None:
    for limits in ((80, 180), (2000, 8000), (10, 5)):
        expected = naming._cleaned_title(text, *limits)
        assert naming.safe_title(text, max_chars=limits[0], max_bytes=limits[1]) == expected


_PUNCTUATION = re.compile(r"[^\w\s]|_")
_WHITESPACE = re.compile(r"\s+")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x3000), max_size=40))
def test_content_keys_of_ascii_text_are_the_expressions_keys(text: str) -> None:
    expected = _PUNCTUATION.sub(" ", unicodedata.normalize("NFC", text).lower())
    expected = _WHITESPACE.sub(" ", expected).strip()
    assert content_key(text) == hashlib.sha256(expected.encode("utf-8")).hexdigest()


def test_a_big_import_names_apart_from_notes_indexed_before_it(tmp_path: Path) -> None:
    vault, _ = Vault.init(tmp_path / "v")
    (vault.root / "Notes").mkdir()
    (vault.root / "Notes" / "Harbour walk.md").write_text("A person's own note.\n", "utf-8")
    with vault:
        vault.import_jsonl([json.dumps({"content": "Garden plan", "title": "Garden plan"})])
        lines = [json.dumps({"content": "Harbour walk at dawn", "title": "Harbour walk"})]
        lines += [json.dumps({"content": f"Plan {i}", "title": "Garden plan"}) for i in range(2)]
        lines += [json.dumps({"content": f"Filler memory {i}"}) for i in range(IMPORT_BATCH)]
        report = vault.import_jsonl(lines, now=dt.datetime(2026, 11, 20, tzinfo=dt.UTC))
        assert not report.errors and len(report.imported) == len(lines)
        assert "STM/Harbour walk 2.md" in report.imported  # the person's note keeps its name
        assert {"STM/Garden plan 2.md", "STM/Garden plan 3.md"} <= set(report.imported)
        assert vault.title_clashes[-1]["taken_by"] == "Notes/Harbour walk.md"
        names = [p.lower() for p in report.imported]
        assert len(set(names)) == len(names)


@pytest.mark.parametrize("renames", [True, False])
def test_a_batch_never_writes_over_a_note_made_meanwhile_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, renames: bool
) -> None:
    from vaultmem.store import note_batch

    if not renames:  # as where renameat2 is missing: a hard link, then the temp file removed
        monkeypatch.setattr(note_batch, "_renameat2", lambda: None)
    folder = tmp_path / "STM"
    batch = note_batch.NewNotes()
    for i in range(3):
        batch.add(folder / f"n{i}.md", f"note {i}\n", f"STM/n{i}.md")
    (folder / "n1.md").write_text("someone else's\n", encoding="utf-8")
    failed = batch.commit()
    assert list(failed) == [folder / "n1.md"] and "already exists" in failed[folder / "n1.md"]
    assert sorted(p.name for p in folder.iterdir()) == ["n0.md", "n1.md", "n2.md"]
    assert (folder / "n1.md").read_text(encoding="utf-8") == "someone else's\n"
    assert (folder / "n2.md").read_text(encoding="utf-8") == "note 2\n"
    assert set(batch.linked) == {"STM/n0.md", "STM/n2.md"}  # by the names given
    assert batch.linked["STM/n2.md"][:2] == ("note 2\n", len("note 2\n"))


@pytest.mark.parametrize("lines", [1, 12])  # fewer than a sixth of the notes: a query a name
def test_names_asked_one_by_one_or_read_at_once_are_told_apart_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: int
) -> None:
    from vaultmem.services.memories.memory_creation import BatchNames
    from vaultmem.store.index_db import IndexDB

    reads: list[int] = []
    real = BatchNames.read

    def counted(index: IndexDB) -> BatchNames:
        reads.append(1)
        return real(index)

    monkeypatch.setattr(BatchNames, "read", counted)
    vault, _ = Vault.init(tmp_path / "v")
    (vault.root / "Notes").mkdir()
    for i in range(20):
        (vault.root / "Notes" / f"Topic {i}.md").write_text(f"note {i}\n", "utf-8")
    with vault:
        batch = [
            json.dumps({"content": f"About topic {i}", "title": "Topic 3"}) for i in range(lines)
        ]
        report = vault.import_jsonl(batch)
        assert bool(reads) == (lines * 6 >= vault.index.note_count() - lines)
        assert report.imported == [f"STM/Topic 3 {n}.md" for n in range(2, 2 + lines)]
        assert vault.title_clashes[0]["taken_by"] == "Notes/Topic 3.md"
