"""Lifecycle commands: lifecycle, seal, promote, expire, gc, prune, forget, undo."""

from __future__ import annotations

import datetime as dt

import click

from vaultmem.cli.common import (
    dry_run_option,
    json_option,
    now_option,
    print_json,
    progress_shown,
    vault_command,
    with_error,
)
from vaultmem.core.lifecycle.lifecycle_plan import PASS_ORDER, Move
from vaultmem.errors import InputError
from vaultmem.services.lifecycle.lifecycle import LifecycleRun
from vaultmem.services.lifecycle.pass_commands import check_threshold
from vaultmem.services.lifecycle.pass_session import PassResult
from vaultmem.services.vault import Vault

VERBS = {
    "seal": ("seal", "sealed"),
    "promote": ("promote", "promoted"),
    "archive": ("archive", "archived"),
    "delete": ("delete", "deleted"),
    "edit": ("edit", "edited"),
}


def _move_line(move: Move, dry_run: bool) -> str:
    verb, past = VERBS.get(move.action, (move.action, move.action))
    where = f" → {move.destination}" if move.destination else ""
    return (
        f"{'would ' + verb if dry_run else past} {move.path}{where}  ({move.rule}: {move.reason})"
    )


def _not_committed(commit: bool) -> str:
    """What a dry run adds when ``--commit`` was asked for too (said, not silently skipped)."""
    return ", nothing committed" if commit else ""


def print_pass(result: PassResult, as_json: bool, verb: str, *, commit: bool = False) -> None:
    """A pass's plan or outcome: one line per note with its rule and numbers."""
    if as_json:
        print_json(result.as_dict())
        return
    moves = result.planned if result.dry_run else result.applied
    if moves:  # one write: 50,000 lines echoed one by one took 0.4 s
        click.echo("\n".join(_move_line(move, result.dry_run) for move in moves))
    for move, why in result.skipped:
        click.echo(f"skipped {move.path}: {why}", err=True)
    for line in result.late_saves:
        click.echo(f"kept a late save: {line}")
    if not moves:
        click.echo(f"nothing to {verb}")
    elif result.dry_run:
        click.echo(f"(dry run: {len(moves)} planned, nothing changed{_not_committed(commit)})")


def print_run(run: LifecycleRun, as_json: bool, *, commit: bool = False) -> None:
    """The run's report, always printed; then a failed ``--commit`` exits 1 saying what to do."""
    if as_json:
        print_json(with_error(run.as_dict(), run.commit_error))
        if run.commit_error:
            raise SystemExit(1)
        return
    for name in run.recovered:
        click.echo(f"finished an interrupted pass first ({name})")
    for result in run.results:
        moves = result.planned if result.dry_run else result.applied
        click.echo(f"{result.name}: {len(moves)} {'planned' if result.dry_run else 'applied'}")
        if moves:  # one write: 50,000 lines echoed one by one took 0.4 s
            click.echo("\n".join("  " + _move_line(move, result.dry_run) for move in moves))
        for move, why in result.skipped:
            click.echo(f"  skipped {move.path}: {why}", err=True)
    for line in run.late_saves:
        click.echo(f"kept a late save: {line}")
    if run.dry_run:
        click.echo(f"(dry run: nothing changed{_not_committed(commit)})")
    elif run.journal:
        click.echo(f"journal: .vaultmem/journal/{run.journal} (vaultmem undo reverts it)")
    if run.commit:
        click.echo(f"committed {run.commit[:12]}")
    if run.commit_error:
        raise click.ClickException(run.commit_error)


def _confirm_hard(planned: list[Move]) -> None:
    """Ask before a ``--hard`` run deletes: ``planned`` is its dry run (the same options, so it
    lists exactly the notes the run deletes); nothing to delete, nothing asked."""
    doomed = [m for m in planned if m.action == "delete"]
    if not doomed:
        return
    for move in doomed:
        click.echo(f"would delete {move.path}  ({move.reason})", err=True)
    these = "this note" if len(doomed) == 1 else f"these {len(doomed)} notes"
    if not click.confirm(f"Delete {these} for good?", err=True):
        raise click.ClickException("nothing deleted")


def _yes_needs_hard(yes: bool, hard: bool) -> None:
    """``--yes`` only answers the question ``--hard`` asks: alone it would do nothing."""
    if yes and not hard:
        raise click.UsageError("--yes goes with --hard (it skips the question before deleting)")


