"""Commands over the whole vault: init, list, status, gc, promote."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from vaultmem.cli.common import (
    dry_run_option,
    fmt_score,
    json_option,
    library_errors,
    now_option,
    print_json,
    vault_command,
)
from vaultmem.core.fields import LAYERS, STATUSES
from vaultmem.services.lifecycle import PassResult
from vaultmem.services.memory_view import SORT_KEYS
from vaultmem.services.vault import Vault


@click.command()
@click.argument("path", default=".", type=click.Path(file_okay=False, path_type=Path))
@json_option
def init(path: Path, as_json: bool) -> None:
    """Make PATH (default: here) a vaultmem vault.

    An empty or new folder gets the whole template (folders, vaultmem.toml, .gitignore,
    .obsidian/types.json, a note template, a dashboard). In an existing Obsidian vault only the
    missing files are added; none of its notes or settings files is changed.
    """
    with library_errors():
        vault, created = Vault.init(path)
    if as_json:
        print_json({"vault": str(vault.root), "created": created})
        return
    click.echo(f"vault ready at {vault.root}")
    for rel in created:
        click.echo(f"  + {rel}")
    if not created:
        click.echo("  (nothing to add: it already was a vaultmem vault)")


@click.command("list")
@click.option("--status", type=click.Choice(STATUSES), help="Only memories with this status.")
@click.option("--layer", type=click.Choice(LAYERS), help="Only memories in this layer.")
@click.option("--tag", help="Only memories with this tag.")
@click.option("--folder", help="Only memories under this vault folder, e.g. STM.")
@click.option("--sort", type=click.Choice(SORT_KEYS), default="score", show_default=True,
              help="Order (score, ei and dates descending; title ascending).")
@click.option("--limit", type=click.IntRange(min=1), help="Show at most this many.")
@json_option
@now_option
@vault_command
def list_(vault: Vault, as_json: bool, now: dt.datetime, **filters: object) -> None:
    """List memories with their score, EI and review priority."""
    rows = vault.memories(now=now, **filters)  # type: ignore[arg-type]
    if as_json:
        print_json([row.as_dict() for row in rows])
        return
    if not rows:
        click.echo("no memories match")
        return
    click.echo(f"{'score':>7} {'EI':>6} {'uses':>4}  {'status':<9} {'layer':<10} path")
    for row in rows:
        click.echo(
            f"{fmt_score(row.score):>7} {row.effective_importance:>6.3f} {row.use_count:>4}  "
            f"{row.status:<9} {row.layer:<10} {row.path}"
        )


@click.command()
@json_option
@now_option
@vault_command
def status(vault: Vault, as_json: bool, now: dt.datetime) -> None:
    """Counts per folder and status, the danger zone, and what gc and promote would move now."""
    report = vault.status(now=now)
    if as_json:
        print_json(report.as_dict())
        return
    click.echo(f"{report.memories} memories among {report.notes} notes in {vault.root}")
    for title, counts in (("folder", report.by_folder), ("status", report.by_status),
                          ("layer", report.by_layer)):
        click.echo(f"  by {title}: " + (", ".join(f"{k} {v}" for k, v in counts.items()) or "—"))
    click.echo(f"  danger zone (review soon): {report.danger_zone}")
    click.echo(f"  would be forgotten now: {report.would_forget}")
    click.echo(f"  would be promoted now: {report.would_promote}")


def print_pass(result: PassResult, as_json: bool, verb: str, past: str) -> None:
    """A pass's plan or outcome: one line per note with its rule and numbers."""
    if as_json:
        print_json(result.as_dict())
        return
    moves = result.planned if result.dry_run else result.applied
    lead = f"would {verb}" if result.dry_run else past
    for move in moves:
        where = f" → {move.destination}" if move.destination else ""
        click.echo(f"{lead} {move.path}{where}  ({move.rule}: {move.reason})")
    for move, why in result.skipped:
        click.echo(f"skipped {move.path}: {why}", err=True)
    if not moves:
        click.echo(f"nothing to {verb}")
    elif result.dry_run:
        click.echo(f"(dry run: {len(moves)} planned, nothing changed)")


@click.command()
@click.option("--threshold", type=float, help="Forget below this score (default [thresholds] forget, 0.05).")
@click.option("--keep", multiple=True, metavar="ID", help="Reinforce this memory (use_count + 3) and keep it. Repeatable.")
@dry_run_option
@click.option("--hard", is_flag=True, help="Delete the notes instead of moving them to Archive/.")
@click.option("--yes", is_flag=True, help="Do not ask before --hard deletes.")
@json_option
@now_option
@vault_command
def gc(vault: Vault, threshold: float | None, keep: tuple[str, ...], dry_run: bool, hard: bool,
       yes: bool, as_json: bool, now: dt.datetime) -> None:
    """Forget faded memories: archive those scoring below the threshold (spec 4, rule 4).

    Pinned memories, importance level ≥ 4, access_count ≥ 3 and semantic/procedural memories are
    immune. Archived notes keep their name and id in Archive/; --hard deletes them.
    """
    if hard and not dry_run and not yes:
        preview = vault.gc(threshold=threshold, keep=(), dry_run=True, hard=True, now=now)
        if not preview.planned:
            print_pass(preview, as_json, "delete", "deleted")
            return
        for move in preview.planned:
            click.echo(f"would delete {move.path}  ({move.reason})", err=True)
        if not click.confirm(f"Delete these {len(preview.planned)} notes for good?", err=True):
            raise click.ClickException("nothing deleted")
    result = vault.gc(threshold=threshold, keep=keep, dry_run=dry_run, hard=hard, now=now)
    print_pass(result, as_json, *(("delete", "deleted") if hard else ("archive", "archived")))


@click.command()
@click.argument("ref", required=False, metavar="[ID]")
@dry_run_option
@json_option
@now_option
@vault_command
def promote(vault: Vault, ref: str | None, dry_run: bool, as_json: bool, now: dt.datetime) -> None:
    """Move memories that earned it to LTM/ (spec 4, rule 2) — or just memory ID.

    A candidate scores ≥ 0.65 and is at least 3 days old, or was used 5 times within 14 days of
    its creation, or is episodic with importance ≥ 0.7 and 5 accesses.
    """
    print_pass(vault.promote(ref, dry_run=dry_run, now=now), as_json, "promote", "promoted")
