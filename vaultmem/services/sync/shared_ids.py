"""Memories at two paths, and conflicted properties: found by ``doctor``, fixed by ``doctor --fix``.

Two notes sharing a memory id come from git (a rename/rename or add/add merge leaves one memory
at two lifecycle stages, same base name) or from Obsidian's "Make a copy" (``X 1.md``, another
base name). Passes never move either file; ``doctor`` names both; ``doctor --fix`` resolves
them by one rule (user guide, "Syncing with git"):

- **a copy** (Obsidian's "Make a copy"): a note whose name is another's plus `` 1`` or
  `` copy`` is a copy; it gets a new id (one line changed) and the original keeps it;
- **a sync tool's conflict copy** (``X (conflicted copy …)``, ``X.sync-conflict-…``, ``X 2``):
  merged into the original, never the other way (the original keeps the name people link to);
- **one memory at several places** (every other case: the same base name at two lifecycle
  stages after a git rename/rename or add/add, or a rename on one machine while a pass moved
  the note on the other): the file at the later lifecycle stage is kept — STM < Boxes < LTM <
  Archive; at the same stage, the first path in sort order — and the other files' fields are
  merged into it as the merge driver merges them (no common version: counters take the larger
  value, times the latest or earliest, sets the union), then they are deleted.

Conflict markers inside a memory's frontmatter are resolved by the driver's rules too; markers
around two different memory ids (an add/add merged without the driver) split the note in two,
theirs as ``<title> 2``; conflicts in the body are left to the person. Every change goes
through one journal, so ``vaultmem undo`` reverses the fix.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vaultmem.core.lifecycle.lifecycle_plan import Move
from vaultmem.core.links.link_resolution import note_key
from vaultmem.core.notes.naming import new_id
from vaultmem.core.notes.note_merge import (
    carry_comments,
    conflict_sides,
    merge_frontmatter,
    merge_note,
)
from vaultmem.core.notes.note_parse import CONFLICT_PROBLEM, title_of
from vaultmem.core.notes.note_text import (
    DELETE,
    FrontmatterError,
    find_conflict_markers,
    parse_frontmatter,
    set_fields,
    split_note,
)
from vaultmem.errors import VaultmemError
from vaultmem.services.lifecycle.undo import journal_origin
from vaultmem.services.memories.memory_creation import unique_title
from vaultmem.services.sync.git_setup import in_git_repository
from vaultmem.services.sync.merge_driver import base_from_history, git_merge_lines
from vaultmem.services.sync.unmerged_notes import merge_unmerged, unmerged_notes
from vaultmem.store.index_db import IndexDB
from vaultmem.store.journal import JournalWriter, recover
from vaultmem.store.note_files import read_note
from vaultmem.store.vault_lock import vault_lock

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext

_COPY_SUFFIX = re.compile(r"^(?P<name>.+?)(?: 1| copy(?: \d+)?)$", re.IGNORECASE)
_SYNC_COPY_SUFFIX = re.compile(
    r"^(?P<name>.+?)(?: \([^()]*conflicted copy[^()]*\)|\.sync-conflict-[\w-]*| [2-9]| [1-9]\d+)$",
    re.IGNORECASE,
)
"""A sync tool's copy of a note both sides changed: Dropbox's and vaultmem's ``X (conflicted
copy …)``, Syncthing's ``X.sync-conflict-…``, iCloud's and Obsidian's ``X 2``."""
_EXPECTED_STATUS = ("active", "active", "promoted", "archived")
_PATH_KEYS = frozenset({"box"})
"""Keys that say where a note is: the kept path's value stays."""


def shared_id_groups(db: IndexDB) -> dict[str, list[str]]:
    """Memory id → the paths of the managed notes holding it, for ids held by 2+ notes."""
    groups: dict[str, list[str]] = defaultdict(list)
    for note_id, path in db.conn.execute(
        "SELECT id, path FROM notes WHERE id IS NOT NULL AND type IN ('memory', 'box', 'trace') "
        "AND id IN (SELECT id FROM notes WHERE id IS NOT NULL GROUP BY id HAVING count(*) > 1) "
        "ORDER BY id, path"
    ):
        groups[str(note_id)].append(str(path))
    return {k: v for k, v in groups.items() if len(v) > 1}


