"""Reading a journal back, trusting nothing in it.

A journal file in ``.vaultmem/journal/`` may be damaged or crafted. Every line must be JSON of
the shape :mod:`vaultmem.store.journal` writes; every path vault-relative, confined to the vault
(:func:`~vaultmem.store.vault_paths.confined`) and, where a note appears, inside the memory
folders; every text a note vaultmem manages (``type: memory``, ``box`` or ``trace``). Anything
else raises :class:`~vaultmem.errors.JournalError` naming the file and line; nothing is done.
Only a torn last line (a kill or a full disk mid-append: no newline) is ignored: the step it
announced never started.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

from vaultmem.core.notes.fields import read_fields
from vaultmem.core.notes.note_parse import parse_note
from vaultmem.core.notes.note_reading import FrontmatterError, parse_frontmatter, split_frontmatter
from vaultmem.errors import JournalError, UnsafePathError
from vaultmem.store.vault_paths import confined, in_folders

KINDS = ("move", "create", "edit", "delete")
MANAGED_TYPES = ("memory", "box", "trace")
STATUS_KEYS = ("done", "skipped", "undoing", "undone")


@dataclass(frozen=True, slots=True)
class Operation:
    """One file operation. ``kind``: move (rename with its new text, one step), create, edit or
    delete.

    ``source``/``target`` are vault-relative; ``before``/``after`` the note's whole text before
    and after (``None`` where the file does not exist).
    """

    seq: int
    kind: str
    source: str | None
    target: str
    before: str | None
    after: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "op": self.kind,
            "seq": self.seq,
            "source": self.source,
            "target": self.target,
            "before": self.before,
            "after": self.after,
        }

    def as_line(self) -> str:
        """:meth:`as_json` as one JSON line (no newline), exactly as ``json.dumps`` writes it
        (non-ASCII as ``\\u`` escapes), put together directly: a third of the time
        ``json.dumps`` takes over the dict (a pass writes one per note, two texts each)."""
        return (
            f'{{"op": {encode_basestring_ascii(self.kind)}, "seq": {int(self.seq)}, '
            f'"source": {_json_text(self.source)}, "target": {_json_text(self.target)}, '
            f'"before": {_json_text(self.before)}, "after": {_json_text(self.after)}}}'
        )


def _json_text(text: str | None) -> str:
    """``text`` as ``json.dumps`` writes it (``null`` for ``None``)."""
    return "null" if text is None else encode_basestring_ascii(text)


@dataclass(slots=True)
class JournalEntry:
    """A journal file read back: its header, operations and what became of each.

    ``done``/``skipped``: seqs the command carried out / left (a racing edit, a problem);
    ``undone``: seqs an undo reverted; ``undoing``: seqs an undo started.
    """

    path: Path
    header: dict[str, Any]
    operations: list[Operation] = field(default_factory=list)
    done: set[int] = field(default_factory=set)
    skipped: set[int] = field(default_factory=set)
    undoing: set[int] = field(default_factory=set)
    undone: set[int] = field(default_factory=set)
    undo_started: bool = False
    complete: bool = False
    seqs: set[int] = field(default_factory=set, repr=False)
    """The seqs of ``operations`` (kept for lookups while reading)."""

    @property
    def undone_file(self) -> bool:
        return self.path.name.endswith(".undone.jsonl")


def read_journal(path: Path, root: Path, folders: tuple[str, ...]) -> JournalEntry:
    """Parse and check a journal file; raises :class:`JournalError` (file, line, problem)."""
    if path.is_symlink():
        raise JournalError(path, 0, "is a symlink (vaultmem would append to where it points)")
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise JournalError(path, 0, f"cannot read: {err.strerror}") from None
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise JournalError(path, 0, "not UTF-8") from None
    lines = content.split("\n")
    # the text after the last newline: empty, or a line a kill or a full disk cut short (even
    # just before its newline): the step it announced never started
    lines.pop()
    entry: JournalEntry | None = None
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise JournalError(path, number, "not a JSON line") from None
        if not isinstance(record, dict):
            raise JournalError(path, number, "not a JSON object")
        if entry is None:
            if record.get("journal") != 1 or not isinstance(record.get("command"), str):
                raise JournalError(path, number, "not a vaultmem journal header")
            entry = JournalEntry(path, record)
            continue
        try:
            _take(entry, record, root, folders)
        except (ValueError, UnsafePathError) as err:
            raise JournalError(path, number, str(err)) from None
    return entry or JournalEntry(path, {})


def _take(
    entry: JournalEntry, record: dict[str, Any], root: Path, folders: tuple[str, ...]
) -> None:
    if "op" in record:
        operation = _operation(record, entry.seqs, root, folders)
        entry.operations.append(operation)
        entry.seqs.add(operation.seq)
        return
    keys = set(record)
    if keys == {"complete"} or keys == {"complete", "recovered"}:
        if record["complete"] is not True or record.get("recovered", True) is not True:
            raise ValueError("a 'complete' line must say true")
        entry.complete = True
        return
    if keys == {"undo"}:
        if record["undo"] != "start":
            raise ValueError("an 'undo' line must say \"start\"")
        entry.undo_started = True
        return
    if len(keys) == 1 and next(iter(keys)) in STATUS_KEYS:
        key = next(iter(keys))
        seq = record[key]
        if type(seq) is not int or seq not in entry.seqs:
            raise ValueError(f"{key!r} names no operation of this journal")
        getattr(entry, key).add(seq)
        return
    raise ValueError(f"unknown journal line with keys {sorted(keys)}")


def _managed(path: str, text: str) -> bool:
    """Whether ``text`` is a note vaultmem manages (its ``type``): the frontmatter alone is read
    (a pass's journal holds thousands of texts), and the whole note only when that says no."""
    yaml_text, _body = split_frontmatter(text)
    if yaml_text is not None:
        try:
            fields, _warnings = read_fields({"type": parse_frontmatter(yaml_text).get("type")})
        except FrontmatterError:
            pass
        else:
            if fields.type in MANAGED_TYPES:
                return True
    return parse_note(path, text).fields.type in MANAGED_TYPES


def _operation(
    record: dict[str, Any], seen: set[int], root: Path, folders: tuple[str, ...]
) -> Operation:
    if set(record) != {"op", "seq", "source", "target", "before", "after"}:
        raise ValueError("an operation line must have op, seq, source, target, before, after")
    kind, seq = record["op"], record["seq"]
    if kind not in KINDS:
        raise ValueError(f"unknown operation {kind!r}")
    if type(seq) is not int or seq < 1 or seq in seen:
        raise ValueError("an operation needs a new positive whole 'seq'")
    source, target, before, after = (record[k] for k in ("source", "target", "before", "after"))
    for name, value in (("source", source), ("before", before), ("after", after)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name!r} must be text or null")
    if not isinstance(target, str):
        raise ValueError("'target' must be text")
    needs = {  # kind → (source, before, after) present?
        "move": (True, True, True),
        "create": (False, False, True),
        "edit": (False, True, True),
        "delete": (False, True, False),
    }[kind]
    for name, value, present in zip(
        ("source", "before", "after"), (source, before, after), needs, strict=True
    ):
        if (value is not None) != present:
            raise ValueError(f"a {kind} must {'have' if present else 'not have'} {name!r}")
    for rel in (target, source) if source is not None else (target,):
        confined(root, rel)
        if not rel.lower().endswith(".md"):
            raise ValueError(f"{rel}: not a note (.md)")
    if kind in ("move", "create") and not in_folders(target, folders):
        raise ValueError(f"{target}: outside the memory folders ({', '.join(folders)})")
    for name, text in (("before", before), ("after", after)):
        if text is not None and not _managed(target, text):
            raise ValueError(f"{target}: its {name!r} text is not a note vaultmem manages")
    return Operation(seq, kind, source, target, before, after)
