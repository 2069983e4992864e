"""A lifecycle dry run plans exactly what the real run applies, box archival included."""

from __future__ import annotations

import datetime as dt
import shutil
import sys
from pathlib import Path

import pytest

from vaultmem import Vault
from vaultmem.services.lifecycle.lifecycle import PASS_ORDER, LifecycleRun, run_passes

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # benchmarks/ is not installed; plain `pytest` lacks the repo
    sys.path.insert(0, str(REPO))

from benchmarks.generate_vault import REFERENCE_TIME, generate_vault  # noqa: E402

Row = tuple[str, str, str, str | None, str]


def _rows(run: LifecycleRun, attr: str) -> list[Row]:
    return sorted(
        (result.name, move.path, move.action, move.destination, move.rule)
        for result in run.results
        for move in getattr(result, attr)
    )


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gen") / "vault"
    generate_vault(root, 600, 60, seed=3)
    return root


@pytest.mark.parametrize("days_later", [0, 90, 1000])
def test_dry_run_equals_real_run(generated: Path, tmp_path: Path, days_later: int) -> None:
    root = tmp_path / "vault"
    shutil.copytree(generated, root)
    now = REFERENCE_TIME + dt.timedelta(days=days_later)
    with Vault.open(root) as vault:
        vault.sync()
        dry = run_passes(vault, PASS_ORDER, now, dry_run=True)
        real = run_passes(vault, PASS_ORDER, now)
    planned, applied = _rows(dry, "planned"), _rows(real, "applied")
    assert not [m for r in real.results for m in r.skipped]
    assert planned == applied
    boxes = [row for row in applied if row[4] == "box"]
    if days_later == 1000:  # boxes sealed in this very run empty and are archived with them
        assert boxes
        assert any(row[0] == "forget" for row in boxes)


def test_box_sealed_and_emptied_in_one_run_is_planned(tmp_path: Path) -> None:
    """The case of the report: the box exists only once the seal is applied."""
    root = tmp_path / "vault"
    generate_vault(root, 200, 20, seed=7)
    now = REFERENCE_TIME + dt.timedelta(days=1000)
    with Vault.open(root) as vault:
        vault.sync()
        dry = run_passes(vault, PASS_ORDER, now, dry_run=True)
        sealed = {m.path for r in dry.results if r.name == "seal" for m in r.planned
                  if m.action == "create" and m.rule == "seal"}  # fmt: skip
        archived_boxes = {m.path for r in dry.results for m in r.planned if m.rule == "box"}
        assert sealed and archived_boxes and archived_boxes <= sealed
        real = run_passes(vault, PASS_ORDER, now)
    assert _rows(dry, "planned") == _rows(real, "applied")