def shared_id_paths(db: IndexDB) -> frozenset[str]:
    """Every path in :func:`shared_id_groups` (passes leave these notes where they are)."""
    return frozenset(p for paths in shared_id_groups(db).values() for p in paths)


def hold_shared(
    planned: list[Move], skipped: list[tuple[Move, str]], shared: frozenset[str]
) -> None:
    """Move the planned moves of notes sharing an id from ``planned`` to ``skipped``, saying why."""
    for move in [m for m in planned if m.path in shared]:
        planned.remove(move)
        skipped.append(
            (move, "shares its memory id with another note; not moved "
             "(`vaultmem doctor` names both, `vaultmem doctor --fix` resolves it)")
        )  # fmt: skip


def stage(vault: VaultContext, path: str) -> int:
    """Lifecycle stage of a path by its top folder: STM 0, Boxes 1, LTM 2, Archive 3, else -1."""
    f = vault.settings.folders
    for n, folder in enumerate((f.stm, f.boxes, f.ltm, f.archive)):
        if path.startswith(folder.strip("/") + "/"):
            return n
    return -1


def _named_after(paths: list[str], suffix: re.Pattern[str]) -> list[str]:
    titles = {title_of(p).casefold() for p in paths}
    found = []
    for path in paths:
        match = suffix.match(title_of(path))
        if match and match.group("name").casefold() in titles:
            found.append(path)
    return found if len(found) < len(paths) else []


def copies_in(paths: list[str]) -> list[str]:
    """The paths whose name is another's in ``paths`` plus `` 1`` or `` copy`` (Obsidian's
    "Make a copy": a new note)."""
    return _named_after(paths, _COPY_SUFFIX)


def sync_copies_in(paths: list[str]) -> list[str]:
    """The paths whose name is another's in ``paths`` plus a sync tool's conflict suffix
    (``(conflicted copy …)``, ``.sync-conflict-…``, `` 2``…): the same memory, to merge back."""
    return _named_after(paths, _SYNC_COPY_SUFFIX)


def plan_text(vault: VaultContext, paths: list[str]) -> str:
    """What ``doctor --fix`` does with one group of paths sharing an id (one line)."""
    copies = copies_in(paths)
    same = [p for p in paths if p not in copies]
    parts: list[str] = []
    if len(same) > 1:
        keep = _winner(vault, same)
        others = ", ".join(p for p in same if p != keep)
        parts.append(f"keeps {keep} ({_why_kept(vault, keep, same)}) and merges {others} into it")
    if copies:
        parts.append(f"gives the copy {', '.join(copies)} a new id")
    return "`vaultmem doctor --fix` " + "; ".join(parts)


def _winner(vault: VaultContext, paths: list[str]) -> str:
    """The path kept: never a sync tool's conflict copy of another (the name people link to),
    else the later lifecycle stage; at one stage the first path in sort order."""
    copies = sync_copies_in(paths)
    originals = [p for p in paths if p not in copies]
    return sorted(originals, key=lambda p: (-stage(vault, p), p))[0]


def _why_kept(vault: VaultContext, keep: str, paths: list[str]) -> str:
    if sync_copies_in(paths):
        return "the original of a sync conflict copy"
    if all(stage(vault, p) == stage(vault, keep) for p in paths):
        return "the first path in sort order"
    return "later lifecycle stage"


@dataclass(slots=True)
class FixReport:
    """What ``doctor --fix`` did: ``fixed`` (path, what), ``left`` (path, why not), journal."""

    fixed: list[tuple[str, str]] = field(default_factory=list)
    left: list[tuple[str, str]] = field(default_factory=list)
    journal: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "fixed": [{"path": p, "fix": what} for p, what in self.fixed],
            "left": [{"path": p, "why": why} for p, why in self.left],
            "journal": self.journal,
        }


