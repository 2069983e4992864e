"""git's merge driver for memory notes: ``vaultmem merge-driver %O %A %B %P``.

git runs it once per note both sides changed: ``%O`` the base (ancestor) version, ``%A`` ours,
``%B`` theirs, ``%P`` the note's path in the repository. The merged note is written to ``%A``;
the exit status is 0 when merged cleanly, 1 when a conflict remains (markers around the
conflicting key or body lines, which git then reports as a conflict; never a side left out
without markers). Two different memories added at one path are both kept (:func:`merge_files`).
The rules are :func:`vaultmem.core.notes.note_merge.merge_note`'s (user guide, "Syncing with git");
the body is merged by ``git merge-file --diff3``.

This module runs in a fresh process per note, so it imports only what the merge needs (no
index, no numpy): keep it that way.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

from vaultmem.core.notes.note_merge import MergeResult, merge_note

__all__ = ["DriverOutcome", "free_name", "git_merge_lines", "merge_files"]


class DriverOutcome(NamedTuple):
    """What :func:`merge_files` did: git's exit status, the merge, a memory kept apart."""

    code: int
    result: MergeResult | None
    kept_apart: str | None = None


def _sentinel(texts: tuple[str, ...]) -> str:
    """A line-free marker found in none of ``texts``, to stand for NUL while git merges lines."""
    n = 0
    while any(f"\ue000vaultmem-nul-{n}\ue001" in text for text in texts):
        n += 1
    return f"\ue000vaultmem-nul-{n}\ue001"


def git_merge_lines(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    """Line merge of three texts with ``git merge-file -p --diff3``: (merged text, clean).

    Conflicts come back as diff3 markers labelled ``ours``, ``base`` and ``theirs``; every line
    of every side is kept. A NUL character (which makes git call a file binary and refuse it)
    stands in as a marker while git merges, and is put back. Raises ``OSError`` when git cannot
    be run or refuses the input.
    """
    nul = _sentinel((base, ours, theirs)) if "\0" in base + ours + theirs else None
    with tempfile.TemporaryDirectory(prefix="vaultmem-merge-") as folder:
        names = []
        for label, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            name = os.path.join(folder, label)
            with open(name, "wb") as handle:
                data = text.replace("\0", nul) if nul else text
                handle.write(data.encode("utf-8", errors="surrogateescape"))
            names.append(name)
        done = subprocess.run(
            ["git", "merge-file", "-p", "--diff3", "-L", "ours", "-L", "base", "-L", "theirs",
             *names],
            capture_output=True,
        )  # fmt: skip
    if done.returncode < 0 or done.returncode >= 127:
        raise OSError(f"git merge-file failed: {done.stderr.decode(errors='replace').strip()}")
    merged = done.stdout.decode("utf-8", errors="surrogateescape")
    return (merged.replace(nul, "\0") if nul else merged), done.returncode == 0


def _git_out(cwd: Path, *args: str) -> str | None:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    if done.returncode != 0:
        return None
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None


def base_from_history(cwd: Path, note_id: str) -> str | None:
    """The note holding ``id: <note_id>`` in the merge base of the merge in progress, if any.

    When git pairs no common version with a note (both sides moved it and changed it too much
    for git to see a rename: an add/add), the memory still had one before the two sides
    diverged; this finds it by its id. ``None`` outside a merge or when it is not there.
    """
    # git names the other side's commit in a GITHEAD_<sha> variable while drivers run (its
    # MERGE_HEAD is written only when the merge stops); doctor --fix runs after that
    other = _other_head(cwd)
    if other is None:
        return None
    base = (_git_out(cwd, "merge-base", "HEAD", other) or "").strip()
    if not base:
        return None
    found = _git_out(
        cwd, "grep", "-l", "-F", "-z", "--full-name", "-e", f"id: {note_id}", base, "--", ":/"
    )
    for hit in filter(None, (found or "").split("\0")):
        rev, _, path = hit.partition(":")
        text = _git_out(cwd, "show", f"{rev}:{path}")
        if text is not None and re.search(
            rf"^id: ['\"]?{re.escape(note_id)}['\"]?\s*$", text, re.M
        ):
            return text
    return None


def _note_id(text: str) -> str | None:
    match = re.search(r"\A\ufeff?---\r?\n(?:(?!---[ \t]*\r?\n).*\n)*?id: ['\"]?([^'\"\s]+)", text)
    return match.group(1) if match else None


def _read(path: str) -> str:
    """The file's text; bytes that are not UTF-8 kept as surrogates (written back as they were)."""
    return Path(path).read_bytes().decode("utf-8", errors="surrogateescape")


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _write(target: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".vaultmem-merge-", dir=target.parent)
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode("utf-8", errors="surrogateescape"))
    os.replace(tmp, target)


def _whole_sides(ours: str, theirs: str) -> str:
    """Both whole texts between conflict markers: nothing lost, and the note shows a conflict."""

    def ended(text: str) -> str:
        return text if not text or text.endswith("\n") else text + "\n"

    return f"<<<<<<< ours\n{ended(ours)}=======\n{ended(theirs)}>>>>>>> theirs\n"


