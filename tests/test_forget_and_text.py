"""`vaultmem forget` archives one memory (journaled, undoable); recall and show carry the text."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import snapshot_files, split_note

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes.excerpts import HIT_TEXT_CHARS, capped_text, excerpt
from vaultmem.errors import InputError, LockedError, NoteNotFoundError, UnsafeNoteError
from vaultmem.store.vault_lock import vault_lock

NOW = "2026-11-20T09:00:00"


def cli(*args: str, root: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(root)])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault, _ = Vault.init(tmp_path / "v")
    vault.close()
    return vault.root


def remember(root: Path, text: str, *extra: str) -> dict[str, object]:
    result = CliRunner().invoke(
        main, ["remember", text, "--json", "--now", NOW, *extra, "--vault", str(root)]
    )
    assert result.exit_code == 0, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def test_forget_archives_one_memory_and_undo_puts_it_back(root: Path) -> None:
    kept = remember(root, "The boiler is serviced every October", "--title", "Boiler")
    gone = remember(root, "Staging DB listens on port 5433", "--title", "Staging port")
    before = snapshot_files(root)
    code, out, err = cli("forget", "Staging port", "--now", "2026-11-21T10:00:00", root=root)
    assert code == 0, err
    assert "archived STM/Staging port.md → Archive/Staging port.md" in out
    assert not (root / "STM/Staging port.md").exists()
    fields, body = split_note((root / "Archive/Staging port.md").read_text())
    assert fields["status"] == "archived" and fields["id"] == gone["id"]
    assert "archived_at: 2026-11-21T10:00:00" in (root / "Archive/Staging port.md").read_text()
    assert body.strip() == "Staging DB listens on port 5433"
    assert (root / str(kept["path"])).read_text() == before[str(kept["path"])].decode()
    # archived memories leave recall unless asked for
    code, out, _ = cli("recall", "staging", "port", root=root)
    assert "Staging port" not in out
    code, out, err = cli("undo", root=root)
    assert code == 0 and "undid forget" in out, err
    assert snapshot_files(root) == before


def test_forget_by_id_json_and_dry_run(root: Path) -> None:
    made = remember(root, "Coffee order: flat white with oat milk")
    before = snapshot_files(root)
    code, out, err = cli("forget", str(made["id"]), "--dry-run", "--json", root=root)
    assert code == 0, err
    data = json.loads(out)
    assert data["dry_run"] is True and data["applied"] == []
    assert data["planned"][0]["destination"].startswith("Archive/")
    assert snapshot_files(root) == before
    code, out, err = cli("forget", str(made["id"]), "--json", root=root)
    assert code == 0 and json.loads(out)["applied"][0]["reason"] == "forgotten on request"


def test_forget_refuses_what_it_must_not_archive(root: Path) -> None:
    made = remember(root, "Pinned fact about the garden", "--title", "Garden")
    code, _, err = cli("pin", "Garden", root=root)
    assert code == 0, err
    before = snapshot_files(root)
    code, _, err = cli("forget", "Garden", root=root)
    assert code == 1 and "is pinned" in err
    code, _, err = cli("forget", "no such memory", root=root)
    assert code == 1 and "no memory with id or title 'no such memory'" in err
    (root / "Notes").mkdir()
    (root / "Notes/Plain.md").write_text("A person's own note\n")
    code, _, err = cli("forget", "Plain", root=root)
    assert code == 1 and "not a note vaultmem manages" in err
    assert snapshot_files(root) == {**before, "Notes/Plain.md": b"A person's own note\n"}
    with Vault.open(root) as vault, pytest.raises(InputError, match="pinned"):
        vault.forget(str(made["id"]))


def test_forget_refuses_conflict_markers_and_waits_for_a_pass(root: Path) -> None:
    made = remember(root, "Conflicted memory text", "--title", "Conflicted")
    other = remember(root, "Another memory for the lock", "--title", "Other")
    path = root / str(made["path"])
    path.write_text(path.read_text() + "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> b\n")
    before = snapshot_files(root)
    with Vault.open(root) as vault:
        with pytest.raises(UnsafeNoteError, match="conflict markers"):
            vault.forget("Conflicted")
        with pytest.raises(NoteNotFoundError):
            vault.forget("../../etc/passwd")
    assert snapshot_files(root) == before
    # another process holds the lock (a pass): the write waits briefly, then says so
    spawn = multiprocessing.get_context("spawn")
    ready, done = spawn.Event(), spawn.Event()
    holder = spawn.Process(target=_hold_lock, args=(str(root / ".vaultmem"), ready, done))
    holder.start()
    try:
        assert ready.wait(30)
        with Vault.open(root) as vault:
            vault.lock_wait_seconds = 0.2
            with pytest.raises(LockedError, match="a pass is running.*try again"):
                vault.forget(str(other["id"]))
            with pytest.raises(LockedError, match="try again"):
                vault.touch(str(other["id"]))
    finally:
        done.set()
        holder.join(30)
    assert snapshot_files(root) == before


def _hold_lock(sidecar: str, ready: object, done: object) -> None:
    with vault_lock(Path(sidecar)):
        ready.set()  # type: ignore[attr-defined]
        done.wait(30)  # type: ignore[attr-defined]


def test_recall_and_show_carry_the_memory_text(root: Path) -> None:
    made = remember(root, "Drinks green tea every morning before the standup")
    long_text = "Quarterly planning notes. " + "word " * 1000 + "\n\nThe tail sentence."
    remember(root, long_text, "--title", "Long planning")
    code, out, err = cli("recall", "green", "tea", "--json", root=root)
    assert code == 0, err
    hit = json.loads(out)["hits"][0]
    assert hit["id"] == made["id"]
    assert hit["text"] == "Drinks green tea every morning before the standup"
    code, out, _ = cli("recall", "quarterly", "planning", "--json", root=root)
    text = json.loads(out)["hits"][0]["text"]
    assert text.startswith("Quarterly planning notes. word word")
    assert len(text) <= HIT_TEXT_CHARS + 40 and text.endswith("more characters]")
    assert "tail sentence" not in text
    code, out, _ = cli("show", str(made["id"]), "--json", root=root)
    assert json.loads(out)["text"] == "Drinks green tea every morning before the standup"
    code, out, _ = cli("show", "Long planning", "--json", root=root)
    assert json.loads(out)["text"].endswith("The tail sentence.")
    with Vault.open(root) as vault:
        assert vault.recall("green tea")[0].text.startswith("Drinks green tea")


def test_capped_text_and_excerpt() -> None:
    assert capped_text("\nshort body\n\n") == "short body"
    body = "line one\n" * 500
    capped = capped_text(body, 100)
    head, marker = capped.rsplit("\n", 1)
    assert head == ("line one\n" * 11).rstrip() and len(head) <= 100
    assert marker == f"… [{len(body.strip()) - len(head)} more characters]"
    assert excerpt("# Heading\n\n- first item\n- second item\n") == "Heading first item second item"
    long_line = excerpt("alpha " * 40, 30)
    assert long_line.endswith("…") and len(long_line) <= 30 and "  " not in long_line


@pytest.mark.parametrize("title", ["../../x", "..\\..\\x", ". . .x", " ..x"])
def test_titles_never_make_hidden_or_outside_files(root: Path, title: str) -> None:
    # a note named ".. x.md" would be hidden from the index (dot names are ignored)
    with Vault.open(root) as vault:
        first = vault.remember("first of two", title=title)
        second = vault.remember("second of two", title=title)
    assert (first.path, second.path) == ("STM/x.md", "STM/x 2.md")
