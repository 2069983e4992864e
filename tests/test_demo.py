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
    # an episode box: one session, topics that differ somewhat (deploy+team, deploy+incident)
    assert "box of 2 memories, topics deploy, incident, team" in out
    # promotion earned by repeated use; one more use is not enough
    assert "promote  Editor setup.md → LTM/" in out and "used on 3 days ≥ 3" in out
    assert "Deploys on Fridays are banned: used once more" in out and "not promoted" in out
    # a correction: the old memory is superseded, then archived after the grace period
    assert "correct  Standup moved to ten.md supersedes Standup time.md" in out
    assert "expire   Standup time.md → Archive/" in out and "superseded 14.5 d ago > 14 d" in out
    assert "expire   Maybe switch to Neovim.md → Archive/" in out
    assert "forget   Outage in March.md → Archive/" in out
    assert f"Open {target.resolve()} as a vault in Obsidian" in out
    assert (target / "LTM" / "Editor setup.md").is_file()
    assert (target / "Archive" / "Outage in March.md").is_file()
    assert any((target / "Boxes").rglob("box-*.md"))
    with Vault.open(target) as vault:
        assert {row.status for row in vault.memories()} == {"active", "promoted", "archived"}
        assert vault.memory("Standup moved to ten").fields.supersedes == "[[Standup time]]"


def test_demo_refuses_a_folder_with_files(tmp_path: Path) -> None:
    (tmp_path / "x.md").write_text("mine")
    result = CliRunner().invoke(main, ["demo", "--dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "is not empty" in result.stderr
    assert (tmp_path / "x.md").read_text() == "mine"