def _frontmatter(text: str) -> dict[str, Any] | None:
    note = split_note(text)
    if not note.has_frontmatter:
        return None
    try:
        return parse_frontmatter(note.yaml)
    except FrontmatterError:
        return None


def _side_score(vault: VaultContext, keep: str, fm: dict[str, Any]) -> int:
    """How well one side's fields fit the path kept (its folder's status and box)."""
    n = stage(vault, keep)
    score = int(0 <= n < len(_EXPECTED_STATUS) and fm.get("status") == _EXPECTED_STATUS[n])
    folder = keep.rsplit("/", 2)[-2] if keep.count("/") >= 2 else ""
    box = str(fm.get("box") or "").strip("[]").split("|")[0]
    return score + int(bool(box) and box.casefold() == folder.casefold())


def resolve_markers(text: str, prefer: Any = None) -> tuple[str | None, str]:
    """A note with conflict markers in its frontmatter only → (clean text, "") by the driver's
    rules; ``(None, why)`` when the body conflicts or a key has no rule and no ``prefer``.

    ``prefer(ours_fm, theirs_fm) -> "ours" | "theirs"`` picks the side for keys without a rule.
    """
    ours, base, theirs = conflict_sides(text)
    o, t = split_note(ours), split_note(theirs)
    if o.body != t.body or find_conflict_markers(o.body):
        return None, "the body holds conflicting lines: resolve them by hand"
    fms = [_frontmatter(x) for x in (ours, theirs)]
    base_fm = _frontmatter(base) if base is not None else None
    ours_fm, theirs_fm = fms
    if ours_fm is None or theirs_fm is None:
        return None, "a side of the conflict is not valid YAML: resolve it by hand"
    changes, conflicts = merge_frontmatter(base_fm, ours_fm, theirs_fm)
    if conflicts:
        side = prefer(ours_fm, theirs_fm) if prefer is not None else None
        if side is None:
            keys = ", ".join(conflicts)
            return None, f"properties {keys} differ with no rule to merge them: pick by hand"
        chosen = ours_fm if side == "ours" else theirs_fm
        for key in conflicts:
            if key in chosen:
                changes[key] = chosen[key]
            else:
                changes[key] = DELETE
    try:
        return carry_comments(set_fields(ours, changes), theirs, base), ""
    except (FrontmatterError, TypeError) as err:
        return None, f"could not write the merged properties ({err})"


class _Fixer:
    """Collects the fix's file operations in one journal (opened on the first one)."""

    def __init__(self, vault: VaultContext, now: dt.datetime, report: FixReport) -> None:
        self.vault, self.now, self.report = vault, now, report
        self.writer: JournalWriter | None = None
        self.touched: list[str] = []

    def _journal(self) -> JournalWriter:
        if self.writer is None:
            self.writer = JournalWriter(
                self.vault.root,
                self.vault.sidecar,
                "doctor-fix",
                self.now,
                journal_origin(self.vault),
            )
        return self.writer

    def edit(self, path: str, after: str, what: str) -> None:
        snapshot = read_note(self.vault.root / path)
        if snapshot.text != after:
            self._journal().edit(path, snapshot.text, after)
            self.touched.append(path)
        self.report.fixed.append((path, what))

    def create(self, path: str, text: str, what: str) -> None:
        self._journal().create(path, text)
        self.touched.append(path)
        self.report.fixed.append((path, what))

    def delete(self, path: str, what: str) -> None:
        snapshot = read_note(self.vault.root / path)
        self._journal().delete(path, snapshot.text)
        self.touched.append(path)
        self.report.fixed.append((path, what))


