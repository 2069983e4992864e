"""Shared pieces of the CLI: the common options, opening the vault, errors and output."""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from vaultmem.core.timestamps import parse_datetime, utc_now
from vaultmem.errors import VaultmemError
from vaultmem.services.vault import Vault
from vaultmem.store.index_db import INDEX_FILE, index_error
from vaultmem.store.sidecar import SIDECAR_DIR

F = TypeVar("F", bound=Callable[..., Any])


def _parse_now(ctx: click.Context, param: click.Parameter, value: str | None) -> dt.datetime:
    if value is None or not value.strip():
        return utc_now()
    try:
        return parse_datetime(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a datetime (use ISO 8601, e.g. 2026-11-20T09:00:00)"
        ) from None


vault_option = click.option(
    "--vault",
    "vault_path",
    type=click.Path(file_okay=False, path_type=str),
    envvar="VAULTMEM_VAULT",
    show_envvar=True,
    help="The vault folder. Default: the nearest folder upward with vaultmem.toml or .obsidian/.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
now_option = click.option(
    "--now",
    callback=_parse_now,
    envvar="VAULTMEM_NOW",
    show_envvar=True,
    metavar="DATETIME",
    help="Pretend the time is DATETIME (ISO 8601, UTC if no offset), to simulate or test.",
)
dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Show what would happen; change nothing."
)


def vault_command(func: F) -> F:
    """Add ``--vault``, turn the library's errors into one-line messages (exit 1)."""

    @vault_option
    @functools.wraps(func)
    def wrapper(*args: Any, vault_path: str | None, **kwargs: Any) -> Any:
        with library_errors(), Vault.open(vault_path) as vault:
            result = func(vault, *args, **kwargs)
            for warning in dict.fromkeys(vault.warnings):
                click.echo(f"warning: {warning}", err=True)
            return result

    return wrapper  # type: ignore[return-value]


@contextmanager
def library_errors() -> Iterator[None]:
    """:class:`VaultmemError` → ``click.ClickException`` (``Error: <message>``, exit 1)."""
    try:
        yield
    except VaultmemError as err:
        raise click.ClickException(str(err)) from None


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


class CommandGroup(click.Group):
    """The ``vaultmem`` group: a last resort that turns an unexpected ``OSError`` (a read-only
    folder, a full disk, a path replaced under us) or SQLite error into one line, exit 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except OSError as err:
            raise click.ClickException(describe_os_error(err)) from None
        except sqlite3.Error as err:
            raise click.ClickException(
                str(index_error(Path(SIDECAR_DIR, INDEX_FILE), err))
            ) from None


def print_json(data: object) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def fmt_score(value: float) -> str:
    return "∞" if value == float("inf") else f"{value:.3f}"


def progress_bar(length: int, label: str, *, as_json: bool) -> Any:
    """click's progress bar on stderr, hidden for ``--json`` and when stderr is not a terminal."""
    return click.progressbar(
        length=length,
        label=label,
        file=sys.stderr,
        hidden=as_json or not sys.stderr.isatty(),
    )
