"""``lifecycle --commit``: commit exactly a pass's changes in a vault that is a git repository."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from vaultmem.errors import VaultmemError

if TYPE_CHECKING:
    from vaultmem.services.lifecycle import LifecycleRun

VERBS = {
    "promote": "promoted",
    "archive": "archived",
    "delete": "deleted",
    "seal": "sealed",
    "edit": "edited",
    "create": "created",
}


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    except FileNotFoundError:
        raise VaultmemError("--commit needs git, which is not installed") from None
    except subprocess.CalledProcessError as err:
        message = (err.stderr or err.stdout).strip().splitlines()
        raise VaultmemError(f"git {args[0]} failed: {message[-1] if message else err}") from None
    return done.stdout


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


def commit_run(root: Path, run: LifecycleRun) -> str:
    """Stage and commit only the files the run touched; returns the new commit's hash.

    Raises :class:`VaultmemError` when the vault is not a git repository or git fails.
    """
    if _git(root, "rev-parse", "--is-inside-work-tree").strip() != "true":
        raise VaultmemError(f"{root} is not a git repository; --commit needs one")
    paths = sorted(set(run.touched))
    _git(root, "add", "-A", "--", *paths)
    _git(root, "commit", "--quiet", "-m", commit_message(run), "--", *paths)
    return _git(root, "rev-parse", "HEAD").strip()