def _merge_group(
    vault: VaultContext, fixer: _Fixer, paths: list[str], texts: dict[str, str], base: str | None
) -> str:
    """One memory at several paths → the kept path (the others merged into it, then deleted).

    ``base``: the common version git holds for an unfinished merge (``None`` when there is
    none: counters take the larger side, bodies are joined line by line).
    """
    keep = _winner(vault, paths)
    merged = texts[keep]
    for other in (p for p in paths if p != keep):
        if texts[other] != merged:
            result = merge_note(
                base, merged, texts[other], git_merge_lines, keep_ours=True, ours_keys=_PATH_KEYS
            )
            if not result.clean:
                raise VaultmemError(f"{other}: its body conflicts with {keep}; merge by hand")
            merged = result.text
    copies = len(paths) - 1
    fixer.edit(
        keep,
        merged,
        f"kept ({_why_kept(vault, keep, paths)}); "
        f"merged {copies} cop{'y' if copies == 1 else 'ies'} in",
    )
    for other in (p for p in paths if p != keep):
        fixer.delete(other, f"merged into {keep} (same memory id {_id_of(texts[other])})")
    return keep


def _id_of(text: str) -> str:
    fm = _frontmatter(text) or {}
    return str(fm.get("id"))


def fix_vault(vault: VaultContext, now: dt.datetime) -> FixReport:
    """Resolve shared ids and conflicted properties (module docstring rules), journaled.

    Raises :class:`~vaultmem.errors.LockedError` when a pass is running.
    """
    report = FixReport()
    vault.sync()
    with vault_lock(vault.sidecar, timeout_seconds=0):
        recover(vault.root, vault.sidecar, tuple(vault.folders()))
        vault.sync()
        fixer = _Fixer(vault, now, report)
        try:
            _fix(vault, fixer, report)
        finally:
            if fixer.writer is not None:
                fixer.writer.close()
                report.journal = fixer.writer.path.name
    vault.refresh(fixer.touched)
    return report


def unmerged_bases(vault: VaultContext) -> dict[str, str]:
    """Memory id → its common version in an unfinished git merge (index stage 1), if any.

    When git could not pair a renamed note with its other side (a modify/delete), the base is
    still in git's index; merging with it counts every use exactly once.
    """
    if not in_git_repository(vault.root):
        return {}
    listing = subprocess.run(
        ["git", "ls-files", "-u", "-z", "--", "."], cwd=vault.root, capture_output=True, text=True
    ).stdout
    bases: dict[str, str] = {}
    for entry in filter(None, listing.split("\0")):
        info, _, _path = entry.partition("\t")
        parts = info.split()
        if len(parts) != 3 or parts[2] != "1":
            continue
        blob = subprocess.run(
            ["git", "cat-file", "blob", parts[1]], cwd=vault.root, capture_output=True
        )
        try:
            text = blob.stdout.decode("utf-8")
        except UnicodeDecodeError:
            continue
        fm = _frontmatter(text) or {}
        if fm.get("id"):
            bases[str(fm["id"])] = text
    return bases


def _memory_folders(vault: VaultContext) -> tuple[str, ...]:
    f = vault.settings.folders
    return tuple(folder.strip("/") for folder in (f.stm, f.boxes, f.ltm, f.archive))


def _fix_unmerged(vault: VaultContext, fixer: _Fixer, report: FixReport) -> None:
    """Notes git kept one side of (binary, or merged without the driver): both sides merged."""
    for note in unmerged_notes(
        vault.root, _memory_folders(vault), lambda i: bool(vault.index.paths_by_id(i))
    ):
        result = merge_unmerged(note)
        if result.apart is not None:
            _keep_apart(vault, fixer, note.path, note.ours, result.apart)
            continue
        fixer.edit(note.path, result.text, "git kept one side; both sides merged by the rules")
        if not result.clean:
            report.left.append(
                (note.path, f"conflict in {', '.join(result.conflicts)}: resolve the marked lines")
            )


