"""``vaultmem doctor``: what is wrong with the vault or its index, in findings a person can act on.

Checks (spec sections 1, 2, 5, 6): the index against the files on disk (before syncing, so a
stale index is reported, then repaired), notes vaultmem cannot read or must not write (YAML that
does not parse, conflict markers, non-UTF-8, sync conflict copies), field values of the wrong
type, duplicate base names among managed notes (case-insensitive), and unresolved links.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultmem.services.index_sync import scan_vault, templates_folder

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: ``kind`` (a stable word), the note's ``path`` and a one-line ``detail``."""

    kind: str
    path: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path, "detail": self.detail}


@dataclass(slots=True)
class DoctorReport:
    """All findings; ``problems`` are the findings that make ``doctor`` exit non-zero."""

    notes: int = 0
    stale_index: list[Finding] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "notes": self.notes,
            "stale_index": [f.as_dict() for f in self.stale_index],
            "problems": [f.as_dict() for f in self.problems],
            "warnings": [f.as_dict() for f in self.warnings],
        }


def check_vault(vault: VaultContext) -> DoctorReport:
    """Run every check; the index is synced (repaired) after comparing it with the disk."""
    report = DoctorReport()
    on_disk = scan_vault(vault.root, vault.settings)
    known = vault.index.file_states()
    for path in sorted(set(known) - set(on_disk)):
        report.stale_index.append(Finding("index-stale", path, "indexed but no longer on disk"))
    for path in sorted(set(on_disk) - set(known)):
        report.stale_index.append(Finding("index-stale", path, "on disk but not indexed"))
    for path in sorted(set(on_disk) & set(known)):
        size, mtime_ns = on_disk[path]
        if (known[path].size, known[path].mtime_ns) != (size, mtime_ns):
            report.stale_index.append(Finding("index-stale", path, "changed since it was indexed"))
    vault.sync()
    rows = vault.index.conn.execute(
        "SELECT path, name_key, type, problems, warnings FROM notes ORDER BY path"
    ).fetchall()
    report.notes = len(rows)
    managed_names: dict[str, list[str]] = defaultdict(list)
    templates = templates_folder(vault.root)
    for path, name_key, note_type, problems, warnings in rows:
        for problem in json.loads(problems):
            finding = Finding(_problem_kind(problem), path, problem)
            if templates and path.startswith(templates + "/") and finding.kind == "unparsable":
                # Obsidian's own templates hold {{placeholders}} YAML cannot read until filled in
                report.warnings.append(Finding("template", path, problem))
            else:
                report.problems.append(finding)
        for warning in json.loads(warnings):
            report.warnings.append(Finding("wrong-type", path, warning))
        if note_type in ("memory", "box", "trace"):
            managed_names[name_key].append(path)
    for name_key, paths in sorted(managed_names.items()):
        others = [p for p in vault.index.paths_with_name(name_key) if p not in paths]
        clash = paths + others
        if len(clash) > 1:
            report.problems.append(
                Finding(
                    "duplicate-name",
                    clash[0],
                    f"{len(clash)} notes share the name {name_key!r}: {', '.join(clash)}",
                )
            )
    for row in vault.index.conn.execute(
        "SELECT n.path, l.target FROM links l JOIN notes n ON n.nid = l.nid "
        "WHERE l.resolved IS NULL ORDER BY n.path, l.lid"
    ):
        report.warnings.append(
            Finding("unresolved-link", row[0], f"[[{row[1]}]] resolves to no note")
        )
    return report


def _problem_kind(problem: str) -> str:
    if "conflict markers" in problem:
        return "conflict-markers"
    if "frontmatter" in problem:
        return "unparsable"
    if "UTF-8" in problem:
        return "not-utf8"
    if "conflict copy" in problem:
        return "conflict-copy"
    return "problem"
