"""vaultmem's property types in the vault's ``.obsidian/types.json`` (``vaultmem init``).

Obsidian keeps the type of every property in ``.obsidian/types.json`` (``{"types": {key: type}}``)
and writes values in that type: where a vault declares ``status`` a list, Obsidian saves
``status: [archived]``. :func:`merge_property_types` adds vaultmem's types (the template's
``types.json``) for keys the vault neither declares nor uses otherwise in its notes, and
reports keys it declares or uses otherwise; those keep the vault's type (vaultmem reads a
one-item list as its item, docs/user-guide.md, "Obsidian's property types").
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vaultmem.store.note_files import read_note, write_note

TYPES_FILE = ".obsidian/types.json"


@dataclass(slots=True)
class TypesReport:
    """Keys added to ``types.json`` and one warning line per key declared with another type."""

    added: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _types_of(text: str) -> dict[str, object] | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    types = data.get("types") if isinstance(data, dict) else None
    return types if isinstance(types, dict) else None


def _kind_of(value: object) -> str | None:
    """How Obsidian sees a YAML value: list, checkbox, number, date or text (None: empty)."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, list):
        return "list"
    if isinstance(value, bool):
        return "checkbox"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dt.date) or (isinstance(value, str) and _DATE.match(value)):
        return "date"
    return "text"


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$")
_FITS: dict[str, frozenset[str]] = {
    "text": frozenset({"text", "number", "date"}),
    "number": frozenset({"number"}),
    "checkbox": frozenset({"checkbox"}),
    "datetime": frozenset({"date"}),
    "date": frozenset({"date"}),
    "multitext": frozenset({"list", "text"}),
    "tags": frozenset({"list", "text"}),
    "aliases": frozenset({"list", "text"}),
}
"""Obsidian property type → the value kinds a note may hold under it without a clash."""


@dataclass(slots=True)
class KeyUse:
    """How the vault's notes use one property with a kind vaultmem's type does not fit."""

    kind: str
    notes: int = 0
    example: str = ""


def clashing_uses(root: Path, wanted: dict[str, str]) -> dict[str, KeyUse]:
    """Keys of ``wanted`` that the vault's notes use with a value of another kind (``type`` as
    a list where vaultmem writes text): key → the most common clashing kind, how many notes,
    one of them. Reads every note's frontmatter outside dot-folders and template folders; a
    note that cannot be read or parsed is passed over (``doctor`` reports it)."""
    from vaultmem.core.notes.note_reading import (
        FrontmatterError,
        parse_frontmatter,
        split_frontmatter,
    )
    from vaultmem.services.index.template_folders import in_templates, template_folders

    templates = template_folders(root)
    counts: dict[str, dict[str, list[str]]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(f for f in files if f.endswith(".md") and not f.startswith(".")):
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            if in_templates(rel, templates):
                continue
            try:
                yaml_text, _ = split_frontmatter(path.read_text(encoding="utf-8"))
                if yaml_text is None or not any(f"{key}:" in yaml_text for key in wanted):
                    continue
                frontmatter = parse_frontmatter(yaml_text, path=rel)
            except (OSError, UnicodeDecodeError, FrontmatterError):
                continue
            for key, kind in wanted.items():
                used = _kind_of(frontmatter.get(key))
                if used is not None and used not in _FITS.get(kind, frozenset({used})):
                    counts.setdefault(key, {}).setdefault(used, []).append(rel)
    clashes: dict[str, KeyUse] = {}
    for key, kinds in counts.items():
        kind, notes = max(kinds.items(), key=lambda item: len(item[1]))
        clashes[key] = KeyUse(kind, len(notes), notes[0])
    return clashes


def merge_property_types(root: Path, wanted: dict[str, str]) -> TypesReport:
    """Add ``wanted`` key → type entries missing from ``root``'s ``types.json``; report clashes.

    A key the vault declares with another type keeps it, with a warning. A key the vault's
    notes already use with values of another kind (29 notes with ``type`` a list where
    vaultmem writes text) is not declared, with a warning naming how many notes and one of
    them: Obsidian keeps showing those values as they are. A vault without the file gets one
    with the other entries. The file is rewritten atomically only when an entry is added (its
    other entries and their order kept, 2-space JSON like Obsidian's); a file that does not
    parse is left alone with a warning.
    """
    report = TypesReport()
    path = root / TYPES_FILE
    snapshot = read_note(path) if path.is_file() else None
    if snapshot is None:
        data: dict[str, Any] = {"types": {}}
    elif _types_of(snapshot.text) is None:
        report.warnings.append(f'{TYPES_FILE} is not JSON with a "types" object; left as it is')
        return report
    else:
        data = json.loads(snapshot.text)
    types: dict[str, object] = data["types"]
    clashes = clashing_uses(root, {k: v for k, v in wanted.items() if k not in types})
    for key, kind in wanted.items():
        have = types.get(key)
        use = clashes.get(key)
        if have is None and use is not None:
            notes = "1 note uses" if use.notes == 1 else f"{use.notes} notes use"
            report.warnings.append(
                f"{notes} {key} as {use.kind} (e.g. {use.example}), vaultmem writes {kind}; "
                f"not declared in {TYPES_FILE}, so Obsidian keeps showing your values as they are"
            )
        elif have is None:
            types[key] = kind
            report.added.append(key)
        elif have != kind:
            report.warnings.append(
                f"{TYPES_FILE} declares {key} as {have}, vaultmem writes {kind}; kept yours "
                f"(a one-item list is read as its item)"
            )
    if report.added or snapshot is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_note(
            path,
            json.dumps(data, indent=2, ensure_ascii=False) + "\n",
            expected=None if snapshot is None else snapshot.fingerprint,
        )
    return report


def template_types(template: Path) -> dict[str, str]:
    """vaultmem's property types: the template vault's ``types.json``."""
    types = _types_of((template / TYPES_FILE).read_text(encoding="utf-8")) or {}
    return {str(k): str(v) for k, v in types.items()}


__all__ = [
    "TYPES_FILE",
    "KeyUse",
    "TypesReport",
    "clashing_uses",
    "merge_property_types",
    "template_types",
]
