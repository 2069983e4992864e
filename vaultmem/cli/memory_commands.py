"""Commands on single memories: remember, import, show, touch, observe, pin, unpin."""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
from typing import BinaryIO

import click

from vaultmem.cli.common import (
    FiniteFloat,
    UserFile,
    counted,
    fmt_score,
    json_option,
    now_option,
    print_json,
    progress_bar,
    vault_command,
    with_error,
)
from vaultmem.core.notes.fields import LAYERS, SOURCES
from vaultmem.core.notes.timestamps import format_datetime
from vaultmem.errors import InputError
from vaultmem.services.index.note_filters import checked_tag
from vaultmem.services.memories.memory_view import Memory
from vaultmem.services.vault import Vault


def _split_tags(value: str | None) -> list[str] | None:
    return None if value is None else [t for t in value.replace(",", " ").split() if t]


@click.command()
@click.argument("text", required=False)
@click.option("--title", help="Title and file name (default: the first words of TEXT).")
@click.option("--tags", help="Comma-separated tags, e.g. editor,ui.")
@click.option("--category", help="fact, preference, decision, commitment, skill, … (default fact).")
@click.option("--importance", type=FiniteFloat(), help="0.0–1.0 (default 0.5).")
@click.option("--imp", type=click.IntRange(1, 5), help="Mnemon's importance level 1–5 instead.")
@click.option(
    "--confidence", type=FiniteFloat(), help="0.0–1.0; below 0.40 the memory is speculative."
)
@click.option("--source", type=click.Choice(SOURCES), help="Who says so (sets decay trust).")
@click.option("--layer", type=click.Choice(LAYERS), help="Memory layer (default working).")
@click.option(
    "--pin", "pinned", is_flag=True, default=None, help="Immune to forgetting and pruning."
)
@click.option("--no-link", is_flag=True, help="Do not add related: links to similar memories.")
@click.option(
    "--supersedes",
    metavar="ID_OR_TITLE",
    help="This memory corrects that one: it gets status superseded, leaves recall and is "
    "archived after a grace period (docs/user-guide.md, Corrections).",
)
@json_option
@now_option
@vault_command
def remember(
    vault: Vault,
    text: str | None,
    as_json: bool,
    now: dt.datetime,
    no_link: bool,
    tags: str | None,
    **options: object,
) -> None:
    """Save TEXT as a new memory note in STM/ (reads stdin when TEXT is absent or "-").

    The title is the file name: characters Obsidian, Windows or Android refuse are dropped,
    leading dots and trailing dots or spaces go, a name Windows reserves (CON, NUL, COM1…) gets
    a "_", and it is cut to 80 characters and 180 bytes at a word boundary. A default title is
    the first eight words of TEXT, cut at a phrase boundary (after a comma, colon or dash, or
    before "and", "with", "the" …) and never inside brackets. When another note already has the
    name, the memory is saved as "TITLE 2" and a warning (with --json: "title_clash") names
    that note.
    """
    if text is None or text == "-":
        if sys.stdin.isatty():
            raise InputError("give TEXT or pipe it on stdin")
        text = sys.stdin.read()
    saved = vault.save(text, now=now, link=not no_link, tags=_split_tags(tags), **options)
    memory = saved.memory
    if as_json:
        print_json(saved.as_dict())
    elif saved.outcome == "reinforced":
        click.echo(
            f"reinforced {memory.path} instead (id {memory.fields.id}): an active memory "
            "already says this"
        )
    else:
        click.echo(f"remembered {memory.path} (id {memory.fields.id})")
        if memory.fields.supersedes:
            click.echo(f"  supersedes {memory.fields.supersedes} (now status superseded)")


