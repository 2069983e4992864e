"""CLI options and arguments that cannot be honoured are refused with a one-line error that
names the problem (exit 2 for usage errors), never silently ignored or left to a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import snapshot_files
from vaultmem.cli import main

NOW = "2026-11-20T09:00:00"


def run(*args: str, vault: Path | None = None, input: str | None = None) -> tuple[int, str, str]:
    argv = list(args)
    if vault is not None:
        argv += ["--vault", str(vault)]
    result = CliRunner().invoke(main, argv, input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    code, _out, err = run("init", str(tmp_path / "v"))
    assert code == 0, err
    return tmp_path / "v"


# --- 1. float options refuse NaN and infinity ------------------------------------------------


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("mcp", "--lock-wait"), "--lock-wait"),
        (("watch", "--debounce"), "--debounce"),
        (("remember", "x", "--importance"), "--importance"),
        (("remember", "x", "--confidence"), "--confidence"),
    ],
)
@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400"])
def test_float_options_refuse_nan_and_infinity(
    vault: Path, args: tuple[str, ...], option: str, value: str
) -> None:
    before = snapshot_files(vault)
    code, out, err = run(*args, value, vault=vault)
    assert code == 2, (out, err)
    assert f"Invalid value for '{option}': '{value}' is not a finite number" in err
    assert "Traceback" not in err
    assert snapshot_files(vault) == before


def test_unbounded_float_options_show_no_empty_range_in_help() -> None:
    code, out, _err = run("remember", "--help")
    assert code == 0
    assert "None" not in out


# --- 2. --vault: a folder inside a vault, an empty value --------------------------------------


def test_vault_option_inside_a_vault_names_the_enclosing_vault(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(vault.parent)
    code, out, err = run("status", "--vault", "v/LTM")
    assert code == 1
    assert err == "Error: v/LTM lies inside the vault v: pass --vault v\n"
    assert "init" not in err
    code, _out, err = run("status", "--vault", str(vault / "STM"))
    assert err == f"Error: {vault / 'STM'} lies inside the vault {vault}: pass --vault {vault}\n"
    assert not (vault / "LTM" / "vaultmem.toml").exists()


def test_vault_option_outside_any_vault_still_says_init(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    code, _out, err = run("status", "--vault", str(tmp_path / "plain"))
    assert code == 1
    assert f"run `vaultmem init {tmp_path / 'plain'}` first" in err


def test_empty_vault_option_is_refused(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(vault)
    code, out, err = run("status", "--vault", "")
    assert code == 2
    assert "'' is empty: give the vault folder, or leave --vault out" in err
    assert out == ""


def test_empty_vaultmem_vault_variable_means_not_set(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(vault / "LTM")
    monkeypatch.setenv("VAULTMEM_VAULT", "")
    code, out, err = run("status")
    assert code == 0, err
    assert str(vault) in out
