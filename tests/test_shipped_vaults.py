"""The real vaults the tests use ship in the repository, each beside its licence."""

from __future__ import annotations

from conftest import REAL_VAULTS


def test_each_real_vault_ships_with_its_licence() -> None:
    kepano = (REAL_VAULTS / "kepano-obsidian" / "LICENSE").read_text(encoding="utf-8")
    srd = (REAL_VAULTS / "13th-age-srd" / "LICENSE.md").read_text(encoding="utf-8")
    assert kepano.startswith("MIT License")
    assert "OPEN GAME LICENSE Version 1.0a" in srd


def test_real_vaults_are_complete() -> None:
    notes = {
        name: sum(1 for _ in (REAL_VAULTS / name).rglob("*.md"))
        for name in ("kepano-obsidian", "13th-age-srd")
    }
    assert notes == {"kepano-obsidian": 103, "13th-age-srd": 1003}
    assert (REAL_VAULTS / "kepano-obsidian" / ".obsidian" / "templates.json").is_file()
    assert len(list((REAL_VAULTS / "kepano-obsidian").rglob("*.base"))) == 30
