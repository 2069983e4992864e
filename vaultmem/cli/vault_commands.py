"""Commands over the whole vault: init, list, status."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click

from vaultmem.cli.common import (
    UserPath,
    counted,
    fmt_score,
    json_option,
    library_errors,
    now_option,
    print_json,
    refused_by,
    vault_command,
)
from vaultmem.core.notes.fields import LAYERS, STATUSES
from vaultmem.services.index.note_filters import checked_tag, folder_parts
from vaultmem.services.memories.memory_view import SORT_KEYS
from vaultmem.services.sync.git_setup import in_git_repository, setup_git
from vaultmem.services.vault import Vault


@click.command()
@click.argument("path", default=".", type=UserPath(file_okay=False, path_type=str))
@click.option(
    "--git",
    "use_git",
    is_flag=True,
    help="Also set the vault up for git sync: .gitattributes lines for the memory folders and "
    "the merge driver registered in this clone's git config (run it again in every new clone).",
)
@json_option
def init(path: str, use_git: bool, as_json: bool) -> None:
    """Make PATH (default: here) a vaultmem vault.

    An empty or new folder gets the whole template (folders, vaultmem.toml, .gitignore,
    .obsidian/types.json, a note template, a dashboard). In an existing Obsidian vault only the
    missing files are added, and vaultmem's property types missing from .obsidian/types.json;
    a type the vault declares otherwise is kept and named in a warning. No note is changed.
    With --git, PATH must lie in a git repository: outside one nothing is created.
    """
    if not path.strip():
        raise click.BadParameter("is empty; give a folder (. for this one)", param_hint="PATH")
    if use_git and not in_git_repository(_nearest_folder(Path(path))):
        raise click.ClickException(
            f"{path} is not in a git repository, so --git cannot set it up: run `git init` (or "
            "clone the vault) first, or drop --git (nothing was created)"
        )
    git_done: list[str] = []
    with library_errors():
        vault, created = Vault.init(path)
        if use_git:
            git_done = setup_git(vault.root, vault.settings)
    for warning in vault.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        print_json(
            {"vault": str(vault.root), "created": created, "git": git_done,
             "warnings": vault.warnings}
        )
        return
    click.echo(f"vault ready at {vault.root}")
    for rel in created:
        click.echo(f"  + {rel}")
    if not created:
        click.echo("  (nothing to add: it already was a vaultmem vault)")
    for line in git_done:
        click.echo(f"  git: {line}")
    if use_git and not git_done:
        click.echo("  git: already set up (attributes and merge driver in place)")


def _nearest_folder(path: Path) -> Path:
    """``path``, or its nearest parent that exists (``init`` may make the folder)."""
    path = path.absolute()
    while not path.is_dir() and path != path.parent:
        path = path.parent
    return path


@click.command("list")
@click.option("--status", type=click.Choice(STATUSES), help="Only memories with this status.")
@click.option("--layer", type=click.Choice(LAYERS), help="Only memories in this layer.")
@click.option("--tag", callback=refused_by(checked_tag),
              help="Only memories with this tag or one nested in it (project: project/a).")
@click.option("--folder", callback=refused_by(folder_parts),
              help="Only memories under this vault folder, e.g. STM.")
@click.option(
    "--sort",
    type=click.Choice(SORT_KEYS),
    default="score",
    show_default=True,
    help="Order (score, ei and dates descending; title ascending).",
)
@click.option("--limit", type=click.IntRange(min=1), help="Show at most this many.")
@json_option
@now_option
@vault_command
def list_(vault: Vault, as_json: bool, now: dt.datetime, **filters: object) -> None:
    """List memories with their score, EI and review priority."""
    rows = vault.memories(now=now, **filters)  # type: ignore[arg-type]
    if as_json:
        print_json({"memories": [row.as_dict() for row in rows]})
        return
    if not rows:
        click.echo("no memories match")
        return
    click.echo(f"{'score':>7} {'EI':>6} {'uses':>4}  {'status':<9} {'layer':<10} path")
    for row in rows:
        flag = "  [conflicted: git conflict markers]" if row.conflicted else ""
        click.echo(
            f"{fmt_score(row.score):>7} {row.effective_importance:>6.3f} {row.use_count:>4}  "
            f"{row.status:<9} {row.layer:<10} {row.path}{flag}"
        )


ACTION_WORDS = {
    "create": "create",
    "seal": "box",
    "promote": "promote",
    "archive": "archive",
    "delete": "delete",
    "edit": "edit",
}
"""How ``status`` names a planned action (a seal's member moves are "box")."""


@click.command()
@json_option
@now_option
@vault_command
def status(vault: Vault, as_json: bool, now: dt.datetime) -> None:
    """Counts per folder and status, the danger zone, and what the next lifecycle would do.

    The plan is `vaultmem lifecycle --dry-run`'s, counted per pass and action: boxes sealed
    (box = a memory moved into one, create = a new box or trace note), memories promoted,
    expired, forgotten and pruned (archive) under the max_active cap. Nothing is written.
    """
    report = vault.status(now=now)
    if as_json:
        print_json(report.as_dict())
        return
    click.echo(
        f"{counted(report.memories, 'memory', 'memories')} among "
        f"{counted(report.notes, 'note')} in {vault.root}"
    )
    for title, counts in (
        ("folder", report.by_folder),
        ("status", report.by_status),
        ("layer", report.by_layer),
    ):
        click.echo(f"  by {title}: " + (", ".join(f"{k} {v}" for k, v in counts.items()) or "—"))
    click.echo(f"  danger zone (review soon): {report.danger_zone}")
    click.echo("  the next `vaultmem lifecycle` would (its --dry-run lists each note):")
    for name, actions in report.next_pass.items():
        done = ", ".join(
            f"{ACTION_WORDS.get(action, action)} {count}" for action, count in actions.items()
        )
        click.echo(f"    {name + ':':<9} {done or 'nothing'}")
    if report.conflicted:
        click.echo(
            f"  conflicted (git conflict markers, read from their 'ours' side): "
            f"{report.conflicted} — see `vaultmem doctor`"
        )
