"""Damaged or hostile sidecar state: one line naming the file and the fix, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_hostile_states import (
    damage_index,
    index_as_folder,
    lock_as_folder,
    read_only,
    sidecar_as_file,
    write_base_vault,
)

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.errors import IndexDamagedError

NOW = "2026-11-20T09:00:00"


def run(*args: str, vault: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(vault)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("base") / "vault"
    write_base_vault(root)
    return root


@pytest.fixture
def vault(base: Path, tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(base, root)
    return root


def _one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    return lines[0]


def test_a_damaged_index_page_names_the_fix_and_rebuild_replaces_it(vault: Path) -> None:
    damage_index(vault)
    for command in (["recall", "coffee"], ["graph"], ["links", "Old snack"], ["doctor"]):
        code, out, err = run(*command, vault=vault)
        assert code == 1, (command, out, err)
        line = _one_line_error(err)
        assert "index.db: the index is damaged" in line
        assert "vaultmem index --rebuild" in line
    with Vault.open(vault) as v, pytest.raises(IndexDamagedError):
        v.index.all_links()
    code, out, err = run("index", "--rebuild", "--json", vault=vault)
    assert code == 0, err
    notes = [
        p
        for p in vault.rglob("*.md")
        if not any(x.startswith(".") for x in p.relative_to(vault).parts)
    ]
    assert json.loads(out)["added"] == len(notes) >= 5
    code, out, err = run("recall", "coffee", "--json", vault=vault)
    assert code == 0 and json.loads(out)["hits"][0]["path"] == "STM/Coffee order.md"
    code, out, err = run("doctor", vault=vault)
    assert code == 0 and "0 problems" in out


def test_a_read_only_sidecar_still_answers_read_only_commands(vault: Path) -> None:
    with read_only(vault / ".vaultmem"):
        for command in (
            ["list", "--json"],
            ["recall", "coffee", "--json"],
            ["show", "Coffee order", "--json"],
            ["status", "--json"],
            ["links", "Old snack", "--json"],
        ):
            code, out, err = run(*command, vault=vault)
            assert code == 0, (command, err)
            assert "is read-only: the index is used as it is" in err
            json.loads(out)
        code, out, err = run("remember", "Cannot be saved now", vault=vault)
        assert code == 1
        assert "lock: cannot take the vault lock" in _one_line_error(err)
    assert not list((vault / "STM").glob("Cannot be saved*"))


def test_a_read_only_sidecar_without_an_index_says_why(vault: Path) -> None:
    for name in ("index.db", "index.db-wal", "index.db-shm"):
        (vault / ".vaultmem" / name).unlink(missing_ok=True)
    with read_only(vault / ".vaultmem"):
        code, out, err = run("list", vault=vault)
    assert code == 1
    assert "is read-only and holds no index" in _one_line_error(err)


def test_a_read_only_stm_folder_is_one_line(vault: Path) -> None:
    before = sorted(p.name for p in (vault / "STM").iterdir())
    with read_only(vault / "STM"):
        code, out, err = run("remember", "Nowhere to go", vault=vault)
        assert code == 1
        line = _one_line_error(err)
        assert f"cannot write {vault / 'STM' / 'Nowhere to go.md'}: " in line
        assert "Read-only file system" in line or "Permission denied" in line
        code, out, err = run("list", vault=vault)
        assert code == 0
    assert sorted(p.name for p in (vault / "STM").iterdir()) == before


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (sidecar_as_file, ".vaultmem: is a file, not vaultmem's sidecar folder"),
        (index_as_folder, "index.db: is a folder, not the index file"),
    ],
)
def test_a_sidecar_or_index_of_the_wrong_kind(vault: Path, damage: object, expected: str) -> None:
    damage(vault)  # type: ignore[operator]
    for command in (["list"], ["recall", "coffee"], ["remember", "x y z"], ["index", "--rebuild"]):
        code, out, err = run(*command, vault=vault)
        assert code == 1
        assert expected in _one_line_error(err)


def test_a_lock_that_is_a_folder(vault: Path) -> None:
    lock_as_folder(vault)
    code, out, err = run("remember", "Locked out", vault=vault)
    assert code == 1
    assert "lock: is a folder, not vaultmem's lock file" in _one_line_error(err)
    code, out, err = run("list", vault=vault)
    assert code == 0
