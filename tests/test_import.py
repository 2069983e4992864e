"""``import`` never stops at a bad line, and importing the same file twice adds nothing."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from conftest import index_content
from conftest import run_cli as run

from vaultmem import Vault
from vaultmem.core.notes.content_hash import content_key
from vaultmem.services.index import pass_indexer
from vaultmem.services.memories import remembering
from vaultmem.services.memories.remembering import IMPORT_BATCH, INDEX_AHEAD_FROM

NOW = "2026-11-20T09:00:00"

LINES: list[tuple[bytes, str | None]] = [
    # (line bytes, expected problem: None = imported, "dup" = already there)
    (
        b'\xef\xbb\xbf{"content": "First good memory about apples", '
        b'"id": "01JIMPORTAPPLES00000000000"}',
        None,
    ),
    (b'{"content": "unterminated"', "not JSON"),
    (b'{"content": "x", "meta": {"a": 1}}', "a nested object is not a note property"),
    (b'{"content": "y", "title": 42}', "title must be a string"),
    (b'{"content": "z", "title": ["a", "b"]}', "title must be a string"),
    (b'{"content": "w", "created": 1e20}', "created is not a datetime"),
    (b'{"content": "lone \\ud800 surrogate"}', "lone surrogate"),
    ('{"content": "Caf\xe9 cr\xe8me"}'.encode("latin-1"), "not UTF-8"),
    (b'{"content": "Second good memory: bananas!", "tags": ["fruit"]}', None),
    (b"   ", None),
    (b'{"content": {"nested": 1}}', 'missing "content"'),
    (b"[1, 2]", "must be a JSON object"),
    (b'{"content": "second GOOD memory -- bananas"}', "dup"),
    (b'{"content": "v", "created": "not a date"}', "created is not a datetime"),
    (b'{"content": "deep", "x": [[1]]}', "is not a text, number or list"),
    (b'{"content": "nan strength", "strength": NaN}', "strength must be a number"),
    (b'{"content": "dup id", "id": "01JIMPORTAPPLES00000000000"}', "dup"),
    (b'{"content": "bad tags", "tags": {"a": 1}}', "tags must be a list"),
    (b'{"content": "bad pinned", "pinned": "yes"}', "pinned must be true or false"),
    (b'{"content": "\\ud83d\\ude00 emoji pair is fine"}', None),
]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    Vault.init(root)
    return root


def _notes(vault: Path) -> set[str]:
    return {p.relative_to(vault).as_posix() for p in (vault / "STM").glob("*.md")}


def test_bad_lines_are_reported_by_number_and_skipped(vault: Path, tmp_path: Path) -> None:
    jsonl = tmp_path / "memories.jsonl"
    jsonl.write_bytes(b"\n".join(line for line, _ in LINES) + b"\n")
    code, out, err = run("import", str(jsonl), "--json", "--now", NOW, vault=vault)
    assert code == 0, err
    assert "Traceback" not in err
    report = json.loads(out)
    errors = {e["line"]: e["error"] for e in report["errors"]}
    for number, (_, expected) in enumerate(LINES, 1):
        if expected in (None, "dup"):
            assert number not in errors, (number, errors.get(number))
        else:
            assert expected in errors[number], (number, errors.get(number))
            assert f"line {number}: " in err
    assert report["imported"] == 3
    assert [d["line"] for d in report["already_there"]] == [13, 17]
    written = _notes(vault)
    assert written == set(report["paths"])
    texts = [(vault / p).read_text(encoding="utf-8") for p in written]
    assert any("First good memory about apples" in t for t in texts)
    assert any("😀 emoji pair is fine" in t for t in texts)
    listed = json.loads(run("list", "--json", vault=vault)[1])["memories"]
    assert {row["path"] for row in listed} == written

    code, out, err = run("import", str(jsonl), "--json", "--now", NOW, vault=vault)
    assert code == 0
    again = json.loads(out)
    assert again["imported"] == 0 and again["paths"] == []
    assert [d["line"] for d in again["already_there"]] == [1, 9, 13, 17, 20]
    assert _notes(vault) == written


def test_a_file_of_only_bad_lines_exits_1_naming_it(vault: Path, tmp_path: Path) -> None:
    jsonl = tmp_path / "bad.jsonl"
    jsonl.write_bytes(b'{"content": 1}\nnot json\n')
    code, out, err = run("import", str(jsonl), vault=vault)
    assert code == 1
    assert "line 1: " in err and "line 2: not JSON" in err
    assert f"no line of {jsonl} could be imported" in err


def test_reimport_matches_content_ignoring_case_punctuation_and_spacing(
    vault: Path, tmp_path: Path
) -> None:
    with Vault.open(vault) as v:
        v.remember("Staging DB is Postgres 16, port 5433.", now=None)
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text(
        json.dumps({"content": "staging db is postgres 16 port 5433"})
        + "\n"
        + json.dumps({"content": "Staging DB is Postgres 16, port 5432."})
        + "\n"
    )
    code, out, err = run("import", str(jsonl), "--json", vault=vault)
    report = json.loads(out)
    assert report["imported"] == 1 and [d["line"] for d in report["already_there"]] == [1]
    assert content_key("A  b,\nC!") == content_key("a b c")
    assert content_key("a b c") != content_key("a b d")


def test_a_large_import_spans_batches_and_names_clashes_apart(vault: Path, tmp_path: Path) -> None:
    count = IMPORT_BATCH + 20
    jsonl = tmp_path / "many.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"content": f"Weekly note number {i}", "title": "Weekly note"}) + "\n"
            for i in range(count)
        )
    )
    code, out, err = run("import", str(jsonl), "--json", "--now", NOW, vault=vault)
    assert code == 0, err
    report = json.loads(out)
    assert report["imported"] == count and not report["errors"]
    assert len(set(report["paths"])) == count
    assert (
        "STM/Weekly note.md" in report["paths"] and f"STM/Weekly note {count}.md" in report["paths"]
    )
    with Vault.open(vault) as v:
        assert v.sync().any_change is False
        assert v.index.note_count() >= count


def test_a_big_import_is_indexed_by_a_helper_and_its_names_stay_apart(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the helper indexes a batch while the next is written: a name written in an earlier batch
    # may not be in the index yet, and must still not be given twice
    started: list[object] = []
    real_start = pass_indexer.PassIndexer.start

    def recording_start(root: Path, sidecar: Path) -> object:
        started.append(real_start(root, sidecar))
        return started[-1]

    monkeypatch.setattr(pass_indexer.PassIndexer, "start", recording_start)
    handed: list[int] = []
    real_submit = pass_indexer.PassIndexer.submit

    def recording_submit(self: pass_indexer.PassIndexer, paths: list[str], written: object) -> None:
        assert set(written) == set(paths)  # type: ignore[arg-type]  # each with its text
        handed.append(len(paths))
        real_submit(self, paths, written)  # type: ignore[arg-type]

    monkeypatch.setattr(pass_indexer.PassIndexer, "submit", recording_submit)
    count = INDEX_AHEAD_FROM + 20
    lines = [json.dumps({"content": f"Daily log {i}", "title": "Daily log"}) for i in range(count)]
    with Vault.open(vault) as v:
        report = v.import_jsonl(lines)
        assert len(report.imported) == len(set(report.imported)) == count
        # the last lines in halving batches: the import waits for the helper's last 65 only
        assert handed == [IMPORT_BATCH, 260, 130, 65, 65]
        assert started and started[0] is not None
        assert started[0].indexed == count  # type: ignore[attr-defined]
        indexed = {r[0] for r in v.index.conn.execute("SELECT path FROM notes")}
        assert set(report.imported) <= indexed
        assert v.sync().any_change is False
        again = v.import_jsonl(lines)
    assert not again.imported and len(again.duplicates) == count


def test_a_big_import_hands_its_helper_the_short_texts_and_indexes_as_a_rebuild_does(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # texts cross the pipe as JSON (escaped to ASCII): accents, emoji, CRLF and tabs come out
    # as written; a text over the limit is not handed over, and the helper reads it back
    monkeypatch.setattr(remembering, "HANDED_CHARS_MAX", 350)
    handed: list[str] = []
    real_submit = pass_indexer.PassIndexer.submit

    def recording_submit(self: pass_indexer.PassIndexer, paths: list[str], written: object) -> None:
        handed.extend(written)  # type: ignore[arg-type]
        real_submit(self, paths, written)  # type: ignore[arg-type]

    monkeypatch.setattr(pass_indexer.PassIndexer, "submit", recording_submit)
    lines = [
        json.dumps({"content": f"Café n°{i} 🍐 crème\r\nbrûlée\tüber" + " long" * (i % 3 * 20)})
        for i in range(INDEX_AHEAD_FROM + 5)
    ]
    with Vault.open(vault) as v:
        report = v.import_jsonl(lines)
        assert len(report.imported) == len(lines)
        long = {p for p in report.imported if len((vault / p).read_text("utf-8")) > 350}
        assert long and not long & set(handed)
        assert set(handed) == set(report.imported) - long
        imported = index_content(v)
        assert v.sync().any_change is False
        v.sync(rebuild=True)
        assert index_content(v) == imported


def test_an_imported_note_is_read_by_the_fast_path_once(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the write's safety check and the index both read the new frontmatter: the second reading
    # is remembered from the first (a fresh copy each time, so no reader shares a dict); the
    # check reads only the lines not read back before (the id line is new in every note)
    from vaultmem.core.notes import note_text

    calls: list[str] = []
    real = note_text.parse_simple_frontmatter
    monkeypatch.setattr(
        note_text, "parse_simple_frontmatter", lambda text: calls.append(text) or real(text)
    )
    lines = [f'{{"content": "memory number {i} about pears", "tags": ["t{i}"]}}' for i in range(30)]
    with Vault.open(vault) as v:
        report = v.import_jsonl(lines)
        assert len(report.imported) == 30
        imported = [text for text in calls if text.startswith("id: ")]
        assert len(calls) == len(set(calls)) and len(imported) == 30
        first = note_text.parse_frontmatter(imported[0])
        first["tags"].append("changed")
        first["new"] = 1
        assert note_text.parse_frontmatter(imported[0]) == real(imported[0])
        tags = v.index.conn.execute("SELECT count(*) FROM tags").fetchone()[0]
        assert tags == 30


def test_an_import_runs_without_the_cyclic_collector_and_gives_it_back(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [json.dumps({"content": f"Fact {i} about kiwis"}) + "\n" for i in range(30)]
    with Vault.open(vault) as v:
        seen: list[bool] = []
        real_refresh = v.refresh

        def recording_refresh(*args: object) -> object:
            seen.append(gc.isenabled())
            return real_refresh(*args)  # type: ignore[arg-type]

        monkeypatch.setattr(v, "refresh", recording_refresh)
        report = v.import_jsonl(lines)
    assert len(report.imported) == 30
    assert seen and not any(seen)
    assert gc.isenabled()
