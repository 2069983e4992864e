"""A big pass re-indexes what it writes in a helper process while it goes on; whatever the
helper does (finish, fail a batch, vanish), the index ends as a rebuild from the notes makes it,
and the helper never outlives the pass."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import index_content

from vaultmem import Vault
from vaultmem.services.index import pass_indexer
from vaultmem.services.index.pass_indexer import PassIndexer
from vaultmem.services.lifecycle import pass_session
from vaultmem.store import durability

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # benchmarks/ is not installed; plain `pytest` lacks the repo
    sys.path.insert(0, str(REPO))
from benchmarks.generate_vault import REFERENCE_TIME  # noqa: E402


def _started(monkeypatch: pytest.MonkeyPatch) -> list[PassIndexer]:
    """Small batches, so the 1,500-note vault's pass hands over many; the helpers started."""
    monkeypatch.setattr(pass_session, "PREPARE_BATCH", 32)
    monkeypatch.setattr(pass_session, "INDEX_AHEAD_FROM", 50)
    started: list[PassIndexer] = []
    real_start = PassIndexer.start.__func__  # type: ignore[attr-defined]

    def recording_start(cls: type[PassIndexer], root: Path, sidecar: Path) -> PassIndexer | None:
        indexer = real_start(cls, root, sidecar)
        if indexer is not None:
            started.append(indexer)
        return indexer

    monkeypatch.setattr(PassIndexer, "start", classmethod(recording_start))
    return started


def _synced_recording_refreshes(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Vault, list[str]]:
    """The vault at ``root``, synced, and the paths it will re-index in this process."""
    vault = Vault.open(root)
    vault.sync()
    refreshed_here: list[str] = []
    real_refresh = vault.refresh
    monkeypatch.setattr(
        vault, "refresh", lambda paths: refreshed_here.extend(paths) or real_refresh(paths)
    )
    return vault, refreshed_here


def _rebuilt(vault: Vault) -> dict[str, list[tuple[object, ...]]]:
    vault.sync(rebuild=True)
    return index_content(vault)


@pytest.mark.parametrize("commit_seconds", [None, 0.0], ids=["as-the-pass-waits", "each-sync"])
def test_a_big_pass_is_reindexed_by_the_helper_exactly_as_a_rebuild_indexes_it(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch, commit_seconds: float | None
) -> None:
    started = _started(monkeypatch)
    if commit_seconds is not None:  # the helper commits after every sync, not only as asked
        boot = "from vaultmem.services.index.pass_indexer import serve; "
        assert boot in pass_indexer._BOOT
        monkeypatch.setattr(
            pass_indexer,
            "_BOOT",
            pass_indexer._BOOT.replace(
                boot,
                f"import vaultmem.services.index.pass_indexer as p; "
                f"p.COMMIT_SECONDS = {commit_seconds}; {boot}",
            ),
        )
    vault, refreshed_here = _synced_recording_refreshes(generated_vault, monkeypatch)
    run = vault.lifecycle(now=REFERENCE_TIME)
    moves = sum(len(r.applied) for r in run.results)
    assert moves >= 200
    [indexer] = started
    assert indexer.indexed >= moves  # the helper did the re-indexing...
    assert refreshed_here == []  # ...and this process none of it
    assert run.reindexed == indexer.indexed and run.reindex_seconds > 0
    assert indexer._process.poll() == 0  # ended with the pass, cleanly
    after = index_content(vault)
    assert vault.sync().any_change is False
    assert after == _rebuilt(vault)
    vault.close()


