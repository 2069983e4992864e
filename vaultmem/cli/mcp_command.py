"""``vaultmem mcp``: serve the vault to an assistant over the Model Context Protocol (stdio)."""

from __future__ import annotations

import logging
import sys

import click

from vaultmem.cli.common import FiniteFloat, vault_command
from vaultmem.mcp import LOCK_WAIT_SECONDS
from vaultmem.services.vault import Vault


@click.command(name="mcp")
@click.option(
    "--lock-wait",
    "lock_wait",
    type=FiniteFloat(0.0, 60.0),
    default=LOCK_WAIT_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="How long a write waits for a running pass before it fails with 'try again'.",
)
@vault_command
def mcp(vault: Vault, lock_wait: float) -> None:
    """Serve the vault to an MCP client (Claude Desktop, Claude Code, …) over stdio.

    Tools: what the CLI does (remember, recall, show, list, touch, observe, pin, unpin, forget,
    promote, review, status, links, lifecycle and consolidate as dry runs unless apply is true,
    embed_status, doctor), plus read_note, recent, edit, link, journal and undo (which reverts
    only this server's changes): docs/mcp.md. A watcher keeps the index live meanwhile, so a
    note saved in Obsidian is recalled within a second. stdout carries the protocol; warnings
    go to stderr. Register it with a client as the command `vaultmem mcp --vault PATH` (see the
    README).
    """
    from vaultmem.mcp.server import serve  # the SDK costs ~0.7 s to import: only for this command

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("vaultmem mcp %(levelname)s: %(message)s"))
    package = logging.getLogger("vaultmem")
    package.addHandler(handler)
    package.setLevel(logging.WARNING)
    try:
        serve(vault, lock_wait_seconds=lock_wait)
    finally:
        package.removeHandler(handler)
