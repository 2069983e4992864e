"""Commands over the index and the graph: index, links, graph, doctor."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import click

from vaultmem.cli.common import (
    counted,
    json_option,
    now_option,
    print_json,
    progress_bar,
    refuse_now_unless,
    vault_command,
    with_error,
)
from vaultmem.services.vault import Vault

if TYPE_CHECKING:
    from vaultmem.services.sync.doctor import DoctorReport


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
        bar.update(done - bar.pos)  # a cold index reports once a batch

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
    """Links of NOTE (id, title or path): outgoing, backlinks, and unresolved.

    Each neighbour is listed once, with its links counted by kind ("wikilink ×2, frontmatter").
    """
    found = vault.links(ref)
    if as_json:
        print_json(found.as_dict())
        return
    outgoing, backlinks, unresolved = found.neighbours()
    click.echo(found.path)
    click.echo("  outgoing:")
    for g in outgoing:
        click.echo(f"    → {g.first.resolved}  ([[{g.first.target}]]: {g.describe_kinds()})")
    click.echo("  backlinks:")
    for g in backlinks:
        click.echo(f"    ← {g.first.source}  ({g.describe_kinds()})")
    if unresolved:
        click.echo("  unresolved:")
        for g in unresolved:
            click.echo(f"    ? [[{g.first.target}]]  ({g.describe_kinds()})")


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
@click.option("--json", "as_json", is_flag=True, help="Same as --format json (not with dot).")
@vault_command
def graph(vault: Vault, fmt: str, as_json: bool) -> None:
    """Every link of the vault as an edge.

    JSON edges are {"source", "target", "resolved", "kind"}: source and resolved are
    vault-relative paths (resolved is null when the link resolves to no note or attachment;
    links to images, PDFs, canvases, bases … resolve to the file), target is the
    link as written without #heading and |alias, kind is wikilink, embed, markdown or
    frontmatter.
    """
    if as_json and fmt == "dot":
        raise click.UsageError("give --format dot or --json, not both")
    vault.catch_up()
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


DETAILS_PER_KIND = 10
"""Findings of one kind ``doctor`` lists before "… N more" (``--all`` lists every one)."""


def _print_findings(lines: list[tuple[str, str]], show_all: bool) -> None:
    """(kind, line) pairs, at most :data:`DETAILS_PER_KIND` per kind unless ``show_all``."""
    shown: dict[str, int] = {}
    for kind, line in lines:
        shown[kind] = shown.get(kind, 0) + 1
        if show_all or shown[kind] <= DETAILS_PER_KIND:
            click.echo(line)
    for kind, count in shown.items():
        if not show_all and count > DETAILS_PER_KIND:
            click.echo(f"  … {count - DETAILS_PER_KIND} more [{kind}] (--all lists every one)")


def _by_kind(report: DoctorReport) -> str:
    """``"unresolved-link 27 warnings, conflict-markers 1 problem"``, most frequent first."""
    counts: dict[tuple[str, str], int] = {}
    for noun, findings in (("problem", report.problems), ("warning", report.warnings)):
        for finding in findings:
            counts[finding.kind, noun] = counts.get((finding.kind, noun), 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (item[0][1] != "problem", -item[1]))
    return ", ".join(f"{kind} {counted(n, noun)}" for (kind, noun), n in ranked)


def _doctor_error(problems: int, failing_warnings: int) -> str | None:
    """Why ``doctor`` exits 1 (``error`` in its JSON), or None: its problems, and its warnings
    under --strict."""
    if problems and failing_warnings:
        return (
            f"{counted(problems, 'problem')} and {counted(failing_warnings, 'warning')} "
            "(--strict) need attention"
        )
    if problems:
        return f"{counted(problems, 'problem')} {'needs' if problems == 1 else 'need'} attention"
    if failing_warnings:
        verb = "needs" if failing_warnings == 1 else "need"
        return f"{counted(failing_warnings, 'warning')} (--strict) {verb} attention"
    return None


@click.command()
@click.option(
    "--strict", is_flag=True, help="Also fail on warnings (unresolved links, wrong types)."
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help=f"List every finding (default: a count per kind and the first {DETAILS_PER_KIND} of "
    "each).",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="List every unresolved link on a line of its own (implies --all).",
)
@click.option(
    "--fix",
    is_flag=True,
    help="Resolve what has one safe answer, journaled (vaultmem undo reverts it): notes sharing "
    "a memory id and conflict markers inside memory properties. Body conflicts stay.",
)
@json_option
@now_option
@vault_command
def doctor(
    vault: Vault,
    strict: bool,
    show_all: bool,
    verbose: bool,
    fix: bool,
    as_json: bool,
    now: dt.datetime,
) -> None:
    """Check the vault and its index; exit 1 when something needs a person's attention.

    Prints the first findings of each kind, a count per kind and the totals; --all lists every
    finding, --json gives them all as data ("ok" false, with "error" and "exit_code", when it
    exits 1: --strict included). Notes in template folders (Obsidian's Templates
    plugin folder and Templates/) are not checked: their {{placeholders}} and links to notes
    yet to be written are not findings.

    Problems (exit 1): notes whose YAML does not parse, git conflict markers, bytes that are not
    UTF-8, sync conflict copies, duplicate base names among managed notes, notes sharing a
    memory id. Warnings: values of the wrong type, unresolved links (to notes or to attachments
    that are not there), one line per note (--verbose: one per link), a merge driver named in
    .gitattributes but not registered in this clone, notes and folders whose names are not
    UTF-8 (not indexed; odd bytes shown as \\xNN). A stale index is reported and repaired.
    --json lists every unresolved link under "unresolved_links".

    --fix: one memory at two paths with the same name (a git rename/rename or add/add) is kept
    at the later lifecycle stage (STM < Boxes < LTM < Archive) with the other copy's fields
    merged in; a copy with another name (Obsidian's "Make a copy") gets a new id; conflicted
    properties are merged by the merge driver's rules. Then the checks run.
    """
    refuse_now_unless(fix, "--fix (the checks do not depend on the time)")
    fixed = vault.fix(now) if fix else None
    if fixed is not None and not as_json:
        for path, what in fixed.fixed:
            click.echo(f"fixed {path}: {what}")
        for path, why in fixed.left:
            click.echo(f"not fixed {path}: {why}")
        if fixed.journal:
            click.echo(f"journal: .vaultmem/journal/{fixed.journal} (vaultmem undo reverts it)")
    report = vault.doctor()
    error = _doctor_error(len(report.problems), len(report.warnings) if strict else 0)
    if as_json:
        data = {**report.as_dict(), "ok": error is None}
        if fixed is not None:
            data["fix"] = fixed.as_dict()
        print_json(with_error(data, error))
    else:
        lines: list[tuple[str, str]] = []
        for finding in report.stale_index:
            where = f"{finding.path}: " if finding.path else ""
            lines.append(("stale index rows", f"index: {where}{finding.detail} (repaired)"))
        for finding in report.problems:
            line = f"problem [{finding.kind}] {finding.path}: {finding.detail}"
            lines.append((finding.kind, line))
        for finding in report.warnings:
            if not (verbose and finding.kind == "unresolved-link"):
                line = f"warning [{finding.kind}] {finding.path}: {finding.detail}"
                lines.append((finding.kind, line))
        if verbose:
            for link in report.unresolved:
                line = (
                    f"warning [unresolved-link] {link.path}: {link.describe()} resolves to nothing"
                )
                lines.append(("unresolved-link", line))
        _print_findings(lines, show_all or verbose)
        if report.problems or report.warnings:
            click.echo(f"by kind: {_by_kind(report)}")
        click.echo(
            f"{counted(report.notes, 'note')} checked: {counted(len(report.problems), 'problem')}, "
            f"{counted(len(report.warnings), 'warning')}"
        )
    if error is not None:
        raise SystemExit(1)
