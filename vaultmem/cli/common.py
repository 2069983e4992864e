"""Shared pieces of the CLI: the common options, opening the vault, errors and output."""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from vaultmem.core.notes.timestamps import parse_datetime, utc_now
from vaultmem.core.user_paths import expand_user_path
from vaultmem.errors import InputError, VaultmemError
from vaultmem.services.vault import Vault
from vaultmem.services.vault_setup import require_vault

F = TypeVar("F", bound=Callable[..., Any])


def _parse_now(ctx: click.Context, param: click.Parameter, value: str | None) -> dt.datetime:
    """``--now`` as a datetime; not given, or a blank ``VAULTMEM_NOW``, is the current time.
    A blank ``--now ""`` typed on the command line is refused (exit 2)."""
    if value is None:
        return utc_now()
    if not value.strip():
        if ctx.get_parameter_source(param.name or "") is ParameterSource.ENVIRONMENT:
            return utc_now()
        raise click.BadParameter(
            f"{value!r} is empty: give a datetime (ISO 8601, e.g. 2026-11-20T09:00:00) "
            "or leave --now out"
        )
    try:
        return parse_datetime(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not a datetime (use ISO 8601, e.g. 2026-11-20T09:00:00)"
        ) from None


def refuse_now_unless(used: bool, needs: str) -> None:
    """Refuse (exit 2) a ``--now`` typed on the command line that this call would ignore:
    ``used`` is False, ``needs`` names what it is used with (``"--fix"``). A ``VAULTMEM_NOW``
    in the environment (one setting for a whole simulated session) is not refused."""
    ctx = click.get_current_context()
    if not used and ctx.get_parameter_source("now") is ParameterSource.COMMANDLINE:
        raise click.UsageError(f"--now is used only with {needs}; leave it out", ctx)


def refused_by(
    check: Callable[[str], object],
) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    """A click callback that passes an option's value on unchanged unless ``check`` (the
    library's own check of that value, e.g. ``checked_tag``) raises :class:`InputError`, which
    becomes ``click.BadParameter`` (exit 2): an empty ``--tag ""`` is refused, never dropped."""

    def callback(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is not None:
            try:
                check(value)
            except InputError as err:
                raise click.BadParameter(str(err)) from None
        return value

    return callback


class FiniteFloat(click.FloatRange):
    """A float option that refuses ``nan`` and ``inf`` (exit 2), which ``click.FloatRange`` and
    ``type=float`` let through: a NaN compares false with every bound, so it passes any range
    and only fails later, deep in the library. ``min``/``max`` bound it as in FloatRange."""

    name = "float"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)

    def _describe_range(self) -> str:
        """No ``[x<=None]`` in ``--help`` for an unbounded one."""
        return "" if self.min is None and self.max is None else super()._describe_range()


class UserPath(click.Path):
    """``click.Path`` with ``~`` and ``$VARIABLES`` expanded first, as a shell would unquoted."""

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Any:
        if isinstance(value, str):
            value = expand_user_path(value)
        return super().convert(value, param, ctx)


class UserFile(click.File):
    """``click.File`` with ``~`` and ``$VARIABLES`` expanded in its path (``-`` stays stdin)."""

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Any:
        if isinstance(value, str) and value != "-":
            value = expand_user_path(value)
        return super().convert(value, param, ctx)


def _refuse_empty_vault(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> str | None:
    """An empty ``--vault ""`` is refused (exit 2), never taken as the current folder; an empty
    ``VAULTMEM_VAULT`` means "not set" (click skips it): the vault is found upward."""
    if value == "" and ctx.get_parameter_source(param.name or "") is ParameterSource.COMMANDLINE:
        raise click.BadParameter("'' is empty: give the vault folder, or leave --vault out")
    return value or None


vault_option = click.option(
    "--vault",
    "vault_path",
    callback=_refuse_empty_vault,
    type=UserPath(file_okay=False, path_type=str),
    envvar="VAULTMEM_VAULT",
    show_envvar=True,
    help="The vault folder (~ and $VARIABLES expanded); it must hold vaultmem.toml or .obsidian/ "
    "(else run `vaultmem init`). Default: the nearest such folder upward.",
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
    """Add ``--vault``, turn the library's errors into one-line messages (exit 1).

    A folder named by ``--vault`` or ``VAULTMEM_VAULT`` must be a vault already (vaultmem.toml
    or .obsidian/): the error says to run ``vaultmem init``.
    """

    @vault_option
    @functools.wraps(func)
    def wrapper(*args: Any, vault_path: str | None, **kwargs: Any) -> Any:
        with library_errors():
            if vault_path is not None:
                require_vault(Path(expand_user_path(vault_path)))
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


def with_error(data: dict[str, Any], error: str | None, exit_code: int = 1) -> dict[str, Any]:
    """A command's JSON report with ``error`` and ``exit_code`` added when it failed, so that
    stdout holds one JSON object either way."""
    return data if error is None else {**data, "error": error, "exit_code": exit_code}


def print_json(data: object) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with ``noun`` in the right number: ``1 memory``, ``2 memories``, ``0 notes``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def fmt_score(value: float) -> str:
    return "∞" if value == float("inf") else f"{value:.3f}"


@contextmanager
def progress_shown(as_json: bool) -> Iterator[None]:
    """Show the services' progress reports made inside the block as click progress bars on
    stderr, one per step (a pass, consolidation); nothing for ``--json`` or when stderr is not
    a terminal (piped, redirected, a test)."""
    if as_json or not sys.stderr.isatty():
        yield
        return
    from vaultmem.services.lifecycle.progress import progress_to

    shown: dict[str, Any] = {}  # label → its entered bar; one at a time

    def close() -> None:
        for bar in shown.values():
            bar.__exit__(None, None, None)
        shown.clear()

    def listener(label: str, done: int, total: int) -> None:
        if label not in shown:
            close()
            shown[label] = progress_bar(total, label, as_json=False).__enter__()
        bar = shown[label]
        bar.update(done - bar.pos)

    with progress_to(listener):
        try:
            yield
        finally:
            close()


def progress_bar(length: int, label: str, *, as_json: bool) -> Any:
    """click's progress bar on stderr, hidden for ``--json`` and when stderr is not a terminal."""
    return click.progressbar(
        length=length,
        label=label,
        file=sys.stderr,
        hidden=as_json or not sys.stderr.isatty(),
    )
