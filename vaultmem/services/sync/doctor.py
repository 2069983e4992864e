"""``vaultmem doctor``: what is wrong with the vault or its index, in findings a person can act on.

Checks (docs/user-guide.md, "The vault", "The memory note", "Index and graph"): the index against
the files on disk (before syncing, so a stale index is reported, then repaired), notes vaultmem
cannot read or must not write (YAML that does not parse, conflict markers, non-UTF-8, sync conflict
copies), field values of the wrong type (notes no pass moves or edits), duplicate base names among
managed notes (case-insensitive), notes sharing a memory id, memories in a folder their status
contradicts, and unresolved links (to notes and to attachments that are not there), summarised one
finding per note.

Templates (the Templates plugin's folder and vaultmem's own ``Templates/``) hold
``{{placeholders}}`` until filled in: their YAML, field values and unresolved links are not
checked.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vaultmem.core.notes.timestamps import utc_now
from vaultmem.services.index.index_stamps import is_pending
from vaultmem.services.index.template_folders import in_templates, template_folders
from vaultmem.services.index.vault_walk import scan_vault
from vaultmem.services.lifecycle.placement import misplaced
from vaultmem.services.sync.git_setup import git_sync_problems
from vaultmem.services.sync.shared_ids import plan_text, shared_id_groups
from vaultmem.services.sync.unmerged_notes import unmerged_notes
from vaultmem.store.note_files import MAX_NAME_BYTES

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


@dataclass(frozen=True, slots=True)
class UnresolvedLink:
    """A link target of note ``path`` that resolves to no note or file, ``count`` times."""

    path: str
    target: str
    kind: str
    count: int

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "target": self.target, "kind": self.kind, "count": self.count}

    def describe(self) -> str:
        """The link as written (``[[x]]``, ``![[x.png]]``, ``[](x.md)``), ``×n`` if repeated."""
        if self.kind == "markdown":
            shown = f"[]({self.target})"
        elif self.kind == "embed":
            shown = f"![[{self.target}]]"
        else:
            shown = f"[[{self.target}]]"
        return shown if self.count == 1 else f"{shown} ×{self.count}"


@dataclass(slots=True)
class DoctorReport:
    """All findings; ``problems`` are the findings that make ``doctor`` exit non-zero.

    ``warnings`` hold one ``unresolved-link`` finding per note (its targets summarised);
    ``unresolved`` every distinct unresolved (note, target, kind) with its count.
    """

    notes: int = 0
    stale_index: list[Finding] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    unresolved: list[UnresolvedLink] = field(default_factory=list)

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
            "unresolved_links": [u.as_dict() for u in self.unresolved],
        }


def check_vault(vault: VaultContext) -> DoctorReport:
    """Run every check; the index is synced (repaired) after comparing it with the disk."""
    report = DoctorReport()
    misnamed: list[str] = []
    on_disk = scan_vault(vault.root, vault.settings, misnamed=misnamed)
    for path in sorted(misnamed):
        report.warnings.append(
            Finding("name-not-utf8", path, "its name is not UTF-8: not indexed; rename it")
        )
    known = vault.index.file_states()
    if not known and on_disk:  # never built (or just rebuilt): one line, not one per note
        report.stale_index.append(
            Finding("index-stale", "", f"not built yet; {len(on_disk)} notes indexed now")
        )
        on_disk = {}
    for path in sorted(set(known) - set(on_disk)):
        report.stale_index.append(Finding("index-stale", path, "indexed but no longer on disk"))
    for path in sorted(set(on_disk) - set(known)):
        report.stale_index.append(Finding("index-stale", path, "on disk but not indexed"))
    for path in sorted(set(on_disk) & set(known)):
        size, mtime_ns = on_disk[path]
        state = known[path]
        if state.size != size or (
            state.mtime_ns != mtime_ns and not is_pending(state.mtime_ns, mtime_ns)
        ):  # a pending stamp (read within a clock tick of its mtime) is re-read, not stale
            report.stale_index.append(Finding("index-stale", path, "changed since it was indexed"))
    vault.sync()
    rows = vault.index.conn.execute(
        "SELECT path, name_key, type, problems, warnings FROM notes ORDER BY path"
    ).fetchall()
    report.notes = len(rows)
    managed_names: dict[str, list[str]] = defaultdict(list)
    templates = template_folders(vault.root)
    for path, name_key, note_type, problems, warnings in rows:
        template = in_templates(path, templates)
        for problem in json.loads(problems):
            finding = Finding(_problem_kind(problem), path, problem)
            # templates hold {{placeholders}} YAML cannot read until filled in: not a finding
            if not (template and finding.kind == "unparsable"):
                report.problems.append(finding)
        if not template:
            for warning in dict.fromkeys(json.loads(warnings)):
                report.warnings.append(Finding("wrong-type", path, warning))
        if note_type in ("memory", "box", "trace"):
            managed_names[name_key].append(path)
            if len(path.rpartition("/")[2].encode("utf-8")) > MAX_NAME_BYTES:
                report.problems.append(Finding(
                    "name-too-long", path,
                    f"its name is over {MAX_NAME_BYTES} bytes: no pass, touch or edit can "
                    "write it; rename it shorter",
                ))
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
    for item in misplaced(vault, utc_now()):
        report.problems.append(Finding("misplaced", item.path, item.detail))
    report.problems += sync_problems(vault)
    report.warnings += sync_warnings(vault)
    _unresolved_links(vault, report, templates)
    return report


SUMMARY_TARGETS = 5
"""How many unresolved targets one note's summary names before "and N more"."""


