"""Memory notes git left unmerged without conflict markers: found by ``doctor``, merged by
``doctor --fix``.

git merges a file it calls binary (one holding a NUL byte) by keeping "ours" and reporting a
conflict, with no markers in the file; so does a clone without the merge driver. ``git add -A``
would then commit ours and lose the other side without a trace. While the merge is unfinished,
git's index still holds the three versions (stages 1, 2 and 3: base, ours, theirs); this module
lists the memory notes whose file is still ours unchanged, and merges the three by the driver's
rules (user guide, "Syncing with git").
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vaultmem.core.notes.note_merge import MergeResult, merge_note, note_identity
from vaultmem.core.notes.note_text import find_conflict_markers
from vaultmem.services.sync.git_setup import in_git_repository
from vaultmem.services.sync.merge_driver import git_merge_lines

__all__ = ["UnmergedNote", "merge_unmerged", "unmerged_notes"]


@dataclass(frozen=True, slots=True)
class UnmergedNote:
    """A note git left as ours while both sides changed it: vault-relative ``path`` and the
    three versions from git's index (``base`` is ``""`` when both sides added it)."""

    path: str
    base: str
    ours: str
    theirs: str


def _blob(root: Path, sha: str) -> str | None:
    done = subprocess.run(["git", "cat-file", "blob", sha], cwd=root, capture_output=True)
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="surrogateescape")


def unmerged_notes(
    root: Path, folders: tuple[str, ...], held: Callable[[str], bool] = lambda note_id: False
) -> list[UnmergedNote]:
    """The notes under ``folders`` (vault-relative) that git lists as unmerged while the file
    holds ours exactly, without markers (git kept one side). ``[]`` outside a git merge.

    ``held(id)`` tells whether a memory id is in the vault: theirs, another memory whose id is
    held elsewhere (kept apart already), is not lost.
    """
    if not in_git_repository(root):
        return []
    listing = subprocess.run(
        ["git", "ls-files", "-u", "-z", "--", *folders], cwd=root, capture_output=True
    ).stdout.decode("utf-8", errors="surrogateescape")
    stages: dict[str, dict[str, str]] = {}
    for entry in filter(None, listing.split("\0")):
        info, _, path = entry.partition("\t")
        parts = info.split()
        if len(parts) == 3 and path.endswith(".md"):
            stages.setdefault(path, {})[parts[2]] = parts[1]
    found = []
    for path, shas in sorted(stages.items()):
        if "2" not in shas or "3" not in shas:
            continue  # modify/delete: the shared-id fix handles a note git left at two paths
        texts = {n: _blob(root, sha) for n, sha in shas.items()}
        ours, theirs = texts["2"], texts["3"]
        file = root / path
        if ours is None or theirs is None or not file.is_file():
            continue
        current = file.read_bytes().decode("utf-8", errors="surrogateescape")
        if current != ours or find_conflict_markers(current):
            continue  # merged with markers (doctor --fix's other work), or edited since
        ours_id, theirs_id = note_identity(ours), note_identity(theirs)
        if theirs_id and ours_id and theirs_id[0] != ours_id[0] and held(str(theirs_id[0])):
            continue  # another memory, kept apart already
        found.append(UnmergedNote(path, texts.get("1") or "", ours, theirs))
    return found


def merge_unmerged(note: UnmergedNote) -> MergeResult:
    """The three versions merged by the driver's rules (never raises; a conflict keeps both
    sides' lines between markers)."""
    try:
        return merge_note(note.base, note.ours, note.theirs, git_merge_lines)
    except OSError:
        ended = [t if t.endswith("\n") else t + "\n" for t in (note.ours, note.theirs)]
        text = f"<<<<<<< ours\n{ended[0]}=======\n{ended[1]}>>>>>>> theirs\n"
        return MergeResult(text, ("note",))
