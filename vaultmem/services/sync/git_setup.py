"""Setting a vault up for git sync: ``.gitattributes`` for the memory folders, the merge driver
registered in the repository's local git config, and the check ``doctor`` runs on both.

git config is not versioned, so each clone registers the driver itself (``vaultmem init --git``
in the fresh clone); ``.gitattributes`` is committed with the vault. See "Syncing with git" in
``docs/user-guide.md``.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from vaultmem.core.settings import Settings
from vaultmem.errors import VaultmemError

DRIVER = "vaultmem"
"""The merge driver's name in ``.gitattributes`` (``merge=vaultmem``) and in git config."""
ATTRIBUTES_HEADER = "# vaultmem: merge memory notes by meaning (written by `vaultmem init --git`)"


def _git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    except FileNotFoundError:
        raise VaultmemError("git is not installed; install it to sync the vault with git") from None
    if check and done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise VaultmemError(f"git {args[0]} failed: {lines[-1] if lines else done.returncode}")
    return done


def in_git_repository(root: Path) -> bool:
    """Whether ``root`` lies inside a git work tree (False when git is missing)."""
    try:
        done = _git(root, "rev-parse", "--is-inside-work-tree", check=False)
    except VaultmemError:
        return False
    return done.returncode == 0 and done.stdout.strip() == "true"


def _pattern(folder: str) -> str:
    pattern = folder.strip("/") + "/**/*.md"
    if any(ch in pattern for ch in ' "\\\t'):
        escaped = pattern.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
        return f'"{escaped}"'
    return pattern


def attribute_lines(settings: Settings) -> list[str]:
    """The ``.gitattributes`` lines: notes under STM, Boxes, LTM and Archive use the driver."""
    f = settings.folders
    return [f"{_pattern(folder)} merge={DRIVER}" for folder in (f.stm, f.boxes, f.ltm, f.archive)]


def driver_command() -> str:
    """The driver as git runs it: ``vaultmem merge-driver %O %A %B %P``.

    ``vaultmem`` is written as the absolute path of the installed program when it is on ``PATH``
    (git may run with another ``PATH``), else as ``<this python> -m vaultmem``.
    """
    program = shutil.which("vaultmem")
    head = shlex.quote(program) if program else f"{shlex.quote(sys.executable)} -m vaultmem"
    return f"{head} merge-driver %O %A %B %P"


def setup_git(root: Path, settings: Settings) -> list[str]:
    """Write the ``.gitattributes`` lines (missing ones only) and register the driver locally.

    Returns what was done, one line each (``[]`` when all was in place). Raises
    :class:`VaultmemError` when ``root`` is not in a git repository or git fails.
    """
    if not in_git_repository(root):
        raise VaultmemError(
            f"{root} is not in a git repository; run `git init` (or clone the vault) first"
        )
    done: list[str] = []
    attributes = root / ".gitattributes"
    existing = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    have = {line.strip() for line in existing.splitlines()}
    missing = [line for line in attribute_lines(settings) if line not in have]
    if missing:
        text = existing
        if text and not text.endswith("\n"):
            text += "\n"
        if ATTRIBUTES_HEADER not in have:
            text += ATTRIBUTES_HEADER + "\n"
        attributes.write_text(text + "\n".join(missing) + "\n", encoding="utf-8")
        done.append(f".gitattributes: {len(missing)} lines for the memory folders")
    command = driver_command()
    current = _git(root, "config", "--local", "--get", f"merge.{DRIVER}.driver", check=False)
    if current.stdout.strip() != command:
        _git(root, "config", "--local", f"merge.{DRIVER}.name", "vaultmem memory notes")
        _git(root, "config", "--local", f"merge.{DRIVER}.driver", command)
        done.append(f"git config merge.{DRIVER}.driver = {command}")
    return done


def git_sync_problems(root: Path) -> list[tuple[str, str]]:
    """``(path, detail)`` warnings for ``doctor``: attributes naming the driver while this clone
    has not registered it (git would then merge memory notes line by line and conflict)."""
    attributes = root / ".gitattributes"
    if not attributes.is_file() or f"merge={DRIVER}" not in attributes.read_text(
        encoding="utf-8", errors="replace"
    ):
        return []
    if not in_git_repository(root):
        return []
    current = _git(root, "config", "--get", f"merge.{DRIVER}.driver", check=False)
    if current.returncode == 0 and current.stdout.strip():
        return []
    return [
        (
            ".gitattributes",
            "memory notes use the vaultmem merge driver, but this clone has not registered it; "
            "run `vaultmem init --git` here",
        )
    ]
