"""``vaultmem undo --list`` and ``undo ENTRY``: the journal by name, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main


def _run(root: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner(env={"VAULTMEM_ACTOR": "tester"}).invoke(
        main, [*args, "--vault", str(root)]
    )
    return result.exit_code, result.stdout, result.stderr


def test_undo_lists_entries_and_reverts_one_by_name(tmp_path: Path) -> None:
    vault, _ = Vault.init(tmp_path / "v")
    root = vault.root
    vault.close()
    assert _run(root, "undo", "--list")[1].strip() == (
        "the journal is empty: nothing has been applied in this vault"
    )
    assert json.loads(_run(root, "undo", "--list", "--json")[1]) == {"entries": []}
    for title in ("Oven timer", "Kettle descale"):
        assert _run(root, "remember", f"{title} notes", "--title", title)[0] == 0
        assert _run(root, "forget", title)[0] == 0
    code, out, _ = _run(root, "undo", "--list")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert all("undoable" in line and "forget" in line and "by tester" in line for line in lines)
    older = lines[1].split()[0]
    code, _, err = _run(root, "undo", "2")  # every entry starts with the year
    assert code == 1 and "names 2 journal entries" in err and "give more of it" in err
    code, _, err = _run(root, "undo", "no-such-entry")
    assert code == 1 and "no journal entry 'no-such-entry'" in err
    code, out, _ = _run(root, "undo", older, "--json")  # the older one, by its name
    report = json.loads(out)
    assert code == 0 and report["who"] == "tester" and report["command"] == "forget"
    assert (root / "STM/Oven timer.md").exists() and not (root / "STM/Kettle descale.md").exists()
    code, _, err = _run(root, "undo", older)
    assert code == 1 and "already undone" in err
    assert _run(root, "undo")[0] == 0  # a plain undo takes the newest left: Kettle descale
    assert (root / "STM/Kettle descale.md").exists()
    states = [e["state"] for e in json.loads(_run(root, "undo", "--list", "--json")[1])["entries"]]
    assert states == ["undone", "undone"]
