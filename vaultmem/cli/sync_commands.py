"""Git sync: ``vaultmem merge-driver`` (run by git, once per memory note it merges)."""

from __future__ import annotations

import sys

import click

from vaultmem.launcher import merge_driver_main


@click.command("merge-driver")
@click.argument("base", type=click.Path(exists=True, dir_okay=False))
@click.argument("ours", type=click.Path(exists=True, dir_okay=False))
@click.argument("theirs", type=click.Path(exists=True, dir_okay=False))
@click.argument("path", required=False)
def merge_driver(base: str, ours: str, theirs: str, path: str | None) -> None:
    """git's merge driver for memory notes: merge BASE, OURS, THEIRS into OURS.

    git runs it as `vaultmem merge-driver %O %A %B %P` (registered by `vaultmem init --git`).
    Properties merge key by key, each by its rule (user guide, "Syncing with git"): use_count
    base + both sides' uses, use_days both sides' distinct days, last_used the latest, created
    and promoted_at the earliest, tags and related as set merges, status the later stage, a
    person's own keys like text lines; a key changed on one side takes that side. The body
    merges with `git merge-file --diff3`. Two different memories (different ids) added at one
    path are both kept: yours at the path, theirs beside it as "<title> 2.md". Exit 0 when
    merged; 1 when body lines (or a value of the wrong type) still conflict, marked in the note.
    """
    sys.exit(merge_driver_main([base, ours, theirs, *([path] if path else [])]))
