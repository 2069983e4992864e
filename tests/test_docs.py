"""The docs stay true: the CLI reference matches --help, the README's commands exist."""

from __future__ import annotations

import re
from pathlib import Path

from vaultmem.cli import main
from vaultmem.cli.reference import cli_reference

ROOT = Path(__file__).resolve().parents[1]


def test_cli_reference_matches_help() -> None:
    expected = cli_reference()
    actual = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert actual == expected, (
        "docs/cli.md is stale: python -m vaultmem.cli.reference > docs/cli.md"
    )


def test_every_command_is_in_the_user_guide() -> None:
    guide = (ROOT / "docs" / "user-guide.md").read_text(encoding="utf-8")
    missing = [name for name in main.all_commands() if f"`vaultmem {name}" not in guide]
    assert missing == []


def test_readme_quickstart_is_two_commands_that_name_demo_and_pytest() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", quickstart, re.DOTALL)
    assert len(blocks) == 2
    assert blocks[0].strip().endswith("vaultmem demo")
    assert blocks[1].strip().endswith("pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[dev]' && pytest" in ci
