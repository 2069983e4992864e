"""Embeddings are on by default when installed (``provider = "auto"``), and ``import`` embeds.

The real packaged model and real vaults in tmp_path; the extra's absence is simulated by the
lookup's answer (the modules cannot be uninstalled from the test's own process).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from vaultmem.core import settings as settings_module
from vaultmem.core.settings import AUTO_SWITCH, EmbeddingSettings
from vaultmem.services.semantic.embedding_providers import LocalOnnxProvider, make_provider
from vaultmem.services.semantic.embeddings import embed_status
from vaultmem.services.vault import Vault

NOW = dt.datetime(2026, 11, 20, 12, 0, 0, tzinfo=dt.UTC)
LINES = [json.dumps({"content": text, "created": "2026-11-19T10:00:00"}) for text in (
    "Allergic to peanuts and to cashews.",
    "Drinks green tea every morning before work.",
    "The team standup is at 9:30 every weekday.",
)]


def test_a_new_vault_uses_the_installed_model_without_any_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(AUTO_SWITCH, raising=False)  # the test suite turns "auto" off
    if not settings_module.local_extra_installed():
        pytest.skip("needs vaultmem[embeddings]")
    vault, _ = Vault.init(tmp_path / "v")
    try:
        assert vault.settings.embeddings.provider == "auto" and vault.settings.embeddings.enabled
        assert 'provider = "auto"' in (tmp_path / "v" / "vaultmem.toml").read_text("utf-8")
        report = vault.import_jsonl(LINES, now=NOW)
        assert len(report.imported) == 3
        status = embed_status(vault)  # import embedded them: nothing left to do
        assert status.embedded == 3, status  # the imported memories (not the scaffolding)
        hits = vault.recall("nut allergy", k=3, now=NOW)
        assert hits[0].path == report.imported[0] and hits[0].signals.cosine is not None
    finally:
        vault.close()


def test_auto_is_keywords_only_without_the_extra_or_when_switched_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(AUTO_SWITCH, "off")
    assert not EmbeddingSettings().enabled and make_provider(EmbeddingSettings()) is None
    monkeypatch.delenv(AUTO_SWITCH)
    monkeypatch.setattr(settings_module, "_found_extra", [False])  # the extra is not installed
    assert not EmbeddingSettings().enabled and make_provider(EmbeddingSettings()) is None
    assert EmbeddingSettings(provider="local").enabled  # an explicit choice stays a choice
    vault, _ = Vault.init(tmp_path / "v")
    try:
        report = vault.import_jsonl(LINES, now=NOW)
        assert len(report.imported) == 3 and not vault.warnings
        hits = vault.recall("peanuts", k=3, now=NOW)
        assert hits[0].path == report.imported[0] and hits[0].signals.cosine is None
        assert not vault.warnings  # no warning: keywords are what "auto" means here
        assert not (tmp_path / "v" / ".vaultmem" / "vectors.db").exists()
    finally:
        vault.close()
    monkeypatch.setattr(settings_module, "_found_extra", [True])
    assert isinstance(make_provider(EmbeddingSettings()), LocalOnnxProvider)


@pytest.mark.parametrize("value", ["yes", "0", "none", "of"])
def test_a_switch_value_that_would_be_ignored_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    from click.testing import CliRunner

    from vaultmem.cli import main

    vault, _ = Vault.init(tmp_path / "v")
    vault.close()
    monkeypatch.setenv(AUTO_SWITCH, value)
    result = CliRunner().invoke(main, ["recall", "anything", "--vault", str(vault.root)])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"Error: VAULTMEM_EMBEDDINGS: is {value!r}; use off (keywords only) or auto"
    )
    for accepted in ("off", "OFF", "auto", ""):
        monkeypatch.setenv(AUTO_SWITCH, accepted)
        assert CliRunner().invoke(main, ["recall", "x", "--vault", str(vault.root)]).exit_code == 0