def _other_head(cwd: Path) -> str | None:
    for key in os.environ:
        if key.startswith("GITHEAD_"):
            return key[len("GITHEAD_") :]
    for name in ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REBASE_HEAD", "REVERT_HEAD"):
        if _git_out(cwd, "rev-parse", "--verify", "--quiet", name + "^{commit}") is not None:
            return name
    return None


def free_name(cwd: Path, path: str) -> str | None:
    """A repository path beside ``path`` named ``<title> 2.md`` (3, 4…), free in the work tree,
    in HEAD and in the other side of the merge; ``None`` outside a work tree."""
    if _git_out(cwd, "rev-parse", "--is-inside-work-tree") != "true\n":
        return None
    folder, _, name = path.rpartition("/")
    title = name.removesuffix(".md")
    other = _other_head(cwd)
    for n in range(2, 1000):
        candidate = f"{folder}/{title} {n}.md" if folder else f"{title} {n}.md"
        if (cwd / candidate).exists() or (cwd / candidate).is_symlink():
            continue
        taken = [rev for rev in ("HEAD", other) if rev is not None and _git_out(
            cwd, "cat-file", "-e", f"{rev}:{candidate}") is not None]  # fmt: skip
        if not taken:
            return candidate
    return None


def _kept_apart_before(
    cwd: Path, path: str, base: str | None, ours: str, theirs: str
) -> tuple[str, str] | None:
    """(path, text) of the note beside ``path`` holding theirs' memory id, when ours holds
    another id and theirs is the base's: a rebase replaying a change to a memory that an
    earlier step of the same rebase kept apart as ``<title> 2.md`` (untracked)."""
    theirs_id, ours_id = _note_id(theirs), _note_id(ours)
    if not path or not base or not theirs_id or not ours_id or theirs_id == ours_id:
        return None
    if _note_id(base) != theirs_id:
        return None
    folder, _, name = path.rpartition("/")
    title = name.removesuffix(".md")
    for candidate in sorted((cwd / folder).glob("*.md") if (cwd / folder).is_dir() else []):
        if not candidate.name.startswith(title + " ") or candidate.is_symlink():
            continue
        text = _read(str(candidate))
        if _note_id(text) == theirs_id:
            return f"{folder}/{candidate.name}" if folder else candidate.name, text
    return None


def merge_files(base: str, ours: str, theirs: str, path: str = "") -> DriverOutcome:
    """Merge the files at ``base``/``ours``/``theirs`` into ``ours`` (git's protocol).

    ``code`` 0: merged cleanly; 1: a conflict remains, written with markers (a key or body
    lines; or the whole sides when nothing could merge them, so that no side is ever lost
    silently). Two different memories added at one path (different ids) are both kept: ours at
    ``path``, theirs written beside it as ``<title> 2.md`` (``kept_apart``, a new untracked file
    to commit); when there is no work tree to write it to, that is a conflict. ``path`` is the
    note's path in the repository, relative to the current directory (git runs drivers at the
    top of the work tree).
    """
    base_text, ours_text, theirs_text = (_read(p) for p in (base, ours, theirs))
    if not all(map(_is_utf8, (base_text, ours_text, theirs_text))):
        # not UTF-8: merged as lines of bytes, never by properties
        try:
            text, clean = git_merge_lines(base_text, ours_text, theirs_text)
        except OSError:
            text, clean = _whole_sides(ours_text, theirs_text), False
        _write(Path(ours), text)
        return DriverOutcome(0 if clean else 1, None)
    merge_base: str | None = base_text
    note_id = _note_id(ours_text)
    if not base_text and note_id and note_id == _note_id(theirs_text):
        # one memory added on both sides (moved and changed beyond git's rename detection):
        # its common version is in history; failing that, merge without one
        merge_base = base_from_history(Path.cwd(), note_id)
    try:
        result = merge_note(merge_base, ours_text, theirs_text, git_merge_lines)
    except OSError:
        _write(Path(ours), _whole_sides(ours_text, theirs_text))
        return DriverOutcome(1, MergeResult(_whole_sides(ours_text, theirs_text), ("note",)))
    kept = _kept_apart_before(Path.cwd(), path, merge_base, ours_text, theirs_text)
    if kept is not None:  # theirs changes a memory an earlier step kept apart: merge it there
        elsewhere, text = kept
        moved = merge_note(merge_base, text, theirs_text, git_merge_lines)
        _write(Path.cwd() / elsewhere, moved.text)
        return DriverOutcome(0 if moved.clean else 1, moved, kept_apart=elsewhere)
    if result.apart is not None:
        name = free_name(Path.cwd(), path) if path else None
        if name is None:
            text = _whole_sides(ours_text, theirs_text)
            _write(Path(ours), text)
            return DriverOutcome(1, MergeResult(text, ("note",)))
        target = Path.cwd() / name
        target.parent.mkdir(parents=True, exist_ok=True)
        _write(target, result.apart)
        return DriverOutcome(0, result, kept_apart=name)
    if result.text != ours_text:
        _write(Path(ours), result.text)
    return DriverOutcome(0 if result.clean else 1, result)