def _fix(vault: VaultContext, fixer: _Fixer, report: FixReport) -> None:
    _fix_unmerged(vault, fixer, report)
    groups = shared_id_groups(vault.index)
    bases = unmerged_bases(vault) if groups else {}
    grouped = {p for paths in groups.values() for p in paths}
    conflicted = [
        str(row[0])
        for row in vault.index.conn.execute(
            "SELECT path FROM notes WHERE type IN ('memory', 'box', 'trace') AND problems LIKE ? "
            "ORDER BY path",
            (f"%{CONFLICT_PROBLEM}%",),
        )
    ]
    for path in conflicted:
        if path in grouped:
            continue
        try:
            if _split_two_memories(vault, fixer, path):
                continue
            text, why = resolve_markers(read_note(vault.root / path).text)
        except VaultmemError as err:
            report.left.append((path, str(err)))
            continue
        if text is None:
            report.left.append((path, why))
        else:
            fixer.edit(path, text, "conflicted properties merged by the merge driver's rules")
    for note_id, paths in groups.items():
        try:
            base = bases.get(note_id) or base_from_history(vault.root, note_id)
            _fix_group(vault, fixer, paths, base)
        except (VaultmemError, FrontmatterError, OSError) as err:
            report.left.append((paths[0], f"{err} (shared id with {', '.join(paths[1:])})"))


def _split_two_memories(vault: VaultContext, fixer: _Fixer, path: str) -> bool:
    """A note whose conflict sides hold different memory ids (git's add/add merged without the
    driver): ours stays at ``path``, theirs becomes ``<title> 2.md`` beside it. True if split."""
    text = read_note(vault.root / path).text
    ours, _, theirs = conflict_sides(text)
    o, t = _frontmatter(ours), _frontmatter(theirs)
    if o is None or t is None or not o.get("id") or not t.get("id") or o["id"] == t["id"]:
        return False
    _keep_apart(vault, fixer, path, ours, theirs)
    return True


def _keep_apart(vault: VaultContext, fixer: _Fixer, path: str, ours: str, theirs: str) -> None:
    """Ours stays at ``path``; theirs, another memory, becomes ``<title> 2.md`` beside it."""
    folder, _, name = path.rpartition("/")
    taken: set[str] = set()  # written by this fix, not indexed yet
    while True:
        title = unique_title(vault.index, name.removesuffix(".md"), taken)
        other = f"{folder}/{title}.md" if folder else f"{title}.md"
        if not (vault.root / other).exists() and not (vault.root / other).is_symlink():
            break
        taken.add(note_key(title + ".md"))
    fixer.edit(path, ours, f"two memories in one note: kept id {_id_of(ours)} here")
    fixer.create(other, theirs, f"two memories in one note: id {_id_of(theirs)} moved here")


def _fix_group(vault: VaultContext, fixer: _Fixer, paths: list[str], base: str | None) -> None:
    texts: dict[str, str] = {}
    copies = copies_in(paths)
    same = [p for p in paths if p not in copies]
    for path in paths:
        text = read_note(vault.root / path).text
        if find_conflict_markers(text):
            keep = _winner(vault, same) if path in same else path

            def prefer(ours_fm: dict[str, Any], theirs_fm: dict[str, Any], keep: str = keep) -> str:
                o, t = _side_score(vault, keep, ours_fm), _side_score(vault, keep, theirs_fm)
                return "theirs" if t > o else "ours"

            resolved, why = resolve_markers(text, prefer)
            if resolved is None:
                raise VaultmemError(f"{path}: {why}")
            text = resolved
        texts[path] = text
    if len(same) > 1:
        _merge_group(vault, fixer, same, texts, base)
    elif texts[same[0]] != read_note(vault.root / same[0]).text:
        fixer.edit(same[0], texts[same[0]], "conflicted properties merged")
    for copy in copies:
        fresh = new_id()
        fixer.edit(
            copy,
            set_fields(texts[copy], {"id": fresh}),
            f"a copy of {same[0] if len(same) == 1 else 'another note'}: new id {fresh} "
            f"(was {_id_of(texts[copy])})",
        )
