"""An import killed at any moment (SIGKILL, a real process) leaves only whole notes: every note
under a real name parses and holds one line's memory; the next import removes the temp files,
writes each missing line once and leaves the index agreeing with the files."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes.note_text import parse_frontmatter, split_note

LINES = 1200  # from 1,000 lines a helper process indexes each batch: it is killed with the import


def _contents(count: int) -> list[str]:
    words = ["pears", "kyoto", "deploy", "garden", "budget", "river", "standup", "tart"]
    rng = random.Random(5)
    return [
        f"{' '.join(rng.choice(words) for _ in range(rng.randint(4, 12))).capitalize()} ({i})."
        for i in range(count)
    ]


def _memories(stm: Path) -> dict[str, str]:
    """Every note under a real name in ``stm`` → its body; fails on a note that is not whole."""
    bodies = {}
    for path in stm.glob("*.md"):
        note = split_note(path.read_text(encoding="utf-8"))
        fields = parse_frontmatter(note.yaml, path=path.name)
        assert note.has_frontmatter and fields["type"] == "memory", path.name
        assert fields["status"] == "active" and len(str(fields["id"])) == 26, path.name
        bodies[path.name] = note.body.rstrip("\n")
    return bodies


def _temp_files(stm: Path) -> list[str]:
    return [p.name for p in stm.iterdir() if p.name.startswith(".") and "vaultmem" in p.name]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_an_import_killed_at_random_moments_leaves_whole_notes_and_finishes_after(
    tmp_path: Path,
) -> None:
    vault, _ = Vault.init(tmp_path / "v")
    vault.close()
    stm = vault.root / "STM"
    contents = _contents(LINES)
    source = tmp_path / "memories.jsonl"
    source.write_text("".join(json.dumps({"content": c}) + "\n" for c in contents), "utf-8")
    command = [sys.executable, "-c", "from vaultmem.cli import main; main()", "import",
               str(source), "--vault", str(vault.root)]  # fmt: skip
    env = {**os.environ, "VAULTMEM_EMBEDDINGS": "off"}
    rng = random.Random(int(os.environ.get("VAULTMEM_KILL_SEED", "31")))
    kills = 0
    for _ in range(3):
        before = len(os.listdir(stm))
        target = before + rng.randint(1, max(1, LINES - before - 1))  # notes and temp files
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:
            if len(os.listdir(stm)) >= target:  # a batch written ahead, flushed or linked
                process.send_signal(signal.SIGKILL)
                kills += 1
                break
            time.sleep(0.002)
        process.wait()
        bodies = _memories(stm)  # every note under a real name is whole...
        assert set(bodies.values()) <= set(contents)  # ...and holds one line's memory
        assert len(set(bodies.values())) == len(bodies)  # never twice
    assert kills, "every import finished before it was killed: nothing was tested"
    result = CliRunner().invoke(main, ["import", str(source), "--vault", str(vault.root)], env=env)
    assert result.exit_code == 0, result.output
    bodies = _memories(stm)
    assert sorted(bodies.values()) == sorted(contents)
    assert _temp_files(stm) == []
    doctor = CliRunner().invoke(main, ["doctor", "--json", "--vault", str(vault.root)])
    report = json.loads(doctor.output)  # the index checked against the files before any sync
    assert report["ok"] is True and report["stale_index"] == [] and report["problems"] == []
    with Vault.open(vault.root) as again:
        assert again.sync().any_change is False
        rows = again.index.conn.execute("SELECT path FROM notes WHERE type = 'memory'")
        assert {row[0] for row in rows} == {f"STM/{name}" for name in bodies}
