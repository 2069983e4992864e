"""A pass killed at any point (SIGKILL, real subprocess) never loses or duplicates a note.

Each trial copies a prepared vault, starts `vaultmem lifecycle` in a subprocess, kills it after
a random delay, then checks that every memory id exists exactly once. Half the trials then let
the next pass finish the interrupted one; the other half run `vaultmem undo` and expect the vault
back byte for byte.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import snapshot_files

from vaultmem import Vault
from vaultmem.core.notes.note_parse import parse_note

T0 = dt.datetime(2026, 10, 1, 9, 0, tzinfo=dt.UTC)
WHEN = "2026-12-15T00:00:00"
TRIALS = 12


def _memory_ids(root: Path, paths: list[Path]) -> list[str]:
    ids = []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        if rel.startswith("."):
            continue
        note = parse_note(rel, path.read_text(encoding="utf-8"))
        if note.fields.id and note.fields.type == "memory":
            ids.append(note.fields.id)
    return ids


def _ids(root: Path, *, aside: bool = True) -> list[str]:
    """Memory ids of the visible notes; with ``aside``, also of notes a killed write had set
    aside (``.<name>.<token>.vaultmem-old``: owned mid-write, put back by the next command)
    when no visible note holds that id (a kill after the new text was linked in place but
    before the aside copy was removed leaves both: the next command removes the copy)."""
    ids = _memory_ids(root, list(root.rglob("*.md")))
    if aside:
        visible = set(ids)
        ids += [i for i in _memory_ids(root, list(root.rglob(".*.vaultmem-old")))
                if i not in visible]  # fmt: skip
    return ids


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", "from vaultmem.cli import main; main()", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    root = tmp_path_factory.mktemp("kill") / "base"
    vault, _ = Vault.init(root)
    rng = random.Random(7)
    with vault:
        for i in range(120):
            memory = vault.remember(
                f"memory {i} on topic {i % 9}",
                title=f"memory {i}",
                tags=[f"topic{i % 9}"],
                importance=rng.choice([0.1, 0.3, 0.5]),
                link=False,
                now=T0 + dt.timedelta(minutes=7 * i),
            )
            if i % 5 == 0:
                for k in range(4):
                    vault.touch(memory.path, now=T0 + dt.timedelta(minutes=7 * i + k + 1))
    started = time.perf_counter()
    probe = root.parent / "probe"
    shutil.copytree(root, probe)
    done = _cli("lifecycle", "--vault", str(probe), "--now", WHEN)
    assert done.wait(timeout=300) == 0, done.stderr.read() if done.stderr else ""
    return root, time.perf_counter() - started


def test_killed_passes_never_lose_or_duplicate_a_note(
    prepared: tuple[Path, float], tmp_path: Path
) -> None:
    base, duration = prepared
    expected = sorted(_ids(base))
    baseline = snapshot_files(base)
    rng = random.Random(2026)
    outcomes = []
    for trial in range(TRIALS):
        root = tmp_path / f"trial{trial}"
        shutil.copytree(base, root)
        process = _cli("lifecycle", "--vault", str(root), "--now", WHEN)
        time.sleep(rng.uniform(0.2, duration))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        assert sorted(_ids(root)) == expected, f"trial {trial}: a note was lost or duplicated"
        if trial % 2 == 0:
            finish = _cli("lifecycle", "--vault", str(root), "--now", WHEN)
            assert finish.wait(timeout=300) == 0
            assert sorted(_ids(root, aside=False)) == expected
            assert not list(root.rglob(".*.vaultmem-tmp"))
            assert not list(root.rglob(".*.vaultmem-old"))
            outcomes.append("finished")
        else:
            undo = _cli("undo", "--vault", str(root))
            code = undo.wait(timeout=300)
            message = undo.stderr.read() if undo.stderr else ""
            if code == 1 and "nothing to undo" in message:
                outcomes.append("killed before any move")
            else:
                assert code == 0, message
                outcomes.append("undone")
            assert snapshot_files(root) == baseline, f"trial {trial}: undo did not restore"
    # the random delays must actually have interrupted some passes mid-way
    assert "undone" in outcomes


def test_a_move_whose_done_mark_died_with_the_process_is_finished_and_undone_exactly(
    tmp_path: Path,
) -> None:
    """The ``done`` mark of a move goes out with the next journal line: a process that dies right
    after the move leaves the operation unmarked, and the next command marks it done."""
    vault, _ = Vault.init(tmp_path / "v")
    with vault:
        memory = vault.remember("a memory to move", title="mover", link=False, now=T0)
    before = snapshot_files(vault.root)
    source = memory.path
    target = f"LTM/{source.rsplit('/', 1)[-1]}"
    script = (
        "import datetime as dt, os, sys\n"
        "from pathlib import Path\n"
        "from vaultmem.store.journal import JournalWriter\n"
        "root = Path(sys.argv[1])\n"
        "text = (root / sys.argv[2]).read_text(encoding='utf-8')\n"
        "writer = JournalWriter(root, root / '.vaultmem', 'promote', dt.datetime.now(dt.UTC))\n"
        "writer.move(sys.argv[2], sys.argv[3], text, text.replace('active', 'promoted', 1))\n"
        "os._exit(0)  # dies as a kill would: nothing buffered is written\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script, str(vault.root), source, target], capture_output=True
    )
    assert child.returncode == 0, child.stderr
    (journal,) = (vault.root / ".vaultmem" / "journal").glob("*.jsonl")
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    assert [line.get("op") for line in lines[1:]] == ["move"]  # the done mark never reached disk
    assert not (vault.root / source).exists() and (vault.root / target).exists()

    reopened = Vault.open(vault.root)
    run = reopened.lifecycle(passes=["promote"], now=T0)  # finishes the interrupted journal first
    assert run.recovered == [journal.name]
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    assert {"done": 1} in lines and lines[-1] == {"complete": True, "recovered": True}
    reopened.undo()  # the recovered promote's own journal holds nothing: undo reverts the move
    assert snapshot_files(vault.root) == before