@click.command("import")
@click.argument("file", type=UserFile("rb"))
@json_option
@now_option
@vault_command
def import_(vault: Vault, file: BinaryIO, as_json: bool, now: dt.datetime) -> None:
    """Import memories from FILE.jsonl, one JSON object per line ("-" for stdin).

    Each line needs "content"; the keys of a memory note (created, last_used, use_count,
    strength, importance, tags, …) carry over, so decay histories migrate; other keys become
    properties as they are (text, numbers, true/false or lists of them). A bad line (not UTF-8,
    not JSON, a nested object, a bad date…) is reported by its number and skipped; the others
    are imported. A line whose "id" — or, without one, whose content (compared ignoring case,
    punctuation and spacing) — is already in the vault is not imported again, so running the
    same file twice adds nothing. Exit 1 only when no line could be imported or was there (a
    file without a memory — empty, or only blank lines — included).
    """
    lines = file.readlines()
    with progress_bar(len(lines), "importing", as_json=as_json) as bar:
        report = vault.import_jsonl(lines, now=now, progress=lambda n: bar.update(1))
    failed = bool(report.errors) and not report.imported and not report.duplicates
    error = f"no line of {file.name} could be imported" if failed else None
    if not (report.errors or report.imported or report.duplicates):
        error = f"no memories in {file.name}: it is empty or holds only blank lines"
    if as_json:
        print_json(with_error(report.as_dict(), error))
    else:
        click.echo(
            f"imported {counted(len(report.imported), 'memory', 'memories')}"
            + (f"; {len(report.duplicates)} already there" if report.duplicates else "")
            + (f"; {counted(len(report.errors), 'bad line')} skipped" if report.errors else "")
        )
    for number, problem in report.errors:
        click.echo(f"line {number}: {problem}", err=True)
    if error is not None:
        if as_json:
            raise SystemExit(1)
        raise click.ClickException(error)


def _describe(memory: Memory) -> str:
    f = memory.fields
    head = f"{memory.title}\n  path        {memory.path}\n"
    if memory.template:
        return (
            head + f"  not a memory: {memory.path} is a template (it lies in a template folder); "
            "vaultmem searches it but never decays, moves or reinforces it"
        )
    if not memory.managed and memory.problems:  # its frontmatter did not parse: type unknown
        return (
            head + f"  not read as a memory: {memory.path}: {memory.problems[0]}; its properties "
            "cannot be read, so vaultmem never writes it (`vaultmem doctor` lists such notes)"
        )
    if not memory.managed:
        return (
            head + "  not a memory: a note of your own (no `type: memory` in its frontmatter); "
            "vaultmem searches it but never decays, moves or reinforces it"
        )
    lines = [
        f"{memory.title}",
        f"  path        {memory.path}",
        f"  id          {f.id}",
        f"  type        {f.type}   status {f.status}   layer {f.layer}   category {f.category}",
        f"  created     {format_datetime(f.created) if f.created else '—'}",
        f"  last_used   {format_datetime(f.last_used) if f.last_used else '—'}"
        f"   ({memory.idle_days:.1f} d ago)",
        f"  use_count   {f.use_count}   strength {f.strength:g}   importance {f.importance:g}"
        f" (level {memory.importance_level})   confidence {f.confidence:g}",
        f"  source      {f.source}   pinned {str(f.pinned).lower()}",
        f"  tags        {', '.join(f.tags) or '—'}",
        f"  score       {fmt_score(memory.score)} = use {memory.use_factor:.3f}"
        f" × retention {memory.retention:.3f} × strength {f.strength:g}"
        f"   (half-life {fmt_score(memory.half_life_days)} d)",
        f"  EI          {memory.effective_importance:.3f}   (edges {memory.edges})",
        f"  review      priority {memory.review_priority:.3f}",
    ]
    return "\n".join(lines)


