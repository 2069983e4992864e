"""Nothing outside the vault is read, indexed, returned or written: [folders] and symlinks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.store.confinement import LinkedFolders, is_symlinked

NOW = "2026-11-20T09:00:00"


def run(*args: str, vault: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(vault)])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    Vault.init(root)
    with Vault.open(root) as v:
        v.remember("Kiwi fruit is the favourite snack", title="Kiwi snack", now=None)
    return root


@pytest.mark.parametrize(
    "value",
    ["../x", "/tmp/abs", ".hidden", "STM/../../x", "a//b", "C:\\\\x", "a\\\\b", "Notes/.git"],
)
def test_bad_folder_setting_is_one_line_naming_file_and_key(vault: Path, value: str) -> None:
    toml = vault / "vaultmem.toml"
    toml.write_text(f'[folders]\nstm = "{value}"\n')
    for command in (["remember", "hello there"], ["list"], ["lifecycle"], ["status"]):
        code, out, err = run(*command, vault=vault)
        assert code == 1, (command, out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in err
        assert str(toml) in lines[0] and "[folders] stm" in lines[0]
    assert not (vault.parent / "x").exists()


def test_folder_setting_through_a_symlink_out_of_the_vault_is_refused(
    vault: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (vault / "Escape").symlink_to(outside)
    (vault / "vaultmem.toml").write_text('[folders]\narchive = "Escape"\n')
    code, out, err = run("remember", "hello there", vault=vault)
    assert code == 1
    assert "[folders] archive must lie inside the vault" in err
    assert list(outside.iterdir()) == []


def test_folder_setting_through_a_symlink_inside_the_vault_is_refused(vault: Path) -> None:
    (vault / "Memory").mkdir()
    (vault / "Short").symlink_to(vault / "Memory")
    (vault / "vaultmem.toml").write_text('[folders]\nstm = "Short"\n')
    code, out, err = run("remember", "hello there", vault=vault)
    assert code == 1
    assert "[folders] stm must not be or lie in a symbolic link" in err
    assert list((vault / "Memory").iterdir()) == []


def test_a_nested_relative_folder_setting_works(vault: Path) -> None:
    (vault / "vaultmem.toml").write_text('[folders]\nstm = "Memory/Short term/"\n')
    code, out, err = run("remember", "Nested folders are fine", "--json", vault=vault)
    assert code == 0, err
    assert json.loads(out)["path"].startswith("Memory/Short term/")


def _environ_pairs() -> list[str]:
    raw = Path("/proc/self/environ").read_bytes().decode("utf-8", "replace")
    return [pair for pair in raw.split("\0") if "=" in pair and len(pair) > 8]


def test_symlinks_out_of_the_vault_are_never_read_or_returned(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\ntype: memory\n---\nkiwi secret zebra plans\n")
    (vault / "STM" / "passwd.md").symlink_to("/etc/passwd")
    (vault / "STM" / "environ.md").symlink_to("/proc/self/environ")
    (vault / "STM" / "secret.md").symlink_to(outside / "secret.md")
    (vault / "Linked").symlink_to(outside)
    outputs: list[str] = []
    for command in (
        ["index", "--rebuild", "--json"],
        ["recall", "kiwi", "--json"],
        ["recall", "root", "--json"],
        ["recall", "zebra", "--json"],
        ["list", "--json"],
        ["graph"],
        ["status", "--json"],
        ["doctor", "--json"],
    ):
        code, out, err = run(*command, vault=vault)
        assert code in (0, 1) and "Traceback" not in err, (command, err)
        outputs.append(out + err)
    listing = "\n".join(outputs)
    assert "passwd.md" not in listing and "environ.md" not in listing
    assert "secret.md" not in listing
    for ref in ("passwd", "environ", "secret", "STM/passwd.md", "Linked/secret.md"):
        for command in ("show", "links", "touch"):
            code, out, err = run(command, ref, vault=vault)
            assert code == 1 and "no memory with id or title" in err, (command, ref, out, err)
            outputs.append(out + err)
    text = "\n".join(outputs).replace('"query": "zebra"', "")  # the question, echoed
    assert "root:x:0" not in text and "zebra" not in text
    for pair in _environ_pairs():
        assert pair not in text
    listed = json.loads(run("list", "--json", vault=vault)[1])["memories"]
    assert [row["path"] for row in listed] == ["STM/Kiwi snack.md"]


def test_an_environment_secret_never_appears_in_any_output(vault: Path) -> None:
    """A real process with a secret in its environment: /proc/self/environ is its own."""
    (vault / "STM" / "environ.md").symlink_to("/proc/self/environ")
    env = {
        **os.environ,
        "VAULTMEM_TEST_SECRET": "hunter2-kiwi-s3cr3t",
        "VAULTMEM_VAULT": str(vault),
    }
    for args in (["index", "--rebuild"], ["recall", "hunter2"], ["recall", "kiwi"], ["list"]):
        done = subprocess.run(
            [sys.executable, "-c", "from vaultmem.cli import main; main()", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "hunter2-kiwi" not in done.stdout + done.stderr
        assert "VAULTMEM_TEST_SECRET" not in done.stdout + done.stderr


def test_a_watched_symlink_out_of_the_vault_is_not_indexed(vault: Path) -> None:
    with Vault.open(vault) as v:
        v.sync()
        (vault / "STM" / "passwd.md").symlink_to("/etc/passwd")
        (vault / "Linked").symlink_to("/etc")
        report = v.refresh(["STM/passwd.md", "Linked", "Linked/passwd.md"])
        assert report.added == 0
        assert v.index.note_row("STM/passwd.md") is None


def test_a_note_replaced_by_a_symlink_out_is_dropped_from_the_index(vault: Path) -> None:
    with Vault.open(vault) as v:
        v.sync()
        note = vault / "STM" / "Kiwi snack.md"
        note.unlink()
        note.symlink_to("/etc/passwd")
        report = v.sync()
        assert report.removed == 1
        assert v.index.note_row("STM/Kiwi snack.md") is None


def test_symlinked_memory_inside_the_vault_is_indexed_and_left_in_place(vault: Path) -> None:
    (vault / "vaultmem.toml").write_text('[index]\nexclude = ["Sources/*"]\n')
    (vault / "Sources").mkdir()
    target = vault / "Sources" / "real.md"
    target.write_text(
        "---\nid: 01JTESTLINKED0000000000000\ntype: memory\nstatus: active\nlayer: working\n"
        "created: 2025-01-01T00:00:00\nlast_used: 2025-01-01T00:00:00\nuse_count: 1\n"
        "strength: 1.0\nimportance: 0.1\nconfidence: 1.0\nsource: human\npinned: false\n"
        "tags: [linked]\n---\nLinked memory about walnuts\n"
    )
    link = vault / "STM" / "Walnuts.md"
    link.symlink_to(Path("..") / "Sources" / "real.md")
    code, out, err = run("recall", "walnuts", "--json", vault=vault)
    assert code == 0 and "STM/Walnuts.md" in out
    code, out, err = run("lifecycle", "--now", NOW, "--json", vault=vault)
    assert code == 0, err
    assert "STM/Walnuts.md: a symbolic link; left in place" in err
    assert link.is_symlink() and link.resolve() == target and target.is_file()
    code, out, err = run("promote", "Walnuts", "--now", NOW, vault=vault)
    assert code == 1 and "left in place" in err
    code, out, err = run("touch", "Walnuts", "--now", NOW, vault=vault)
    assert code == 0, err
    assert link.is_symlink() and "use_count: 2" in target.read_text()


def test_linked_notes_finds_exactly_the_links_whether_it_lists_folders_or_not(
    tmp_path: Path,
) -> None:
    from vaultmem.store.confinement import LIST_FOLDER_FROM, linked_notes

    root = tmp_path / "v"
    (root / "Many").mkdir(parents=True)
    (root / "Few").mkdir()
    (root / "Sources").mkdir()
    (root / "Sources" / "real.md").write_text("x")
    paths = []
    for folder, count in (("Many", LIST_FOLDER_FROM + 5), ("Few", 3)):
        for i in range(count):
            rel = f"{folder}/n{i}.md"
            if i % 2:
                (root / rel).symlink_to(Path("..") / "Sources" / "real.md")
            else:
                (root / rel).write_text("y")
            paths.append(rel)
    paths += ["Many/gone.md", "Nowhere/x.md", "top.md"]
    expected = {rel for rel in paths if os.path.islink(root / rel)}
    assert len(expected) == (LIST_FOLDER_FROM + 5) // 2 + 1
    assert linked_notes(root, paths) == expected


def test_linked_folders_answers_as_is_symlinked_for_every_folder(tmp_path: Path) -> None:
    root = (tmp_path / "v").resolve()
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "out").symlink_to(outside, target_is_directory=True)
    (root / "in").symlink_to(root / "a" / "b", target_is_directory=True)
    (root / "a" / "b" / "file.md").write_text("x")
    (root / "a" / "b" / "note-link").symlink_to(root / "a" / "b" / "file.md")
    folders = ["", "a", "a/b", "a/b/c", "a/out", "a/out/deep", "in", "in/c", "missing",
               "missing/x", "a/b/note-link", "a/b/file.md"]  # fmt: skip
    linked = LinkedFolders(root)
    answers = {f: linked(f) for f in reversed(folders)}  # children asked before their parents
    assert answers == {f: is_symlinked(root, f) for f in folders}
    assert {f for f, is_linked in answers.items() if is_linked} == {
        "a/out", "a/out/deep", "in", "in/c", "a/b/note-link"
    }


def test_linked_folders_takes_a_path_of_thousands_of_parts(tmp_path: Path) -> None:
    """A hostile path (the watcher hands over what it sees) never runs out of stack."""
    root = (tmp_path / "v").resolve()
    (root / "a").mkdir(parents=True)
    (root / "link").symlink_to(root / "a", target_is_directory=True)
    linked = LinkedFolders(root)
    assert linked("/".join(["a"] * 5000)) is False
    assert linked("link/" + "/".join(["x"] * 5000)) is True