def _parse_threshold(
    ctx: click.Context, param: click.Parameter, value: float | None
) -> float | None:
    try:
        check_threshold(value)
    except InputError:
        raise click.BadParameter(
            f"{value!r} is not a decay score (a finite number ≥ 0, such as 0.05)"
        ) from None
    return value


commit_option = click.option(
    "--commit",
    is_flag=True,
    help="Commit exactly this pass's changes with a message saying why (refused, nothing "
    "changed, when the vault is not in a git repository).",
)


@click.command()
@click.option("--hard", is_flag=True, help="Forget by deleting instead of archiving.")
@click.option(
    "--yes", is_flag=True, help="Do not ask before --hard deletes (refused without --hard)."
)
@commit_option
@dry_run_option
@json_option
@now_option
@vault_command
def lifecycle(
    vault: Vault,
    hard: bool,
    yes: bool,
    commit: bool,
    dry_run: bool,
    as_json: bool,
    now: dt.datetime,
) -> None:
    """Run every pass in order: seal boxes, promote, expire, forget, prune.

    Each pass is planned from the index, printed with a reason per note, then applied (unless
    --dry-run) as one journaled step that `vaultmem undo` reverses. Only one pass runs at a time.
    """
    _yes_needs_hard(yes, hard)
    if hard and not dry_run and not yes:
        preview = vault.lifecycle(PASS_ORDER, dry_run=True, now=now, hard=True)
        _confirm_hard([m for r in preview.results for m in r.planned])
    with progress_shown(as_json):
        run = vault.lifecycle(
            PASS_ORDER, dry_run=dry_run, now=now, hard=hard, commit=commit, command="lifecycle"
        )
    print_run(run, as_json, commit=commit)


def _single_pass(name: str, doc: str) -> click.Command:
    @click.command(name=name, help=doc)
    @commit_option
    @dry_run_option
    @json_option
    @now_option
    @vault_command
    def command(vault: Vault, commit: bool, dry_run: bool, as_json: bool, now: dt.datetime) -> None:
        with progress_shown(as_json):
            run = vault.lifecycle((name,), dry_run=dry_run, now=now, commit=commit)
        if as_json or run.commit or run.commit_error:
            print_run(run, as_json)
        else:
            print_pass(run.results[0], as_json, VERBS.get(name, (name, name))[0], commit=commit)

    return command


seal = _single_pass(
    "seal",
    """Seal memory boxes: episodes of STM memories become boxes (docs/user-guide.md, Lifecycle).

Memories made at most 45 minutes apart are one episode (a conversation or work session); once it
is over it becomes a box, split only where the topics change entirely (never into a box of one).
A memory alone in its episode stays in STM. Members move into the box's folder (layer
episodic); boxes with shared topics are woven into traces.""",
)
expire = _single_pass(
    "expire",
    """Archive expired memories: speculative, resolved, superseded (docs/user-guide.md, Lifecycle).

Speculative memories (confidence < 0.40) older than 30 days that were never confirmed,
commitments resolved more than 90 days ago, and memories a correction superseded more than 14
days ago.""",
)
prune = _single_pass(
    "prune",
    """Prune to the cap of active memories (docs/user-guide.md, Lifecycle).

When active memories exceed max_active (1000), archive the lowest effective importance, 10 per
batch; never pinned or immune memories, never one younger than 24 hours.""",
)


@click.command()
@click.option(
    "--threshold",
    type=float,
    callback=_parse_threshold,
    help="Forget below this score, a number ≥ 0 (default [thresholds] forget, 0.05).",
)
@click.option(
    "--keep",
    multiple=True,
    metavar="ID",
    help="Reinforce this memory (use_count + 3) and keep it. Repeatable.",
)
@dry_run_option
@click.option("--hard", is_flag=True, help="Delete the notes instead of moving them to Archive/.")
@click.option(
    "--yes", is_flag=True, help="Do not ask before --hard deletes (refused without --hard)."
)
@json_option
@now_option
@vault_command
def gc(
    vault: Vault,
    threshold: float | None,
    keep: tuple[str, ...],
    dry_run: bool,
    hard: bool,
    yes: bool,
    as_json: bool,
    now: dt.datetime,
) -> None:
    """Forget faded memories: archive those scoring below the threshold (docs/user-guide.md).

    Pinned memories, importance level ≥ 4, access_count ≥ 3 and semantic/procedural memories are
    immune. Archived notes keep their name and id in Archive/; --hard deletes them.
    """
    _yes_needs_hard(yes, hard)
    if hard and not dry_run and not yes:
        preview = vault.gc(threshold=threshold, keep=keep, dry_run=True, hard=True, now=now)
        _confirm_hard(preview.planned)
    with progress_shown(as_json):
        result = vault.gc(threshold=threshold, keep=keep, dry_run=dry_run, hard=hard, now=now)
    print_pass(result, as_json, "delete" if hard else "archive")


