"""Commands over the index and the graph: index, links, graph, doctor."""

from __future__ import annotations

from typing import Any

import click

from vaultmem.cli.common import json_option, print_json, progress_bar, vault_command
from vaultmem.services.doctor import check_vault
from vaultmem.services.vault import Vault


@click.command()
@click.option(
    "--rebuild",
    is_flag=True,
    help="Drop the index and build it again from the notes (replaces a damaged index.db).",
)
@json_option
@vault_command
def index(vault: Vault, rebuild: bool, as_json: bool) -> None:
    """Bring the sidecar index (.vaultmem/index.db) in step with the notes.

    Incremental: notes whose size and modification time are unchanged are not read; moved notes
    keep their rows; vanished notes are removed. Never writes into a note.
    """
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = progress_bar(total, "indexing", as_json=as_json).__enter__()
        bar.update(1)

    try:
        report = vault.sync(rebuild=rebuild, progress=progress)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    if as_json:
        print_json(report.as_dict())
        return
    click.echo(
        f"indexed {vault.root}: {report.added} added, {report.changed} changed, "
        f"{report.moved} moved, {report.removed} removed, {report.unchanged} unchanged "
        f"in {report.seconds:.2f} s"
    )


@click.command()
@click.argument("ref", metavar="NOTE")
@json_option
@vault_command
def links(vault: Vault, ref: str, as_json: bool) -> None:
    """Links of NOTE (id, title or path): outgoing, backlinks, and unresolved."""
    path = vault.resolve(ref)
    outgoing = vault.index.links_from(path)
    incoming = vault.index.links_into(path)
    if as_json:
        print_json(
            {
                "path": path,
                "outgoing": [
                    {"target": r.target, "kind": r.kind, "resolved": r.resolved}
                    for r in outgoing
                    if r.resolved
                ],
                "backlinks": [{"source": r.source, "kind": r.kind} for r in incoming],
                "unresolved": [
                    {"target": r.target, "kind": r.kind} for r in outgoing if not r.resolved
                ],
            }
        )
        return
    click.echo(path)
    click.echo("  outgoing:")
    for r in outgoing:
        if r.resolved:
            click.echo(f"    → {r.resolved}  ({r.kind} [[{r.target}]])")
    click.echo("  backlinks:")
    for r in incoming:
        click.echo(f"    ← {r.source}  ({r.kind})")
    unresolved = [r for r in outgoing if not r.resolved]
    if unresolved:
        click.echo("  unresolved:")
        for r in unresolved:
            click.echo(f"    ? [[{r.target}]]  ({r.kind})")


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@click.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "dot"]),
    default="json",
    show_default=True,
    help="json: one object per edge; dot: Graphviz.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@vault_command
def graph(vault: Vault, fmt: str, as_json: bool) -> None:
    """Every link of the vault as an edge.

    JSON edges are {"source", "target", "resolved", "kind"}: source and resolved are
    vault-relative paths (resolved is null when the link resolves to no note), target is the
    link as written without #heading and |alias, kind is wikilink, embed, markdown or
    frontmatter.
    """
    vault.sync()
    rows = vault.index.all_links()
    if fmt == "json" or as_json:
        print_json(
            [
                {"source": r.source, "target": r.target, "resolved": r.resolved, "kind": r.kind}
                for r in rows
            ]
        )
        return
    click.echo("digraph vault {")
    click.echo("  node [shape=box, fontsize=10];")
    for r in rows:
        target = r.resolved if r.resolved else r.target
        style = "" if r.resolved else " [style=dashed]"
        click.echo(f"  {_dot_quote(r.source)} -> {_dot_quote(target)}{style};")
    click.echo("}")


@click.command()
@click.option(
    "--strict", is_flag=True, help="Also fail on warnings (unresolved links, wrong types)."
)
@json_option
@vault_command
def doctor(vault: Vault, strict: bool, as_json: bool) -> None:
    """Check the vault and its index; exit 1 when something needs a person's attention.

    Problems (exit 1): notes whose YAML does not parse, git conflict markers, bytes that are not
    UTF-8, sync conflict copies, duplicate base names among managed notes. Warnings: values of
    the wrong type, unresolved links. A stale index is reported and repaired.
    """
    report = check_vault(vault)
    if as_json:
        print_json(report.as_dict())
    else:
        for finding in report.stale_index:
            click.echo(f"index: {finding.path}: {finding.detail} (repaired)")
        for finding in report.problems:
            click.echo(f"problem [{finding.kind}] {finding.path}: {finding.detail}")
        for finding in report.warnings:
            click.echo(f"warning [{finding.kind}] {finding.path}: {finding.detail}")
        click.echo(
            f"{report.notes} notes checked: {len(report.problems)} problems, "
            f"{len(report.warnings)} warnings"
        )
    if report.problems or (strict and report.warnings):
        raise SystemExit(1)
