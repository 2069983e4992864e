"""``vaultmem demo``: a new vault with four months of simulated memories and the lifecycle."""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import click

from vaultmem.cli.common import UserPath, library_errors, now_option
from vaultmem.services.demo import DemoVault, run_demo
from vaultmem.services.vault import Vault


@click.command()
@click.option(
    "--dir",
    "target",
    type=UserPath(file_okay=False, path_type=Path),
    help="Folder for the demo vault (new or empty). Default: a new temporary folder.",
)
@now_option
def demo(target: Path | None, now: dt.datetime) -> None:
    """Build a demo vault: four months of memories, reinforcement and an evening lifecycle.

    Prints what moved where and why, and the folder to open in Obsidian.
    """
    folder = target or Path(tempfile.mkdtemp(prefix="vaultmem-demo-"))
    with library_errors():
        run_demo(folder, now, click.echo, _init_vault)


def _init_vault(target: Path) -> DemoVault:
    vault, _ = Vault.init(target)
    return vault