@click.command()
@click.argument("ref", required=False, metavar="[ID]")
@dry_run_option
@json_option
@now_option
@vault_command
def promote(vault: Vault, ref: str | None, dry_run: bool, as_json: bool, now: dt.datetime) -> None:
    """Move memories used on several days to LTM/ (docs/user-guide.md, Promotion) — or just ID.

    A candidate scores ≥ 0.65 and is at least 3 days old, or was used 5 times within 14 days of
    its creation, or is episodic with importance ≥ 0.7 and 5 accesses. ID is promoted even when it
    is not a candidate; refused (exit 1, a dry run too) for box and trace notes, memories already
    promoted, archived or superseded, and a note it cannot move: a value it cannot read, YAML
    that does not parse, conflict markers, its name taken in LTM/.
    """
    with progress_shown(as_json):
        result = vault.promote(ref, dry_run=dry_run, now=now)
    print_pass(result, as_json, "promote")


@click.command()
@click.argument("ref", metavar="ID_OR_TITLE")
@dry_run_option
@json_option
@now_option
@vault_command
def forget(vault: Vault, ref: str, dry_run: bool, as_json: bool, now: dt.datetime) -> None:
    """Archive one memory now: to Archive/, status archived, archived_at set.

    Journaled like a pass: `vaultmem undo` puts it back exactly. Refuses (a dry run too) pinned
    and already archived memories, notes that are not memories, and notes with conflict markers,
    YAML that does not parse or a value it cannot read. Waits up to 10 s for a running pass.
    """
    print_pass(vault.forget(ref, dry_run=dry_run, now=now), as_json, "forget")


def _print_journal(rows: list[dict[str, object]], as_json: bool) -> None:
    if as_json:
        print_json({"entries": rows})
        return
    if not rows:
        click.echo("the journal is empty: nothing has been applied in this vault")
        return
    for row in rows:
        who = str(row["who"] or "?") + (f" {str(row['session'])[:8]}" if row["session"] else "")
        click.echo(
            f"{row['entry']}  {row['state']:<11} {row['command']:<11} by {who:<13} "
            f"{row['operations']} files  {row['started'] or '?'}"
        )


@click.command()
@click.argument("entry", required=False, metavar="[ENTRY]")
@click.option(
    "--list",
    "list_only",
    is_flag=True,
    help="List the journal's entries (newest first) instead; refused with ENTRY, --commit or "
    "--no-commit.",
)
@click.option(
    "--commit/--no-commit",
    default=None,
    help="Commit the reverted files (only those; --commit is refused, nothing changed, outside "
    "a git repository). Default: commit when the pass's files were committed (lifecycle "
    "--commit), so the tree stays clean.",
)
@json_option
@vault_command
def undo(
    vault: Vault, entry: str | None, list_only: bool, commit: bool | None, as_json: bool
) -> None:
    """Reverse the last applied pass (or ENTRY) exactly: files and edited lines back as they were.

    Refuses, naming the note, when a note changed after the pass. `--list` shows each entry of
    the journal: its name, state (undoable, undone, interrupted), command, who ran it (cli, cron:
    no terminal, mcp with its session; VAULTMEM_ACTOR names it), files and start time. ENTRY may
    be any unique start of a name.
    """
    if list_only:
        if entry is not None:
            raise click.UsageError("--list lists every entry: give ENTRY or --list, not both")
        if commit is not None:
            option = "--commit" if commit else "--no-commit"
            raise click.UsageError(f"--list changes nothing to commit: drop {option}")
        _print_journal(vault.journal(), as_json)
        return
    with progress_shown(as_json):
        report = vault.undo(entry, commit=commit)
    if as_json:  # one object: the report, with the error added when the commit failed
        print_json(with_error(report.as_dict(), report.commit_error))
        if report.commit_error:
            raise SystemExit(1)
        return
    for item in report.restored:
        if item["operation"] == "create":
            click.echo(f"removed {item['from']}  (the pass had created it)")
        elif item["operation"] == "move":
            click.echo(f"restored {item['to']}  (back from {item['from']})")
        else:
            click.echo(f"restored {item['to']}")
    click.echo(f"undid {report.command} ({report.journal})")
    if report.commit:
        click.echo(f"committed {report.commit[:12]}")
    if report.commit_error:
        raise click.ClickException(report.commit_error)
