"""Every path vaultmem writes stays inside the vault; a hostile journal is refused, naming it.

The journal in ``.vaultmem/journal/`` is input like any other: a crafted or damaged line must
make ``lifecycle`` and ``undo`` refuse with one line naming the file and line, changing nothing
inside the vault or outside it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import snapshot_files
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.errors import UnsafePathError
from vaultmem.store.journal_check import KINDS, Operation
from vaultmem.store.vault_paths import confined, confined_free

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/ (not installed)
from benchmarks.generate_vault import REFERENCE_TIME  # noqa: E402

MEMORY = "---\nid: M1\ntype: memory\nstatus: active\n---\nA memory.\n"
PERSONAL = "# My own note\nNot a memory.\n"


@pytest.mark.parametrize(
    "rel",
    [
        "../outside.md",
        "STM/../../outside.md",
        "/etc/passwd",
        "C:\\Windows\\x.md",
        "C:x.md",
        ".git/config",
        ".obsidian/app.json",
        ".vaultmem/index.db",
        "STM/.hidden.md",
        "",
        "STM//x.md",
        "STM/./x.md",
        "STM/x\x00.md",
    ],
)
def test_confined_refuses_paths_outside_or_hidden(tmp_path: Path, rel: str) -> None:
    with pytest.raises(UnsafePathError):
        confined(tmp_path, rel)


def test_confined_follows_symlinks(tmp_path: Path) -> None:
    root, outside = tmp_path / "vault", tmp_path / "outside"
    (root / "STM").mkdir(parents=True)
    outside.mkdir()
    assert confined(root, "STM/a.md") == root.resolve() / "STM" / "a.md"
    os.symlink(outside, root / "Linked")
    with pytest.raises(UnsafePathError, match="outside the vault"):
        confined(root, "Linked/a.md")
    os.symlink(outside / "secret.md", root / "STM" / "link.md")
    with pytest.raises(UnsafePathError, match="outside the vault"):
        confined(root, "STM/link.md")
    os.symlink(root / ".vaultmem", root / "STM" / "side")
    with pytest.raises(UnsafePathError, match="dot-folder"):
        confined(root, "STM/side/x.md")


def test_confined_free_is_the_place_only_when_nothing_is_there(tmp_path: Path) -> None:
    root, outside = tmp_path / "vault", tmp_path / "outside"
    (root / "STM").mkdir(parents=True)
    outside.mkdir()
    assert confined_free(root, "STM/a.md") == root.resolve() / "STM" / "a.md"
    assert confined_free(root, "New/folder/a.md") == root.resolve() / "New" / "folder" / "a.md"
    (root / "STM" / "a.md").write_text(MEMORY, encoding="utf-8")
    assert confined_free(root, "STM/a.md") is None
    assert confined_free(root, "STM") is None  # a folder is no free place either
    os.symlink(outside / "gone.md", root / "STM" / "broken.md")  # a link, even a broken one
    assert confined_free(root, "STM/broken.md") is None
    os.symlink(outside, root / "Linked")
    with pytest.raises(UnsafePathError, match="outside the vault"):
        confined_free(root, "Linked/a.md")
    with pytest.raises(UnsafePathError):
        confined_free(root, "STM/../../outside.md")
    assert sorted(p.name for p in outside.iterdir()) == []


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    v, _ = Vault.init(tmp_path / "v")
    (v.root / "STM" / "Memory.md").write_text(MEMORY, encoding="utf-8")
    (v.root / "Notes").mkdir()
    (v.root / "Notes" / "Mine.md").write_text(PERSONAL, encoding="utf-8")
    v.sync()
    return v


def _op(
    kind: str,
    target: str,
    *,
    source: str | None = None,
    before: str | None = None,
    after: str | None = None,
    seq: object = 1,
) -> dict[str, object]:
    return {
        "op": kind,
        "seq": seq,
        "source": source,
        "target": target,
        "before": before,
        "after": after,
    }


HEADER = {
    "journal": 1,
    "command": "lifecycle",
    "now": "2026-12-01T00:00:00+00:00",
    "started": "2026-12-01T00:00:00+00:00",
}


def _cases(root: Path, outside: Path) -> dict[str, list[str]]:
    good_move = _op(
        "move",
        "Archive/Memory.md",
        source="STM/Memory.md",
        before=MEMORY,
        after=MEMORY.replace("active", "archived"),
    )

    def lines(*records: object) -> list[str]:
        return [json.dumps(HEADER)] + [json.dumps(r) for r in records]

    return {
        "dotdot target": lines(_op("create", "../escape.md", after=MEMORY)),
        "absolute target": lines(_op("create", str(outside / "evil.md"), after=MEMORY)),
        "absolute source": lines(
            _op(
                "move",
                "Archive/x.md",
                source=str(outside / "victim.md"),
                before=MEMORY,
                after=MEMORY,
            )
        ),
        "delete outside": lines(_op("delete", "../victim.md", before=MEMORY)),
        "unmanaged delete": lines(_op("delete", "Notes/Mine.md", before=PERSONAL)),
        "unmanaged edit": lines(_op("edit", "Notes/Mine.md", before=PERSONAL, after=MEMORY)),
        "outside folders": lines(_op("create", "Notes/New.md", after=MEMORY)),
        "dot-folder": lines(_op("create", "STM/.obsidian/x.md", after=MEMORY)),
        "not json mid-file": [json.dumps(HEADER), "{not json", json.dumps(good_move)],
        "seq as text": lines(_op("create", "STM/New.md", after=MEMORY, seq="1")),
        "text as number": lines({**_op("create", "STM/New.md", after=MEMORY), "after": 7}),
        "unknown op": lines({**_op("create", "STM/New.md", after=MEMORY), "op": "chmod"}),
        "done of nothing": lines(good_move, {"done": 9}),
        "not a note": lines(_op("create", "STM/run.sh", after=MEMORY)),
        "no header": [json.dumps(good_move)],
    }


def test_a_folder_swapped_for_a_symlink_between_two_checks_is_refused(tmp_path: Path) -> None:
    """Each call walks the folders again: no check is remembered between the notes of a pass,
    so a folder that becomes a link to elsewhere (a git pull, another program) mid-pass is
    caught at the next note."""
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    (vault / "Archive").mkdir(parents=True)
    outside.mkdir()
    assert confined(vault, "Archive/one.md") == vault / "Archive" / "one.md"
    (vault / "Archive").rmdir()
    (vault / "Archive").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePathError):
        confined(vault, "Archive/two.md")


@pytest.mark.parametrize("command", ["lifecycle", "undo"])
def test_a_hostile_journal_is_refused_with_one_line_and_nothing_changes(
    vault: Vault, tmp_path: Path, command: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.md").write_text(MEMORY, encoding="utf-8")
    folder = vault.sidecar / "journal"
    folder.mkdir(exist_ok=True)
    for name, lines in _cases(vault.root, outside).items():
        journal = folder / f"20260101T000000000000-{name.replace(' ', '-')}.jsonl"
        journal.write_text("\n".join(lines) + "\n", encoding="utf-8")
        before, around = snapshot_files(vault.root), snapshot_files(tmp_path / "outside")
        result = CliRunner().invoke(
            main,
            [command, "--vault", str(vault.root), "--now", "2026-12-01"]
            if command == "lifecycle"
            else [command, "--vault", str(vault.root)],
        )
        assert result.exit_code == 1, name
        message = result.stderr.strip()
        assert "\n" not in message and "Traceback" not in result.output, name
        assert journal.name in message and "refused" in message, (name, message)
        bad_line = len(lines) if name != "not json mid-file" else 2
        assert f".jsonl:{bad_line}:" in message, (name, message)
        assert snapshot_files(vault.root) == before, name
        assert snapshot_files(tmp_path / "outside") == around, name
        assert not (vault.root.parent / "escape.md").exists()
        journal.unlink()


def test_a_torn_last_line_is_still_a_killed_append(vault: Vault) -> None:
    folder = vault.sidecar / "journal"
    folder.mkdir(exist_ok=True)
    journal = folder / "20260101T000000000000-lifecycle.jsonl"
    journal.write_text(json.dumps(HEADER) + '\n{"op": "move", "seq": 1, "sou', encoding="utf-8")
    result = CliRunner().invoke(main, ["lifecycle", "--vault", str(vault.root)])
    assert result.exit_code == 0, result.output
    assert "finished an interrupted pass first" in result.output


def test_a_symlinked_journal_is_refused(vault: Vault, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(json.dumps(HEADER) + "\n", encoding="utf-8")
    folder = vault.sidecar / "journal"
    folder.mkdir(exist_ok=True)
    os.symlink(outside, folder / "20260101T000000000000-lifecycle.jsonl")
    result = CliRunner().invoke(main, ["lifecycle", "--vault", str(vault.root)])
    assert result.exit_code == 1 and "is a symlink" in result.stderr
    assert outside.read_text(encoding="utf-8") == json.dumps(HEADER) + "\n"


_TEXTS = st.none() | st.text(st.characters(blacklist_categories=()), max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    seq=st.integers(min_value=1, max_value=10**12),
    kind=st.sampled_from(KINDS),
    source=_TEXTS,
    target=st.text(max_size=20),
    before=_TEXTS,
    after=_TEXTS,
)
def test_an_operation_line_is_what_json_writes_and_reads_back_the_same(
    seq: int, kind: str, source: str | None, target: str, before: str | None, after: str | None
) -> None:
    # the journal puts each operation's line together itself (three times faster than
    # json.dumps over the dict): byte for byte what json.dumps writes, so it reads back the same
    op = Operation(seq, kind, source, target, before, after)
    assert op.as_line() == json.dumps(op.as_json())
    assert json.loads(op.as_line()) == op.as_json()
    assert "\n" not in op.as_line() and op.as_line().isascii()


def test_a_folder_swapped_for_a_link_after_a_batch_was_prepared_is_caught_before_any_write(
    generated_vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch is read and its texts staged before any of it is written: the pass confines each
    note again, in full, right before it moves it. STM is swapped for a link to a copy outside
    the vault once the first batch was prepared: no move of a note from it goes through,
    nothing outside the vault is written, and the notes outside are as they were."""
    from vaultmem.services.lifecycle import pass_session

    vault = Vault.open(generated_vault)
    vault.sync()
    outside = tmp_path / "outside"
    real_prepare = pass_session.PassSession.prepare
    notes: dict[str, bytes] = {}

    def prepare_then_swap(self: pass_session.PassSession, *args: Any, **kwargs: Any) -> None:
        real_prepare(self, *args, **kwargs)
        if not notes:
            os.rename(generated_vault / "STM", outside)
            (generated_vault / "STM").symlink_to(outside, target_is_directory=True)
            notes.update(_notes_in(outside))

    monkeypatch.setattr(pass_session.PassSession, "prepare", prepare_then_swap)
    run = vault.lifecycle(now=REFERENCE_TIME)
    vault.close()
    assert notes and _notes_in(outside) == notes
    from_stm = [m for r in run.results for m in r.applied if m.path.startswith("STM/")]
    refused = [why for r in run.results for m, why in r.skipped if m.path.startswith("STM/")]
    assert from_stm == [] and refused
    assert all("symlink" in why for why in refused), refused[:3]
    assert not [p for p in outside.iterdir() if p.name.startswith(".")]  # no temp or aside


def _notes_in(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.rglob("*.md") if not p.name.startswith(".")}
