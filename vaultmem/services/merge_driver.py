"""git's merge driver for memory notes: ``vaultmem merge-driver %O %A %B %P``.

git runs it once per note both sides changed: ``%O`` the base (ancestor) version, ``%A`` ours,
``%B`` theirs, ``%P`` the note's path in the repository. The merged note is written to ``%A``;
the exit status is 0 when merged cleanly, 1 when a conflict remains (markers around the
conflicting key or body lines, which git then reports as a conflict). The rules are
:func:`vaultmem.core.note_merge.merge_note`'s (user guide, "Syncing with git"); the body is merged
by ``git merge-file --diff3``.

This module runs in a fresh process per note, so it imports only what the merge needs (no
index, no numpy): keep it that way.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

from vaultmem.core.note_merge import MergeResult, merge_note

__all__ = ["git_merge_lines", "merge_files"]


def git_merge_lines(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    """Line merge of three texts with ``git merge-file -p --diff3``: (merged text, clean).

    Conflicts come back as diff3 markers labelled ``ours``, ``base`` and ``theirs``; every line
    of every side is kept. Raises ``OSError`` when git cannot be run or refuses the input.
    """
    with tempfile.TemporaryDirectory(prefix="vaultmem-merge-") as folder:
        names = []
        for label, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            name = os.path.join(folder, label)
            with open(name, "wb") as handle:
                handle.write(text.encode("utf-8"))
            names.append(name)
        done = subprocess.run(
            ["git", "merge-file", "-p", "--diff3", "-L", "ours", "-L", "base", "-L", "theirs",
             *names],
            capture_output=True,
        )  # fmt: skip
    if done.returncode < 0 or done.returncode >= 127:
        raise OSError(f"git merge-file failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode("utf-8", errors="surrogateescape"), done.returncode == 0


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
    heads = [key[len("GITHEAD_") :] for key in os.environ if key.startswith("GITHEAD_")]
    heads += ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REBASE_HEAD", "REVERT_HEAD"]
    for other in heads:
        if _git_out(cwd, "rev-parse", "--verify", "--quiet", other + "^{commit}") is not None:
            break
    else:
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


def _read(path: str) -> str | None:
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def merge_files(
    base: str, ours: str, theirs: str, path: str = ""
) -> tuple[int, MergeResult | None]:
    """Merge the files at ``base``/``ours``/``theirs`` into ``ours`` (git's protocol).

    Returns (exit status, result): 0 merged cleanly, 1 a conflict remains (written with
    markers), 2 the driver could not merge by keys (a side is not UTF-8: the bytes were merged
    line by line, markers where they conflict; or git failed) and git reports a conflict.
    ``path`` is only used in messages.
    """
    texts = [_read(p) for p in (base, ours, theirs)]
    if any(t is None for t in texts):  # not UTF-8: git's own line merge, bytes as they are
        done = subprocess.run(
            ["git", "merge-file", "--diff3", "-L", "ours", "-L", "base", "-L", "theirs",
             ours, base, theirs],
            capture_output=True,
        )  # fmt: skip
        return (0 if done.returncode == 0 else 2), None
    base_text: str | None
    base_text, ours_text, theirs_text = (t or "" for t in texts)
    note_id = _note_id(ours_text)
    if not base_text and note_id and note_id == _note_id(theirs_text):
        # one memory added on both sides (moved and changed beyond git's rename detection):
        # its common version is in history; failing that, merge without one
        base_text = base_from_history(Path.cwd(), note_id)
    try:
        result = merge_note(base_text, ours_text, theirs_text, git_merge_lines)
    except OSError:
        return 2, None
    if result.text != ours_text:
        target = Path(ours)
        fd, tmp = tempfile.mkstemp(prefix=".vaultmem-merge-", dir=target.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(result.text.encode("utf-8", errors="surrogateescape"))
        os.replace(tmp, target)
    return (0 if result.clean else 1), result