def _unresolved_links(
    vault: VaultContext, report: DoctorReport, templates: tuple[str, ...]
) -> None:
    """One ``unresolved-link`` warning per note; every distinct link in ``report.unresolved``.
    Links in templates (to notes each use of the template is meant to make) are left out."""
    counts: dict[tuple[str, str, str], int] = {}
    for path, target, kind in vault.index.conn.execute(
        "SELECT n.path, l.target, l.kind FROM links l JOIN notes n ON n.nid = l.nid "
        "WHERE l.resolved IS NULL ORDER BY n.path, l.lid"
    ):
        if in_templates(path, templates):
            continue
        key = (path, target, "wikilink" if kind == "frontmatter" else kind)
        counts[key] = counts.get(key, 0) + 1
    by_note: dict[str, list[UnresolvedLink]] = defaultdict(list)
    for (path, target, kind), count in counts.items():
        link = UnresolvedLink(path, target, kind, count)
        report.unresolved.append(link)
        by_note[path].append(link)
    for path, links in by_note.items():
        total = sum(link.count for link in links)
        shown = ", ".join(link.describe() for link in links[:SUMMARY_TARGETS])
        more = f" and {len(links) - SUMMARY_TARGETS} more" if len(links) > SUMMARY_TARGETS else ""
        noun = "link resolves" if total == 1 else "links resolve"
        report.warnings.append(
            Finding("unresolved-link", path, f"{total} {noun} to nothing: {shown}{more}")
        )


def sync_problems(vault: VaultContext) -> list[Finding]:
    """Notes sharing a memory id (git rename/rename, add/add; Obsidian's "Make a copy"), and
    notes git left as one side without markers (a binary merge, or no driver)."""
    f = vault.settings.folders
    folders = tuple(x.strip("/") for x in (f.stm, f.boxes, f.ltm, f.archive))
    findings = [
        Finding(
            "unmerged",
            note.path,
            "git kept only your side (it took the note for binary, or merged without the "
            "driver); the other side is not in it: `vaultmem doctor --fix` merges both",
        )
        for note in unmerged_notes(vault.root, folders, lambda i: bool(vault.index.paths_by_id(i)))
    ]
    for note_id, paths in sorted(shared_id_groups(vault.index).items()):
        findings.append(
            Finding(
                "duplicate-id",
                paths[0],
                f"{len(paths)} notes share the memory id {note_id}: {', '.join(paths)}; "
                f"passes leave them in place; {plan_text(vault, paths)}",
            )
        )
    return findings


def sync_warnings(vault: VaultContext) -> list[Finding]:
    """A vault in git whose ``.gitattributes`` use the merge driver this clone lacks."""
    return [Finding("merge-driver", path, detail) for path, detail in git_sync_problems(vault.root)]


def _problem_kind(problem: str) -> str:
    if "conflict markers" in problem:
        return "conflict-markers"
    if "frontmatter" in problem:
        return "unparsable"
    if "UTF-8" in problem:
        return "not-utf8"
    if "conflict copy" in problem:
        return "conflict-copy"
    if "note size limit" in problem:
        return "too-big"
    return "problem"
