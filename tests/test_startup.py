"""Start-up stays light: ``vaultmem --version`` imports no heavy module; a command imports only
what it uses (timings are in ``python -m benchmarks.run``, scenario ``startup``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click

from vaultmem.cli import COMMANDS, main

PROBE = """
import json, sys
from vaultmem.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in
      ("numpy", "markdown_it", "sqlite3", "yaml", "watchdog", "vaultmem", "ulid",
       "multiprocessing"))), file=sys.stderr)
"""


def _modules(argv: list[str], cwd: Path) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_version_imports_nothing_heavy(tmp_path: Path) -> None:
    loaded = _modules(["--version"], tmp_path)
    assert not {m.split(".")[0] for m in loaded} & {"numpy", "markdown_it", "sqlite3", "yaml"}
    assert loaded <= {"vaultmem", "vaultmem.cli", "vaultmem.errors"}


def test_recall_does_not_import_the_write_path_or_the_parser(tmp_path: Path) -> None:
    root = tmp_path / "v"
    assert _modules(["init", str(root)], tmp_path)
    (root / "STM" / "Coffee.md").write_text("---\ntype: memory\n---\nbrew coffee at 93 C\n")
    index = f"from vaultmem import Vault; Vault.open({str(root)!r}).sync()"
    subprocess.run([sys.executable, "-c", index], check=True, timeout=60)
    loaded = _modules(["recall", "--vault", str(root), "coffee"], tmp_path)
    assert "vaultmem.services.recall" in loaded
    for unused in (
        "markdown_it",
        "vaultmem.services.lifecycle",
        "vaultmem.services.undo",
        "vaultmem.services.remembering",
        "vaultmem.services.watcher",
        "watchdog",
        "ulid",
        "multiprocessing",
    ):
        assert unused not in loaded


def test_every_lazy_command_is_registered_under_its_own_name() -> None:
    commands = main.all_commands()
    assert set(commands) == set(COMMANDS)
    assert all(isinstance(c, click.Command) and c.name == n for n, c in commands.items())
