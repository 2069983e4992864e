"""The ``vaultmem`` command line (click): parse, call one :class:`~vaultmem.Vault` method, print."""

from __future__ import annotations

import click

from vaultmem import __version__
from vaultmem.cli.demo_command import demo
from vaultmem.cli.embed_commands import consolidate, embed
from vaultmem.cli.index_commands import doctor, graph, index, links
from vaultmem.cli.lifecycle_commands import expire, gc, lifecycle, promote, prune, seal, undo
from vaultmem.cli.memory_commands import import_, observe, pin, remember, show, touch, unpin
from vaultmem.cli.recall_commands import recall, review
from vaultmem.cli.vault_commands import init, list_, status
from vaultmem.cli.watch_command import watch


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="vaultmem")
def main() -> None:
    """vaultmem — a memory for AI assistants that lives in an Obsidian vault.

    Every memory is a markdown note whose frontmatter holds its decay fields. Commands find the
    vault from --vault, VAULTMEM_VAULT, or the current folder upward (vaultmem.toml or
    .obsidian/). Exit codes: 0 ok, 1 error (one line on stderr), 2 usage.
    """


for command in (
    init,
    remember,
    import_,
    show,
    touch,
    observe,
    pin,
    unpin,
    list_,
    status,
    gc,
    promote,
    demo,
    index,
    links,
    graph,
    doctor,
    lifecycle,
    seal,
    expire,
    prune,
    undo,
    recall,
    review,
    watch,
    embed,
    consolidate,
):
    main.add_command(command)
