"""Reading a journal entry's header and state cheaply, without checking its notes.

A big pass's journal holds the text of every note it moved (megabytes); :func:`ends_complete`
reads only its tail, :func:`journal_summary` scans its lines without parsing the texts. What a
journal *does* is always read through :func:`~vaultmem.store.journal_check.read_journal`, which
checks every line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def ends_complete(path: Path) -> bool:
    """Whether the journal's last line marks it complete (read from its tail only: a big pass's
    journal is not parsed again at every command). Damage before it is found when the
    journal is undone; a symlink is never trusted here."""
    if path.is_symlink():
        return False
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - 128))
            tail = handle.read()
    except OSError:
        return False
    lines = tail.split(b"\n")
    if len(lines) < 2 or lines[-1]:  # no newline at the end: a torn append
        return False
    try:
        record = json.loads(lines[-2])
    except ValueError:
        return False
    marks = {"complete", "recovered"}
    return isinstance(record, dict) and record.get("complete") is True and set(record) <= marks


def journal_summary(path: Path) -> dict[str, Any]:
    """A journal's header and counts without checking its notes (for ``undo --list``).

    Returns the header's keys plus ``name`` (the file name), ``operations``, ``complete`` and
    ``undone`` (the file was renamed ``….undone.jsonl``). A damaged header gives
    ``command: "?"`` and ``damaged: true``; :func:`read_journal` names the problem when undone.
    """
    summary: dict[str, Any] = {"name": path.name, "undone": path.name.endswith(".undone.jsonl")}
    operations = 0
    complete = False
    header: dict[str, Any] | None = None
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if header is None:
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        record = None
                    header = record if isinstance(record, dict) else {}
                elif line.startswith('{"op"'):
                    operations += 1
                elif line.startswith('{"complete"'):
                    complete = True
    except (OSError, UnicodeDecodeError):
        header = None
    if not header or header.get("journal") != 1:
        return {**summary, "command": "?", "damaged": True, "operations": operations}
    return {
        **{k: v for k, v in header.items() if k != "journal"},
        **summary,
        "operations": operations,
        "complete": complete,
    }


__all__ = ["ends_complete", "journal_summary"]
