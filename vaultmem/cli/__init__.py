"""The ``vaultmem`` command line (click): parse, call one :class:`~vaultmem.Vault` method, print."""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path
from typing import Any

import click

from vaultmem import __version__

COMMANDS: dict[str, str] = {
    "init": "vault_commands:init",
    "remember": "memory_commands:remember",
    "import": "memory_commands:import_",
    "show": "memory_commands:show",
    "touch": "memory_commands:touch",
    "observe": "memory_commands:observe",
    "pin": "memory_commands:pin",
    "unpin": "memory_commands:unpin",
    "list": "vault_commands:list_",
    "status": "vault_commands:status",
    "gc": "lifecycle_commands:gc",
    "promote": "lifecycle_commands:promote",
    "demo": "demo_command:demo",
    "index": "index_commands:index",
    "links": "index_commands:links",
    "graph": "index_commands:graph",
    "doctor": "index_commands:doctor",
    "lifecycle": "lifecycle_commands:lifecycle",
    "seal": "lifecycle_commands:seal",
    "expire": "lifecycle_commands:expire",
    "prune": "lifecycle_commands:prune",
    "undo": "lifecycle_commands:undo",
    "recall": "recall_commands:recall",
    "review": "recall_commands:review",
    "watch": "watch_command:watch",
    "forget": "lifecycle_commands:forget",
    "merge-driver": "sync_commands:merge_driver",
    "mcp": "mcp_command:mcp",
    "embed": "embed_commands:embed",
    "consolidate": "embed_commands:consolidate",
}
"""Command name → ``module:attribute`` under ``vaultmem.cli``; a command's module (and the
services it needs: numpy, the index, markdown-it …) is imported only when that command runs
or help lists it."""


_TEMP_NAME = re.compile(r"^\.(?P<note>.+)\.[^.]+\.vaultmem-tmp$")


def describe_os_error(err: OSError) -> str:
    """One line for an unexpected ``OSError``: the path (a note, not its temporary file) and why."""
    reason = err.strerror or str(err)
    if not err.filename:
        return reason
    path = Path(os.fsdecode(err.filename))
    match = _TEMP_NAME.match(path.name)
    if match:  # the temporary file of an atomic write: name the note being written
        return f"cannot write {path.with_name(match['note'])}: {reason}"
    return f"{path}: {reason}"


class LazyGroup(click.Group):
    """A group that imports each command's module on first use (fast start-up), and the last
    resort that turns an unexpected ``OSError`` (a read-only folder, a full disk, a path
    replaced under us) or SQLite error into one line, exit 1."""

    def invoke(self, ctx: click.Context) -> Any:
        import sqlite3

        try:
            return super().invoke(ctx)
        except OSError as err:
            raise click.ClickException(describe_os_error(err)) from None
        except sqlite3.Error as err:
            from vaultmem.store.index_connection import INDEX_FILE, index_error
            from vaultmem.store.sidecar import SIDECAR_DIR

            raise click.ClickException(
                str(index_error(Path(SIDECAR_DIR, INDEX_FILE), err))
            ) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attr = COMMANDS[cmd_name].split(":")
            command = getattr(importlib.import_module(f"vaultmem.cli.{module}"), attr)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def all_commands(self) -> dict[str, click.Command]:
        """Every command, imported: name → command (docs and tests)."""
        ctx = click.Context(self)
        found = {name: self.get_command(ctx, name) for name in self.list_commands(ctx)}
        return {name: command for name, command in found.items() if command is not None}


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="vaultmem")
def main() -> None:
    """vaultmem — a memory for AI assistants that lives in an Obsidian vault.

    Every memory is a markdown note whose frontmatter holds its decay fields. Commands find the
    vault from --vault, VAULTMEM_VAULT, or the current folder upward (vaultmem.toml or
    .obsidian/). Exit codes: 0 ok, 1 error (one line on stderr), 2 usage.
    """