def test_the_last_notes_are_handed_to_the_helper_before_the_pass_flushes_the_disk(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pass's last notes (fewer than a hand-over) go to the helper before the pass closes
    its old files and flushes the file system, so it indexes them meanwhile."""
    started = _started(monkeypatch)
    events: list[str] = []
    real_submit = PassIndexer.submit
    real_syncfs = durability.sync_file_system

    def recording_submit(self: PassIndexer, paths: list[str], written: object = None) -> None:
        events.append("submit")
        real_submit(self, paths, written)  # type: ignore[arg-type]

    def recording_syncfs(folder: str | Path) -> bool:
        events.append("flush")
        return real_syncfs(folder)

    monkeypatch.setattr(PassIndexer, "submit", recording_submit)
    monkeypatch.setattr(durability, "sync_file_system", recording_syncfs)
    vault, refreshed_here = _synced_recording_refreshes(generated_vault, monkeypatch)
    run = vault.lifecycle(now=REFERENCE_TIME)
    assert started and refreshed_here == []
    assert events[-1] == "flush" and "submit" in events  # nothing was left to hand over
    assert run.reindexed == started[0].indexed
    assert index_content(vault) == _rebuilt(vault)
    vault.close()


def test_a_small_pass_starts_no_helper(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _started(monkeypatch)
    monkeypatch.setattr(pass_session, "INDEX_AHEAD_FROM", 10**6)
    vault = Vault.open(generated_vault)
    vault.sync()
    run = vault.lifecycle(now=REFERENCE_TIME)
    assert sum(len(r.applied) for r in run.results) >= 200
    assert started == []
    assert run.reindexed >= 200
    assert index_content(vault) == _rebuilt(vault)
    vault.close()


def test_a_helper_gone_mid_pass_leaves_its_batches_to_the_pass(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started = _started(monkeypatch)
    real_submit = PassIndexer.submit
    submitted = [0]

    def submit_then_kill(self: PassIndexer, paths: list[str]) -> None:
        real_submit(self, paths)
        submitted[0] += 1
        if submitted[0] == 2:  # killed while batches are in flight
            self._process.kill()

    monkeypatch.setattr(PassIndexer, "submit", submit_then_kill)
    vault, refreshed_here = _synced_recording_refreshes(generated_vault, monkeypatch)
    run = vault.lifecycle(now=REFERENCE_TIME)
    assert sum(len(r.applied) for r in run.results) >= 200
    [indexer] = started
    assert indexer._process.returncode == -signal.SIGKILL
    assert refreshed_here  # what the helper did not confirm was indexed here
    assert vault.sync().any_change is False
    assert index_content(vault) == _rebuilt(vault)
    vault.close()


def test_a_batch_the_helper_cannot_index_comes_back_and_it_goes_on(generated_vault: Path) -> None:
    vault = Vault.open(generated_vault)
    vault.sync()
    vault.close()
    indexer = PassIndexer.start(generated_vault, generated_vault / ".vaultmem")
    assert indexer is not None
    note = next(p for p in sorted((generated_vault / "STM").iterdir()) if p.suffix == ".md")
    rel = note.relative_to(generated_vault).as_posix()
    note.write_text(note.read_text(encoding="utf-8") + "\nan added line\n", encoding="utf-8")
    indexer.submit([123])  # type: ignore[list-item]  # not a path: the helper's sync fails
    indexer.submit([rel])
    assert indexer.wait() == [123]
    assert indexer.indexed == 1
    indexer.close()
    with Vault.open(generated_vault) as vault:
        row = vault.index.note_row(rel)
        assert row is not None and row["size"] == note.stat().st_size


def test_the_helper_ends_when_the_pass_process_is_killed(
    generated_vault: Path, tmp_path: Path
) -> None:
    Vault.open(generated_vault).sync()
    pid_file = tmp_path / "helper.pid"
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from vaultmem.services.index.pass_indexer import PassIndexer
        root = Path({str(generated_vault)!r})
        indexer = PassIndexer.start(root, root / ".vaultmem")
        Path({str(pid_file)!r}).write_text(str(indexer._process.pid))
        time.sleep(60)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 20
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.02)
    helper = int(pid_file.read_text())
    time.sleep(0.5)  # past its start-up: it watches for its parent now
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while _alive(helper):
        assert time.monotonic() < deadline, "the helper outlived the killed pass"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, reaped by init later, does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_where_no_helper_can_start_the_pass_reindexes_itself(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pass_session, "PREPARE_BATCH", 32)
    monkeypatch.setattr(pass_session, "INDEX_AHEAD_FROM", 50)
    monkeypatch.setattr(pass_indexer.sys, "executable", str(generated_vault / "no-such-python"))
    vault = Vault.open(generated_vault)
    vault.sync()
    run = vault.lifecycle(now=REFERENCE_TIME)
    assert sum(len(r.applied) for r in run.results) >= 200
    assert run.reindexed >= 200
    assert index_content(vault) == _rebuilt(vault)
    vault.close()


@pytest.mark.parametrize(
    ("answers", "left", "indexed"),
    [
        (['{"batch": 1, "ok": true}', '{"batch": 2, "error": "x"}'], ["b.md"], 1),
        (["a line that is no answer", '{"batch": 2, "ok": true}'], ["a.md", "b.md"], 0),
        (['{"batch": 2, "ok": true}', '{"batch": 1, "ok": true}'], ["a.md", "b.md"], 0),
        (['{"batch": 1, "ok": true}'], ["b.md"], 1),  # it ends before answering the second
        (['"ok"', '"ok"'], ["a.md", "b.md"], 0),
    ],
    ids=["one-fails", "stray-line", "out-of-order", "gone", "unnumbered"],
)
def test_only_an_answer_to_that_very_batch_counts_it_as_indexed(
    answers: list[str], left: list[str], indexed: int
) -> None:
    speaker = "import sys\nfor line in sys.stdin: pass\n" + "".join(
        f"print({answer!r})\n" for answer in answers
    )
    process = subprocess.Popen(
        [sys.executable, "-c", speaker], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    indexer = PassIndexer(process)
    indexer.submit(["a.md"])
    indexer.submit(["b.md"])
    assert process.stdin is not None
    process.stdin.close()  # the speaker answers once its input ends
    assert indexer.wait() == left
    assert indexer.indexed == indexed
    indexer.close()


def _answers_to(
    root: Path,
    batches: list[list[str] | str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    statements: list[str] | None = None,
) -> tuple[list[dict[str, object]], list[int]]:
    """The helper's answers to ``batches`` (or ``"commit"`` lines), all waiting before it
    starts, and the sizes of the syncs it ran (its loop, run here on a real index); the SQL it
    ran goes to ``statements``."""
    import json
    import queue

    from vaultmem.services.index import index_sync
    from vaultmem.store.index_db import IndexDB
    from vaultmem.store.settings_file import load_settings

    syncs: list[int] = []
    real_sync = index_sync.sync_paths

    def counting(
        root: Path, db: object, settings: object, paths: list[str], written: object
    ) -> object:
        syncs.append(len(paths))
        return real_sync(root, db, settings, paths, written)  # type: ignore[arg-type]

    monkeypatch.setattr(index_sync, "sync_paths", counting)
    waiting: queue.SimpleQueue[pass_indexer.Batch | str | None] = queue.SimpleQueue()
    for batch in batches:
        waiting.put(batch if isinstance(batch, str) else (batch, {}))
    waiting.put(None)
    db = IndexDB.open(root / ".vaultmem")
    if statements is not None:
        db.conn.set_trace_callback(statements.append)
    pass_indexer._answer_batches(root, db, load_settings(root), waiting)
    answers = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return answers, syncs


def test_batches_waiting_for_the_helper_are_indexed_in_one_sync(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with Vault.open(generated_vault) as vault:
        vault.sync()
    notes = sorted(p for p in (generated_vault / "STM").iterdir() if p.suffix == ".md")[:6]
    for note in notes:
        note.write_text(note.read_text(encoding="utf-8") + "\nan added line\n", encoding="utf-8")
    rels = [p.relative_to(generated_vault).as_posix() for p in notes]
    answers, syncs = _answers_to(
        generated_vault, [rels[:2], rels[2:4], rels[4:]], monkeypatch, capsys
    )
    assert answers == [{"batch": n, "ok": True} for n in (1, 2, 3)]
    assert syncs == [6]  # one sync for the three batches
    with Vault.open(generated_vault) as vault:
        assert vault.sync().any_change is False  # the helper left nothing to do


def test_a_failing_batch_among_waiting_ones_fails_alone(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with Vault.open(generated_vault) as vault:
        vault.sync()
    note = next(p for p in sorted((generated_vault / "STM").iterdir()) if p.suffix == ".md")
    rel = note.relative_to(generated_vault).as_posix()
    note.write_text(note.read_text(encoding="utf-8") + "\nan added line\n", encoding="utf-8")
    bad: list[str] = [123]  # type: ignore[list-item]  # not a path: a sync of it fails
    answers, syncs = _answers_to(generated_vault, [[rel], bad, [rel]], monkeypatch, capsys)
    assert [a["batch"] for a in answers] == [1, 2, 3]
    assert [a.get("ok") for a in answers] == [True, None, True]
    assert str(answers[1]["error"]).startswith(("TypeError", "AttributeError"))
    assert syncs == [3, 1, 1, 1]  # the group failed: each batch again on its own


def test_a_note_handed_over_with_its_text_is_indexed_from_it_unless_it_changed(
    generated_vault: Path,
) -> None:
    from vaultmem.services.index.index_sync import WrittenNote

    with Vault.open(generated_vault) as vault:
        vault.sync()
    first, second = sorted(p for p in (generated_vault / "STM").iterdir() if p.suffix == ".md")[:2]
    handed: dict[str, WrittenNote] = {}
    for note, word in ((first, "kumquat"), (second, "quince")):
        text = note.read_text(encoding="utf-8") + f"\n{word}\n"
        note.write_text(text, encoding="utf-8")
        info = note.stat()
        # the same size, another word: which one the index holds tells where it was read from
        handed[note.relative_to(generated_vault).as_posix()] = WrittenNote(
            text.replace(word, "z" * len(word)), info.st_size, info.st_mtime_ns
        )
    second_rel = second.relative_to(generated_vault).as_posix()
    handed[second_rel] = handed[second_rel]._replace(mtime_ns=handed[second_rel].mtime_ns - 1)
    indexer = PassIndexer.start(generated_vault, generated_vault / ".vaultmem")
    assert indexer is not None
    indexer.submit(list(handed), handed)
    assert indexer.wait() == []
    indexer.close()
    with Vault.open(generated_vault) as vault:
        conn = vault.index.conn
        bodies = dict(
            conn.execute(
                "SELECT n.path, f.body FROM notes n JOIN notes_fts f ON f.rowid = n.nid "
                "WHERE n.path IN (?, ?)",
                list(handed),
            ).fetchall()
        )
        first_rel = first.relative_to(generated_vault).as_posix()
        assert "zzzzzzz" in bodies[first_rel] and "kumquat" not in bodies[first_rel]
        # its stamp is not what the walk finds: someone else's write could hide behind it
        assert vault.sync().changed == 1  # ...so the next sync reads it, and finds the disk's
        assert (
            "kumquat"
            in conn.execute(
                "SELECT f.body FROM notes n JOIN notes_fts f ON f.rowid = n.nid WHERE n.path = ?",
                (first_rel,),
            ).fetchone()[0]
        )
        assert "quince" in bodies[second_rel]  # another mtime than handed over: read from disk


def _edited_notes(root: Path, count: int) -> list[str]:
    """``count`` notes of the synced vault at ``root``, each given a line more."""
    with Vault.open(root) as vault:
        vault.sync()
    notes = sorted(p for p in (root / "STM").iterdir() if p.suffix == ".md")[:count]
    for note in notes:
        note.write_text(note.read_text(encoding="utf-8") + "\nan added line\n", encoding="utf-8")
    return [p.relative_to(root).as_posix() for p in notes]


def test_batches_are_committed_together_and_answered_once_committed(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rels = _edited_notes(generated_vault, 3)
    monkeypatch.setattr(pass_indexer, "COALESCE_PATHS", 1)  # one sync a batch
    statements: list[str] = []
    answers, syncs = _answers_to(
        generated_vault,
        [[rels[0]], [rels[1]], "commit", [rels[2]]],
        monkeypatch,
        capsys,
        statements,
    )
    assert answers == [{"batch": n, "ok": True} for n in (1, 2, 3)]
    assert syncs == [1, 1, 1]
    # the first two in one transaction (committed as the pass asked), the third at the end
    assert [s for s in statements if s in ("BEGIN IMMEDIATE", "COMMIT")] == [
        "BEGIN IMMEDIATE", "COMMIT", "BEGIN IMMEDIATE", "COMMIT",
    ]  # fmt: skip
    with Vault.open(generated_vault) as vault:
        assert vault.sync().any_change is False


def test_a_batch_failing_after_others_in_the_transaction_leaves_them_indexed(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rels = _edited_notes(generated_vault, 2)
    monkeypatch.setattr(pass_indexer, "COALESCE_PATHS", 1)
    bad: list[str] = [123]  # type: ignore[list-item]  # not a path: a sync of it fails
    answers, syncs = _answers_to(generated_vault, [[rels[0]], bad, [rels[1]]], monkeypatch, capsys)
    assert [a.get("ok") for a in answers] == [True, None, True]
    # the failure rolled back the transaction: the batch before it was indexed again, alone
    assert syncs == [1, 1, 1, 1, 1]
    with Vault.open(generated_vault) as vault:
        assert vault.sync().any_change is False  # both edited notes are indexed


def test_what_the_helper_holds_is_committed_within_commit_seconds(
    generated_vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer (a watcher's sync) waits for the helper's transaction at most about
    COMMIT_SECONDS, though the pass asks for nothing."""
    rels = _edited_notes(generated_vault, 1)
    monkeypatch.setattr(pass_indexer, "COMMIT_SECONDS", 0.2)
    import queue
    import threading

    from vaultmem.store.index_db import IndexDB
    from vaultmem.store.settings_file import load_settings

    waiting: queue.SimpleQueue[pass_indexer.Batch | str | None] = queue.SimpleQueue()
    waiting.put((rels, {}))
    db = IndexDB.open(generated_vault / ".vaultmem")
    helper = threading.Thread(
        target=pass_indexer._answer_batches,
        args=(generated_vault, db, load_settings(generated_vault), waiting),
    )
    helper.start()
    try:
        deadline = time.monotonic() + 10
        while not db.conn.in_transaction and time.monotonic() < deadline:
            time.sleep(0.005)
        assert db.conn.in_transaction  # the helper has begun (and holds the write lock)
        with Vault.open(generated_vault) as vault:
            started = time.monotonic()
            assert vault.sync().any_change is False  # it waited for the helper's commit...
            assert time.monotonic() - started < 5  # ...not the 30 s an opener waits at most
    finally:
        waiting.put(None)
        helper.join()
