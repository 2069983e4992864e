"""``lifecycle --commit``: commit exactly a pass's changes in a vault that is a git repository.

Outside a git work tree ``--commit`` is refused before anything changes
(:func:`require_work_tree`): a flag silently ignored would leave the tree dirty unnoticed.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmem.errors import InputError, VaultmemError

if TYPE_CHECKING:
    from vaultmem.services.lifecycle.lifecycle import LifecycleRun

VERBS = {
    "promote": "promoted",
    "archive": "archived",
    "delete": "deleted",
    "seal": "sealed",
    "edit": "edited",
    "create": "created",
}


class GitMissingError(VaultmemError):
    """git is not installed (or not on PATH)."""


def _git(root: Path, *args: str, stdin: str | None = None) -> str:
    try:
        done = subprocess.run(
            ["git", "--literal-pathspecs", *args],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            input=stdin,
        )
    except FileNotFoundError:
        raise GitMissingError("--commit needs git, which is not installed") from None
    except subprocess.CalledProcessError as err:
        message = (err.stderr or err.stdout).strip().splitlines()
        raise VaultmemError(f"git {args[0]} failed: {message[-1] if message else err}") from None
    return done.stdout


def in_work_tree(root: Path) -> bool:
    """Whether ``root`` is inside a git work tree (``False`` outside one, in a bare repository,
    or on a mount git stops at). Raises :class:`VaultmemError` when git is not installed."""
    try:
        return _git(root, "rev-parse", "--is-inside-work-tree").strip() == "true"
    except GitMissingError:
        raise
    except VaultmemError:
        return False


def require_work_tree(root: Path) -> None:
    """Refuse ``--commit`` before anything changes when ``root`` is not in a git work tree.

    Raises :class:`InputError` naming the fix (``git init``, or drop ``--commit``), or
    :class:`VaultmemError` when git is not installed.
    """
    if not in_work_tree(root):
        raise InputError(
            f"{root} is not in a git repository, so --commit cannot commit: run `git init` "
            "there first, or drop --commit (nothing was changed)"
        )


def commit_message(run: LifecycleRun) -> str:
    """``vaultmem lifecycle: 3 promoted, 2 archived`` then one line per move with its reason."""
    counts = Counter((m.action, m.rule) for m in run.applied)
    summary = ", ".join(
        f"{n} {VERBS.get(action, action)}" + (f" ({rule})" if rule not in ("promote",) else "")
        for (action, rule), n in sorted(counts.items())
    )
    lines = [f"vaultmem {run.command}: {summary}", ""]
    for move in run.applied:
        where = f" -> {move.destination}" if move.destination else ""
        lines.append(f"- {move.path}{where}: {move.rule}: {move.reason}")
    return "\n".join(lines) + "\n"


def commit_paths(root: Path, paths: Iterable[str], message: str) -> str | None:
    """Stage and commit exactly ``paths`` (vault-relative): new, changed, moved or deleted.

    A path that neither exists nor is tracked (a memory remembered and moved since the last
    commit: its old path never reached git) is left out. Other staged or unstaged changes are
    not committed. Returns the new commit's hash, or ``None`` when the paths hold no change.
    Raises :class:`VaultmemError` when the vault is not in a git repository or git fails.
    """
    if not in_work_tree(root):
        raise VaultmemError(f"{root} is not in a git repository; --commit needs one")
    wanted = sorted(set(paths))
    if not wanted:
        return None
    tracked = set(_git(root, "ls-files", "-z", "--full-name", "--", *wanted).split("\0"))
    prefix = _git(root, "rev-parse", "--show-prefix").strip()
    keep = [p for p in wanted if (root / p).exists() or prefix + p in tracked]
    if not keep:
        return None
    listed = "\0".join(keep) + "\0"
    _git(root, "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=listed)
    try:
        _git(root, "diff", "--cached", "--quiet", "--", *keep)
        return None  # nothing staged among them: the pass changed nothing git sees
    except VaultmemError:
        pass  # differences staged
    _git(
        root, "commit", "--quiet", "-m", message, "--pathspec-from-file=-",
        "--pathspec-file-nul", stdin=listed,
    )  # fmt: skip
    return _git(root, "rev-parse", "HEAD").strip()


def committed_as_is(root: Path, paths: Iterable[str]) -> bool:
    """Whether ``root`` is in a git work tree where every one of ``paths`` (vault-relative) is
    as the last commit has it (none new, changed or deleted) and at least one is tracked: a
    pass committed this way is undone with a commit too, so the tree stays clean."""
    wanted = sorted(set(paths))
    if not wanted:
        return False
    try:
        if not in_work_tree(root):
            return False
        tracked = _git(root, "ls-files", "-z", "--", *wanted)
        changed = _git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", *wanted)
    except VaultmemError:
        return False
    return bool(tracked.strip("\0")) and not changed.strip("\0")


def commit_run(root: Path, run: LifecycleRun) -> str | None:
    """Commit exactly the files ``run`` touched (:func:`commit_paths`) with its message."""
    return commit_paths(root, run.touched, commit_message(run))
