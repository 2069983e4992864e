"""``vaultmem watch``: keep the sidecar index in step with the vault while notes change."""

from __future__ import annotations

import functools
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

import click

from vaultmem.cli.common import FiniteFloat, json_option, vault_command
from vaultmem.services.index.sync_types import SyncReport
from vaultmem.services.index.watcher import DEFAULT_DEBOUNCE_SECONDS, VaultWatcher
from vaultmem.services.semantic.background_embedding import BackgroundEmbedder
from vaultmem.services.vault import Vault

_SHOWN_PATHS = 8


def _counts(report: SyncReport) -> str:
    return (
        f"{report.added} added, {report.changed} changed, {report.moved} moved, "
        f"{report.removed} removed"
    )


def _batch_line(report: SyncReport) -> str:
    """One line per synced batch for ``-v``: counts, milliseconds, the paths touched."""
    paths = list(dict.fromkeys(report.touched_paths))
    shown = ", ".join(paths[:_SHOWN_PATHS])
    if len(paths) > _SHOWN_PATHS:
        shown += f", … {len(paths) - _SHOWN_PATHS} more"
    what = _counts(report) if report.any_change else "no change"
    return f"synced: {what} in {report.seconds * 1000:.0f} ms" + (f": {shown}" if shown else "")


def _echo_batch(report: SyncReport) -> None:
    click.echo(_batch_line(report))


def _emit_json(event: str, report: SyncReport | None = None) -> None:
    data: dict[str, object] = {"event": event}
    if report is not None:
        data.update(report.as_dict())
        data["paths"] = list(dict.fromkeys(report.touched_paths))
    click.echo(json.dumps(data, ensure_ascii=False))


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (systemd, ``kill``) stops the watcher as cleanly as Ctrl-C does."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _log_to_stderr(verbose: bool) -> Iterator[None]:
    """The watcher's warnings and errors (and with ``-v`` its info) go to stderr meanwhile."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    package = logging.getLogger("vaultmem")
    level = package.level
    package.addHandler(handler)
    package.setLevel(logging.INFO if verbose else logging.WARNING)
    try:
        yield
    finally:
        package.removeHandler(handler)
        package.setLevel(level)


@click.command()
@click.option(
    "--debounce",
    "debounce_seconds",
    type=FiniteFloat(0.0, 10.0),
    default=DEFAULT_DEBOUNCE_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="Quiet time after the last change before a batch is indexed (a burst is never held "
    "back more than 0.25 s, or SECONDS if longer).",
)
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Print every synced batch: counts, time taken and the paths touched.",
)
@json_option
@vault_command
def watch(vault: Vault, debounce_seconds: float, verbose: bool, as_json: bool) -> None:
    """Keep the index in step with the vault while notes change; Ctrl-C stops.

    Starts with a full incremental sync (nothing edited while no watcher ran is missed), then
    indexes every batch of created, changed, moved and deleted notes and folders — including
    editors that save through a temp file and a rename. Paths with a dot part (.obsidian/,
    .git/, .trash/), files that are not .md and [index] exclude patterns are ignored. Never
    writes into a note. --json prints one JSON object per line (start, each batch, stopped).
    """
    on_sync: Callable[[SyncReport], None] | None = None
    if as_json:
        on_sync = functools.partial(_emit_json, "batch")
    elif verbose:
        on_sync = _echo_batch
    embedder = None
    if vault.settings.embeddings.enabled:  # vectors follow the notes, off the hot path
        embedder = BackgroundEmbedder(vault.root, Vault.open)
        shown = on_sync

        def on_sync(report: SyncReport) -> None:
            embedder.notify(report)
            if shown is not None:
                shown(report)

    watcher = VaultWatcher(vault, debounce_seconds=debounce_seconds, on_sync=on_sync)
    interrupted = False
    with _log_to_stderr(verbose), _sigterm_as_interrupt():
        try:
            report = watcher.start()
            if embedder is not None:
                embedder.start()
            if as_json:
                _emit_json("start", report)
            else:
                click.echo(f"watching {vault.root} (Ctrl-C to stop)")
                click.echo(
                    f"initial sync: {_counts(report)}, {report.unchanged} unchanged "
                    f"in {report.seconds:.2f} s"
                )
            while not watcher.join(timeout=3600.0):
                pass
        except KeyboardInterrupt:
            interrupted = True
        finally:
            watcher.stop()
            if embedder is not None:
                embedder.stop()
    if not interrupted:
        raise click.ClickException("the watcher stopped unexpectedly (see the errors above)")
    if as_json:
        _emit_json("stopped")
    else:
        click.echo("stopped")
