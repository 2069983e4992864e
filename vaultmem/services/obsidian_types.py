"""vaultmem's property types in the vault's ``.obsidian/types.json`` (``vaultmem init``).

Obsidian keeps the type of every property in ``.obsidian/types.json`` (``{"types": {key: type}}``)
and writes values in that type: where a vault declares ``status`` a list, Obsidian saves
``status: [archived]``. :func:`merge_property_types` adds vaultmem's types (the template's
``types.json``) for keys the vault does not declare, and reports keys it declares otherwise;
those keep the vault's type (vaultmem reads a one-item list as its item, docs/user-guide.md,
"Obsidian's property types").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

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


def merge_property_types(root: Path, wanted: dict[str, str]) -> TypesReport:
    """Add ``wanted`` key → type entries missing from ``root``'s ``types.json``; report clashes.

    The file is rewritten atomically only when an entry is added (its other entries and their
    order kept, 2-space JSON like Obsidian's); a file that does not parse is left alone with a
    warning. A vault without the file gets none here (``init`` copies the template's).
    """
    report = TypesReport()
    path = root / TYPES_FILE
    if not path.is_file():
        return report
    snapshot = read_note(path)
    data = json.loads(snapshot.text) if _types_of(snapshot.text) is not None else None
    if data is None:
        report.warnings.append(f'{TYPES_FILE} is not JSON with a "types" object; left as it is')
        return report
    types: dict[str, object] = data["types"]
    for key, kind in wanted.items():
        have = types.get(key)
        if have is None:
            types[key] = kind
            report.added.append(key)
        elif have != kind:
            report.warnings.append(
                f"{TYPES_FILE} declares {key} as {have}, vaultmem writes {kind}; kept yours "
                f"(a one-item list is read as its item)"
            )
    if report.added:
        write_note(
            path,
            json.dumps(data, indent=2, ensure_ascii=False) + "\n",
            expected=snapshot.fingerprint,
        )
    return report


def template_types(template: Path) -> dict[str, str]:
    """vaultmem's property types: the template vault's ``types.json``."""
    types = _types_of((template / TYPES_FILE).read_text(encoding="utf-8")) or {}
    return {str(k): str(v) for k, v in types.items()}


__all__ = ["TYPES_FILE", "TypesReport", "merge_property_types", "template_types"]
