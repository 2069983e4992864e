"""A bare remote and clones of one vault, driven with the real ``git`` binary (test helper)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes.note_text import parse_frontmatter, split_note

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(autouse=True)
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits made by vaultmem itself carry :data:`GIT_ENV`'s author (a test module imports
    this fixture to have it in every test)."""
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)


def fields(path: Path) -> dict[str, object]:
    """The frontmatter of the note at ``path``."""
    return parse_frontmatter(split_note(path.read_text(encoding="utf-8")).yaml)


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {root}:\n{done.stdout}{done.stderr}")
    return done


def cli(root: Path, *args: str) -> tuple[int, str, str]:
    """Run a vaultmem command on the vault at ``root``: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(main, [*args, "--vault", str(root)])
    return result.exit_code, result.stdout, result.stderr


@dataclass
class Clones:
    remote: Path
    a: Path
    b: Path


def make_clones(tmp_path: Path, *, driver: bool = True) -> Clones:
    """A vault set up with ``init --git`` in clone A, pushed, cloned as B (driver registered
    there too unless ``driver`` is False)."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "--quiet", "--bare", "-b", "main", str(remote))
    a = tmp_path / "a"
    git(tmp_path, "clone", "--quiet", str(remote), str(a))
    git(a, "checkout", "--quiet", "-b", "main", check=False)
    result = CliRunner().invoke(main, ["init", str(a), "--git"])
    assert result.exit_code == 0, result.output
    git(a, "add", "-A")
    git(a, "commit", "--quiet", "-m", "vault")
    git(a, "push", "--quiet", "-u", "origin", "main")
    b = tmp_path / "b"
    git(tmp_path, "clone", "--quiet", str(remote), str(b))
    if driver:
        result = CliRunner().invoke(main, ["init", str(b), "--git"])
        assert result.exit_code == 0, result.output
    return Clones(remote, a, b)


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    if git(root, "diff", "--cached", "--quiet", check=False).returncode:
        git(root, "commit", "--quiet", "-m", message)


def pull(root: Path) -> bool:
    """``git pull --no-rebase``: True when it merged without conflicts."""
    return git(root, "pull", "--quiet", "--no-rebase", "--no-edit", check=False).returncode == 0


def memory_notes(root: Path) -> dict[str, str]:
    """Vault-relative path → text of every note in the memory folders."""
    out = {}
    for top in ("STM", "Boxes", "LTM", "Archive"):
        for path in sorted((root / top).rglob("*.md")):
            out[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
    return out


def open_vault(root: Path) -> Vault:
    return Vault.open(root)