@click.command()
@click.argument("ref", metavar="ID")
@json_option
@now_option
@vault_command
def show(vault: Vault, ref: str, as_json: bool, now: dt.datetime) -> None:
    """Show a memory (by id, title or path): fields, score and its factors, EI, review priority.

    A title is cleaned as `remember` saves it ("Wifi password?" finds Wifi password.md). A note
    of your own (no `type: memory`) is shown as not a memory ("memory": false in JSON, with its
    properties as written); so is a template (a note in a template folder: "template": true)
    and a note whose frontmatter cannot be read, with the reason (the YAML error: "problems").
    """
    from vaultmem.services.index.template_folders import in_templates, template_folders

    memory = vault.memory(ref, now=now)
    if in_templates(memory.path, template_folders(vault.root)):
        memory = dataclasses.replace(memory, template=True)
        # its {{placeholders}} are not wrong values: no warning about them (as doctor skips it)
        vault.warnings[:] = [w for w in vault.warnings if not w.startswith(f"{memory.path}: ")]
    if as_json:
        print_json(memory.as_dict())
    else:
        click.echo(_describe(memory))


def _report(memory: Memory, verb: str, as_json: bool) -> None:
    if as_json:
        print_json(memory.as_dict())
    else:
        click.echo(
            f"{verb} {memory.path}: use_count {memory.fields.use_count}, "
            f"strength {memory.fields.strength:g}, score {fmt_score(memory.score)}"
        )


@click.command()
@click.argument("ref", metavar="ID")
@click.option("--boost", is_flag=True, help="Also add 0.1 to strength (capped at 2.0).")
@json_option
@now_option
@vault_command
def touch(vault: Vault, ref: str, boost: bool, as_json: bool, now: dt.datetime) -> None:
    """Reinforce a memory: count a use (use_count + 1).

    last_used becomes now, never earlier: a --now before the memory's last_used counts the use
    but keeps last_used. A touch
    changes two lines of the note (use_count, last_used); the first on a later UTC day than the
    last use also adds 1 to use_days (three lines), and --boost changes strength.
    """
    _report(vault.touch(ref, boost=boost, now=now), "touched", as_json)


def _context_tags(ctx: click.Context, param: click.Parameter, value: str | None) -> list[str]:
    """``--context-tags`` as tags (comma- or space-separated, a leading ``#`` dropped); not
    given, none. A blank value or a tag with nothing but ``#`` is refused (exit 2), never
    dropped: the use would silently never count as cross-domain."""
    if value is None:
        return []
    tags = _split_tags(value) or []
    if not tags:
        raise click.BadParameter(
            f"{value!r} is empty: give the context's tags, e.g. work,travel, or leave it out"
        )
    try:
        return [checked_tag(tag) for tag in tags]
    except InputError as err:
        raise click.BadParameter(str(err)) from None


@click.command()
@click.argument("refs", nargs=-1, required=True, metavar="ID...")
@click.option(
    "--context-tags",
    callback=_context_tags,
    help="Tags of the context the memories were used in, e.g. work,travel (a blank one, or "
    "one that is only '#', is refused).",
)
@json_option
@now_option
@vault_command
def observe(
    vault: Vault, refs: tuple[str, ...], context_tags: list[str], as_json: bool, now: dt.datetime
) -> None:
    """Record that memories were used: a touch plus review bookkeeping (docs/user-guide.md).

    When the memory's tags overlap the context tags by less than 30 % (Jaccard), the use is
    cross-domain: cross_domain_count + 1 and strength + 0.1. A memory without tags, or a use
    without --context-tags, is never cross-domain (there is no overlap to measure).
    """
    memories = vault.observe(list(refs), context_tags, now=now)
    if as_json:
        print_json({"memories": [m.as_dict() for m in memories]})
    else:
        for memory in memories:
            _report(memory, "observed", False)


@click.command()
@click.argument("ref", metavar="ID")
@json_option
@vault_command
def pin(vault: Vault, ref: str, as_json: bool) -> None:
    """Pin a memory: immune to forgetting and pruning."""
    memory = vault.pin(ref, True)
    print_json(memory.as_dict()) if as_json else click.echo(f"pinned {memory.path}")


@click.command()
@click.argument("ref", metavar="ID")
@json_option
@vault_command
def unpin(vault: Vault, ref: str, as_json: bool) -> None:
    """Unpin a memory."""
    memory = vault.pin(ref, False)
    print_json(memory.as_dict()) if as_json else click.echo(f"unpinned {memory.path}")
