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
