"""`vaultmem demo` builds a vault and shows the whole flow: boxes, LTM, Archive."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main


def test_demo_shows_the_whole_flow(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    result = CliRunner().invoke(
        main, ["demo", "--dir", str(target), "--now", "2026-11-22T12:00:00"]
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert re.search(r"seal     box-editor-ui-[0-9a-z]{6}.md: box of 3 memories", out)
    assert "promote  Editor setup.md → LTM/" in out and "score 1.269 ≥ 0.65" in out
    assert "expire   Maybe switch to Neovim.md → Archive/" in out
    assert "forget   Outage in March.md → Archive/" in out
    assert f"Open {target.resolve()} as a vault in Obsidian" in out
    assert (target / "LTM" / "Editor setup.md").is_file()
    assert (target / "Archive" / "Outage in March.md").is_file()
    assert any((target / "Boxes").rglob("box-*.md"))
    with Vault.open(target) as vault:
        assert {row.status for row in vault.memories()} == {"active", "promoted", "archived"}


def test_demo_refuses_a_folder_with_files(tmp_path: Path) -> None:
    (tmp_path / "x.md").write_text("mine")
    result = CliRunner().invoke(main, ["demo", "--dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "is not empty" in result.stderr
    assert (tmp_path / "x.md").read_text() == "mine"
