"""``embed`` and ``consolidate``: vectors for semantic recall and merging near-duplicates
(optional; ``[embeddings]`` in vaultmem.toml)."""

from __future__ import annotations

import datetime as dt

import click

from vaultmem.cli.common import (
    counted,
    dry_run_option,
    json_option,
    now_option,
    print_json,
    progress_bar,
    progress_shown,
    refuse_now_unless,
    vault_command,
)
from vaultmem.services.semantic.consolidation import consolidate as run_consolidation
from vaultmem.services.semantic.embeddings import embed_notes, embed_status
from vaultmem.services.vault import Vault


@click.command()
@click.argument("ref", required=False)
@click.option(
    "--status",
    "show_status",
    is_flag=True,
    help="Show how many notes have a current vector; embed nothing.",
)
@click.option(
    "--all",
    "all_notes",
    is_flag=True,
    help="Embed every note that has no current vector (unchanged notes are skipped).",
)
@json_option
@now_option
@vault_command
def embed(
    vault: Vault,
    ref: str | None,
    show_status: bool,
    all_notes: bool,
    as_json: bool,
    now: dt.datetime,
) -> None:
    """Embed notes for semantic recall: --status, --all, or one note REF (id, title or path).

    Needs a provider in vaultmem.toml: `[embeddings] provider = "local"` (install the model with
    `pip install 'vaultmem[embeddings]'`) or `provider = "ollama"` (Ollama running with
    nomic-embed-text). Vectors live in .vaultmem/vectors.db, keyed by the note's text, so a note
    is embedded again only when its title or body changed. Without a provider recall uses
    keywords, links and decay only.
    """
    chosen = sum((show_status, all_notes, ref is not None))
    if chosen != 1:
        raise click.UsageError("give exactly one of --status, --all or a note REF")
    refuse_now_unless(all_notes, "--all (it decides which vectors fade to a coarser tier)")
    if show_status:
        status = embed_status(vault)
        if as_json:
            print_json(status.as_dict())
            return
        if status.provider is None:
            click.echo(f"embeddings off: {status.problem}")
            click.echo(f"{status.notes} notes; recall uses keywords, links and decay")
            return
        state = "ready" if status.available else f"unavailable: {status.problem}"
        click.echo(f"provider {status.provider} ({state})")
        click.echo(
            f"{status.notes} notes: {status.embedded} embedded, {status.stale} changed "
            f"since embedded, {status.missing} without a vector"
        )
        for tier, (count, size) in sorted(status.tiers.items()):
            click.echo(f"  {tier:<8} {count:>7} vectors  {size / 1024:9.1f} KiB")
        return
    paths = None if all_notes else [vault.resolve(str(ref))]
    total = vault.index.note_count() if paths is None else 1
    with progress_bar(total, "embedding", as_json=as_json) as bar:
        seen = 0

        def advance(done: int) -> None:
            nonlocal seen
            bar.update(done - seen)
            seen = done

        report = embed_notes(vault, paths, now=now, progress=advance)
    if as_json:
        print_json(report.as_dict())
        return
    rate = report.embedded / report.seconds if report.seconds > 0 else 0.0
    click.echo(
        f"embedded {counted(report.embedded, 'note')} with {report.provider} "
        f"({rate:.0f} notes/s); {report.reused} reused a stored vector, "
        f"{report.unchanged} unchanged"
    )
    if report.retiered:
        click.echo(f"{report.retiered} vectors moved to a coarser tier (faded memories)")


@click.command()
@dry_run_option
@json_option
@now_option
@vault_command
def consolidate(vault: Vault, dry_run: bool, as_json: bool, now: dt.datetime) -> None:
    """Merge near-duplicate memories into one note, keeping the originals (needs `embed --all`).

    Memories whose vectors are closer than cosine 0.83 form clusters (single linkage). A cluster
    of cohesion ≥ 0.9 is merged: a new note (source: consolidation, consolidated_from: links)
    holds their text, and each original gets status: superseded and superseded_by: the new note.
    Clusters of cohesion 0.75–0.9 are listed for review, looser ones kept apart. Nothing is
    deleted; the run is journaled, and `vaultmem undo` restores every byte.
    """
    with progress_shown(as_json):
        report = run_consolidation(vault, now=now, dry_run=dry_run)
    if as_json:
        print_json(report.as_dict())
        return
    if not report.clusters:
        click.echo(
            f"no near-duplicates among {counted(report.memories, 'memory', 'memories')} "
            "with vectors"
        )
        return
    for cluster in report.clusters:
        where = f" → {cluster.path}" if cluster.path else ""
        failed = f"  (not merged: {cluster.error})" if cluster.error else ""
        click.echo(
            f"{cluster.action:<6} cohesion {cluster.cohesion:.3f}, "
            f"{counted(len(cluster.members), 'memory', 'memories')}{where}{failed}"
        )
        for member in cluster.members:
            click.echo(f"         {member.path}")
    merging = sum(1 for c in report.clusters if c.action == "merge")
    if dry_run:
        click.echo(f"dry run: {counted(merging, 'cluster')} would be merged; nothing changed")
    else:
        click.echo(f"merged {counted(len(report.merged), 'cluster')}; undo with `vaultmem undo`")
