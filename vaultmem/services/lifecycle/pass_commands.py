"""The lifecycle commands: run passes, promote or forget one memory, gc, and undo the last run.

Each runs as one journaled, undoable step (docs/user-guide.md, "Lifecycle" and "Journal, undo
and safety"); after it, folders the moves emptied are removed, and with ``commit`` in a git
repository exactly its files are committed (docs/user-guide.md, "Daily passes and commits"). A
git failure is reported with the run; the change on disk stands.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vaultmem.core.notes.timestamps import given_now
from vaultmem.errors import InputError, NoteError, VaultmemError
from vaultmem.services.memories.memory_edits import check_writable, writable_memories
from vaultmem.services.memories.memory_lookup import managed_path, memory_path
from vaultmem.store.confinement import left_in_place_warning
from vaultmem.store.vault_lock import vault_lock
from vaultmem.store.vault_paths import confined_free

if TYPE_CHECKING:
    from vaultmem.services.lifecycle.lifecycle import LifecycleRun
    from vaultmem.services.lifecycle.pass_session import PassResult
    from vaultmem.services.lifecycle.undo import UndoReport
    from vaultmem.services.vault_context import VaultContext
    from vaultmem.store.journal_check import JournalEntry


def promote_memories(
    vault: VaultContext,
    ref: str | None = None,
    *,
    dry_run: bool = False,
    now: dt.datetime | None = None,
) -> PassResult:
    """Promote ("Lifecycle"): move promotion candidates to LTM/ — or the one memory ``ref``.

    A named memory that is not a candidate is promoted anyway (the person asked), with the
    reason "promoted on request". Raises :class:`NoteNotFoundError`,
    :class:`AmbiguousNoteError`, or :class:`InputError` when ``ref`` is not a memory (a box or
    trace note, a person's own note), is promoted already, archived or superseded, or is a
    symbolic link; :class:`UnsafeNoteError` when its note must not be written (conflict
    markers, unparsable YAML, non-UTF-8 bytes, a value that cannot be read); :class:`NoteError`
    when its name is taken in LTM/; and :class:`VaultmemError` naming the reason when the run
    skipped it (it shares its id with another note, or changed meanwhile). Nothing is changed
    then (a dry run refuses the same, but for a change made meanwhile).
    """
    from vaultmem.services.lifecycle.lifecycle import on_request_promotion, plan_pass
    from vaultmem.services.lifecycle.pass_session import PassSession
    from vaultmem.services.sync.shared_ids import hold_shared, shared_id_paths

    when = given_now(now)
    if ref is None:
        return run_lifecycle(vault, ("promote",), dry_run=dry_run, now=when).results[0]
    path = memory_path(vault, ref, "not promoted")
    if os.path.islink(vault.root / path):
        raise InputError(left_in_place_warning(path))
    row = vault.index.note_row(path) or {}
    if row.get("status") == "promoted":
        raise InputError(f"{path} is promoted already (status promoted); nothing to promote")
    if row.get("status") == "superseded":
        raise InputError(
            f"{path} is superseded by {row.get('superseded_by') or 'a correction'}"
            "; a superseded memory is never promoted (promote its successor)"
        )
    # a dry run refuses what the run would skip: a note it must not write, a name taken
    check_writable(vault, path, "not promoted")
    destination = on_request_promotion(vault, path, when).destination or path
    if confined_free(vault.root, destination) is None:
        raise NoteError(destination, f"already exists; {path} not promoted (rename one of them)")
    with PassSession(vault, "promote", when, dry_run=dry_run) as session:
        result = plan_pass(vault, "promote", when)
        result.planned = [m for m in result.planned if m.path == path]
        if not result.planned:
            result.planned = [on_request_promotion(vault, path, when)]
        hold_shared(result.planned, result.skipped, shared_id_paths(vault.index))
        session.run(result)
    result.late_saves = session.late_save_lines()
    if result.skipped:  # the note asked for was not promoted: say why, exit 1
        raise VaultmemError(result.skipped[0][1])  # "<path>: <why>"; nothing was changed
    return result


def forget_memory(
    vault: VaultContext, ref: str, *, dry_run: bool = False, now: dt.datetime | None = None
) -> PassResult:
    """Archive one memory now: move it to Archive/, ``status: archived``, ``archived_at``.

    Journaled like a pass, so ``vaultmem undo`` puts it back exactly. Waits up to
    ``vault.lock_wait_seconds`` for a running pass. Raises :class:`NoteNotFoundError`,
    :class:`AmbiguousNoteError`, :class:`InputError` (not a memory, already archived,
    pinned), :class:`UnsafeNoteError` (conflict markers, unparsable YAML, non-UTF-8 bytes, a
    value that cannot be read; a dry run too) or :class:`LockedError`; nothing is changed then.
    """
    from vaultmem.services.lifecycle.lifecycle import on_request_archival
    from vaultmem.services.lifecycle.pass_session import PassResult, PassSession

    when = given_now(now)
    path = managed_path(vault, ref, "not archived")
    move = on_request_archival(vault, path, when)
    check_writable(vault, path, "not archived")  # a dry run refuses what the run refuses
    waiting = (
        contextlib.nullcontext()
        if dry_run
        else vault_lock(vault.sidecar, timeout_seconds=vault.lock_wait_seconds)
    )
    with waiting, PassSession(vault, "forget", when, dry_run=dry_run) as session:
        result = session.run(PassResult("forget", [move], dry_run=dry_run))
    result.late_saves = session.late_save_lines()
    if result.skipped:
        raise VaultmemError(result.skipped[0][1])  # "<path>: <why>"; nothing was changed
    return result


def check_threshold(threshold: object) -> None:
    """Refuse a forget ``threshold`` that is not a decay score: ``None`` (the default,
    ``[thresholds] forget``) or a finite number ≥ 0 ("Scores": a score is never negative, and a
    fresh memory used once scores 1.0). Raises :class:`InputError` naming the value."""
    if threshold is None:
        return
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not math.isfinite(threshold)
        or threshold < 0
    ):
        raise InputError(
            f"threshold must be a decay score, a finite number ≥ 0 such as 0.05, not {threshold!r}"
        )


def collect_garbage(
    vault: VaultContext,
    *,
    threshold: float | None = None,
    keep: Sequence[str] = (),
    dry_run: bool = False,
    hard: bool = False,
    now: dt.datetime | None = None,
) -> PassResult:
    """Forget ("Lifecycle"): archive memories scoring below ``threshold``; ``hard`` deletes.

    ``keep`` ids/titles are reinforced first (``use_count += 3``, as Mnemon does) and left
    alone. Raises, before anything changes (a dry run too): :class:`InputError` for a
    ``threshold`` that is not a finite number ≥ 0 and for a ``keep`` that is not a memory or is
    archived; :class:`UnsafeNoteError` for a ``keep`` whose note must not be written (conflict
    markers, unparsable YAML, non-UTF-8 bytes, a value that cannot be read). Every ``keep`` is
    checked before any is written.
    """
    check_threshold(threshold)
    now = given_now(now)
    kept = tuple(writable_memories(vault, keep, "not kept; nothing was changed", "kept once"))
    run = run_lifecycle(
        vault,
        ("forget",),
        dry_run=dry_run,
        now=now,
        threshold=threshold,
        hard=hard,
        keep=kept,
        command="gc",
    )
    result = run.results[0]
    result.late_saves = run.late_saves
    return result


def run_lifecycle(
    vault: VaultContext,
    passes: Sequence[str] | None = None,
    *,
    dry_run: bool = False,
    now: dt.datetime | None = None,
    threshold: float | None = None,
    hard: bool = False,
    keep: Sequence[str] = (),
    command: str | None = None,
    commit: bool = False,
) -> LifecycleRun:
    """Run lifecycle passes (seal, promote, expire, forget, prune) as one undoable step.

    ``passes``: which, run in ``PASS_ORDER`` (default ``None``: every pass); one name alone may
    be a string. An empty sequence or an unknown name raises :class:`InputError`, and so do a
    ``threshold`` that is not a finite number ≥ 0 (:func:`check_threshold`) and a ``now`` that
    is not a datetime (one without a time zone is UTC: ``given_now``); nothing changes.

    Raises :class:`LockedError` when another pass is running. With ``commit`` in a git
    repository, the pass's changes (and only those) are committed with a message that counts
    what moved and why; outside one, ``commit`` raises :class:`InputError` before anything
    changes (a dry run too: it shows what the real run would do).
    """
    from vaultmem.core.lifecycle.lifecycle_plan import PASS_ORDER
    from vaultmem.services.lifecycle.emptied_folders import places_left, remove_emptied_folders
    from vaultmem.services.lifecycle.lifecycle import run_passes
    from vaultmem.services.sync.git_commit import commit_run, require_work_tree

    if passes is None:
        passes = PASS_ORDER
    elif isinstance(passes, str):  # lifecycle("forget"): one pass, not the letters of its name
        passes = (passes,)
    names = ", ".join(PASS_ORDER)
    if not passes:
        raise InputError(
            f"no passes given: name one or more of {names}, or leave them out to run all"
        )
    unknown = [p for p in passes if p not in PASS_ORDER]
    if unknown:
        raise InputError(f"unknown pass {unknown[0]!r}; passes: {names}")
    check_threshold(threshold)
    when = given_now(now)
    if commit:
        require_work_tree(vault.root)
    run = run_passes(
        vault,
        tuple(passes),
        when,
        dry_run=dry_run,
        threshold=threshold,
        hard=hard,
        keep=tuple(keep),
        command=command,
    )
    if not dry_run and run.touched:
        kept = places_left(move for result in run.results for move in result.applied)
        remove_emptied_folders(vault.root, run.touched, vault.folders(), kept)
    if commit and not dry_run and run.touched:
        try:
            run.commit = commit_run(vault.root, run)
        except VaultmemError as err:  # the pass stands; say so and what to do
            run.commit_error = (
                f"{err}. The pass was applied but not committed; commit its files by hand "
                "(git add -A <folders> && git commit) or run `vaultmem undo`"
            )
    return run


def undo_last_run(
    vault: VaultContext,
    ref: str | None = None,
    *,
    commit: bool | None = None,
    session: str | None = None,
) -> UndoReport:
    """Reverse the journal entry ``ref`` (default: the last applied pass) exactly; refuses,
    naming it, if a note changed (:func:`~vaultmem.services.lifecycle.undo.undo_entry`, which also
    says what ``session`` does and how progress is reported).

    See docs/user-guide.md, "Journal, undo and safety".

    ``commit``: in a git repository, commit the reversal (only its files). ``None`` (default):
    commit it when the pass's files were committed as the pass left them (``lifecycle
    --commit``), so the tree stays as clean as it was; ``False``: never. ``True`` outside a
    git work tree raises :class:`InputError` before anything changes. A git failure is
    reported in ``report.commit_error`` and the files stay reverted.
    """
    from vaultmem.services.lifecycle.emptied_folders import remove_emptied_folders
    from vaultmem.services.lifecycle.undo import undo_entry
    from vaultmem.services.sync.git_commit import commit_paths, committed_as_is, require_work_tree

    if commit:
        require_work_tree(vault.root)

    committed = False

    def check(entry: JournalEntry) -> None:
        nonlocal committed
        if commit is None:
            paths = [p for op in entry.operations for p in (op.source, op.target) if p]
            committed = committed_as_is(vault.root, paths)

    report = undo_entry(vault, ref, session=session, before=check)
    vault.catch_up()
    paths = [p for item in report.restored for p in (item["from"], item["to"]) if p]
    remove_emptied_folders(vault.root, paths, vault.folders())
    if commit or (commit is None and committed):
        try:
            report.commit = commit_paths(
                vault.root,
                paths,
                f"vaultmem undo: reverted {report.command} ({report.journal})\n",
            )
        except VaultmemError as err:
            report.commit_error = f"{err}. The undo was done but not committed"
    return report


__all__ = [
    "check_threshold",
    "collect_garbage",
    "forget_memory",
    "promote_memories",
    "run_lifecycle",
    "undo_last_run",
]
