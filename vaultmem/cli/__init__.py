"""The ``vaultmem`` command line (click): parse, call one :class:`~vaultmem.Vault` method, print."""

from __future__ import annotations

import errno
import importlib
import io
import json
import os
import re
import sys
from collections.abc import Sequence
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


def _print_error(message: str, exit_code: int) -> None:
    click.echo(json.dumps({"error": message, "exit_code": exit_code}, ensure_ascii=False))


def _quiet_after_broken_pipe() -> None:
    """The reader went away (``| head``): what is left unwritten goes to the null device, so
    Python's own flush at exit prints nothing either (the recipe of Python's ``signal`` docs)."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):  # not a real file (tests)
        pass
    finally:
        os.close(null)


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


def wants_json(args: Sequence[str]) -> bool:
    """True when the command line asks for JSON (``--json`` before any ``--``)."""
    words = list(args)
    return "--json" in (words[: words.index("--")] if "--" in words else words)


def _is_broken_pipe(err: BaseException) -> bool:
    return isinstance(err, OSError) and err.errno == errno.EPIPE


class LazyGroup(click.Group):
    """A group that imports each command's module on first use (fast start-up), and the last
    resort that turns an unexpected ``OSError`` (a read-only folder, a full disk, a path
    replaced under us) or SQLite error into one line, exit 1.

    Errors are one line on stderr (``Error: …``), or with ``--json`` one object on stdout:
    ``{"error": "…", "exit_code": 1}`` (2 for a usage error). A closed pipe (``vaultmem list |
    head -1``) ends quietly, exit 1. A mistyped command gets the closest names.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        try:
            result = super().main(argv, prog_name, complete_var, False, **extra)
        except click.ClickException as err:
            if not wants_json(argv):
                err.show()
            else:
                _print_error(err.format_message(), err.exit_code)
            sys.exit(err.exit_code)
        except click.Abort:
            if wants_json(argv):
                _print_error("aborted", 1)
            else:
                click.echo("Aborted!", err=True)
            sys.exit(1)
        except OSError as err:
            if not _is_broken_pipe(err):
                raise
            _quiet_after_broken_pipe()
            sys.exit(1)
        try:
            sys.stdout.flush()  # a pipe closed after the last write fails here, not at exit
        except OSError as err:
            if not _is_broken_pipe(err):
                raise
            _quiet_after_broken_pipe()
            sys.exit(1)
        sys.exit(result if isinstance(result, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        import sqlite3

        try:
            return super().invoke(ctx)
        except OSError as err:
            if _is_broken_pipe(err):
                raise
            raise click.ClickException(describe_os_error(err)) from None
        except sqlite3.Error as err:
            from vaultmem.store.index_connection import INDEX_FILE, index_error
            from vaultmem.store.sidecar import SIDECAR_DIR

            raise click.ClickException(
                str(index_error(Path(SIDECAR_DIR, INDEX_FILE), err))
            ) from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if (
            args
            and not ctx.resilient_parsing
            and not name.startswith("-")
            and self.get_command(ctx, name) is None
        ):
            import difflib  # only for a mistyped command

            ratio = {
                command: difflib.SequenceMatcher(None, name, command).ratio()
                for command in self.list_commands(ctx)
            }
            best = max(ratio.values())
            close = sorted(
                (c for c, r in ratio.items() if r >= max(0.6, best - 0.1)), key=lambda c: -ratio[c]
            )
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint} (vaultmem --help lists them)")
        return super().resolve_command(ctx, args)

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
    .obsidian/); ~ and $VARIABLES in paths are expanded. Exit codes: 0 ok, 1 error (one line on
    stderr; with --json an object {"error": …, "exit_code": …} on stdout), 2 usage.
    """
