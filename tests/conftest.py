"""Shared fixtures: every test runs against files under tmp_path, never the developer's home."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import settings

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.services.index import index_stamps

settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))
# New vaults say `provider = "auto"`: with the embeddings extra installed every test vault would
# load the model. Tests about embeddings name `provider = "local"`; the others stay on keywords
# (subprocesses inherit this). tests/test_embeddings.py checks "auto" itself.
os.environ.setdefault("VAULTMEM_EMBEDDINGS", "off")
"""The property tests draw the same examples on every run, so a run of the suite passes or fails
for the code alone (CI lands a submission or not on one run). ``HYPOTHESIS_PROFILE=explore``
draws new random examples on each run: run it a few times when changing the parsers."""

if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
"""A suite started as a background job of a non-interactive shell (``pytest … &``) begins with
SIGINT ignored (POSIX), and every process it starts inherits that: the tests that stop ``watch``
or interrupt a pass with SIGINT would wait out their deadlines. Python's Ctrl-C handler is put
back first (a process started with SIG_DFL installs it; one started with SIG_IGN keeps that)."""

REAL_VAULTS = Path(__file__).resolve().parent / "vaults"
"""The real Obsidian vaults shipped with the tests (kepano-obsidian, MIT; 13th-age-srd, OGL 1.0a).
Read-only for tests: a test that changes a vault copies it first (:func:`copy_vault`)."""
SHARED_VAULTS = REAL_VAULTS  # the name older tests import


@pytest.fixture
def generated_vault(tmp_path: Path) -> Path:
    """A new vault of 1,500 memories made by the benchmarks' generator (seed 0): big enough for
    a lifecycle run of several hundred moves in several batches."""
    repo = str(Path(__file__).resolve().parents[1])
    if repo not in sys.path:  # benchmarks/ is not installed; plain `pytest` lacks the repo
        sys.path.insert(0, repo)
    from benchmarks.generate_vault import generate_vault

    root = tmp_path / "vault"
    generate_vault(root, 1500, seed=0)
    return root


def _fingerprint_vaults() -> dict[str, tuple[int, int]]:
    return {
        p.relative_to(REAL_VAULTS).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(REAL_VAULTS.rglob("*"))
    }


@pytest.fixture(scope="session", autouse=True)
def _real_vaults_untouched() -> Iterator[None]:
    """Fails the session when any test created, changed or removed a file in tests/vaults."""
    before = _fingerprint_vaults()
    yield
    after = _fingerprint_vaults()
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"tests wrote into tests/vaults (copy to tmp_path first): {changed[:5]}"


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No test reads VAULTMEM_* from the developer's shell or writes outside tmp_path."""
    for name in ("VAULTMEM_VAULT", "VAULTMEM_NOW"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    yield


def _make_writable(root: Path) -> None:
    for folder, _dirs, files in os.walk(root):
        os.chmod(folder, os.stat(folder).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        for name in files:
            path = os.path.join(folder, name)
            os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)


@pytest.fixture
def copy_vault(tmp_path: Path) -> Callable[[str], Path]:
    """Copy one of ``tests/vaults/<name>`` into tmp_path (writable) and return its path."""

    def copy(name: str) -> Path:
        source = SHARED_VAULTS / name
        if not source.is_dir():
            pytest.fail(f"real vault {source} is missing from tests/vaults")
        target = tmp_path / name
        shutil.copytree(source, target)
        _make_writable(target)
        return target

    return copy


def run_cli(*args: str, vault: Path) -> tuple[int, str, str]:
    """``vaultmem ARGS --vault VAULT`` through click's CliRunner: (exit code, stdout, stderr);
    an exception other than an exit fails the test."""
    result = CliRunner().invoke(main, [*args, "--vault", str(vault)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def snapshot_files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (outside .vaultmem/) → its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".vaultmem" not in p.relative_to(root).parts
    }


def split_note(text: str) -> tuple[dict[str, object], str]:
    """(frontmatter, body) of a note, independently of vaultmem's own parser (for link tests);
    frontmatter YAML that does not load is kept as one string."""
    if text.startswith("---\n"):
        end = text.find("\n---", 3)
        if end != -1:
            raw = text[4:end]
            try:
                loaded = yaml.safe_load(raw)
            except yaml.YAMLError:  # templates such as ``created: {{date}}``
                loaded = {"unparsed": raw}
            newline = text.find("\n", end + 4)
            body = text[newline + 1 :] if newline != -1 else ""
            return (loaded if isinstance(loaded, dict) else {}), body
    return {}, text


def vault_notes(root: Path) -> dict[str, str]:
    """Vault-relative path → text of every ``.md`` note outside dot folders."""
    if not root.is_dir():
        pytest.fail(f"real vault {root} is missing from tests/vaults")
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*.md"))
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


def index_content(vault: Vault) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the index keyed by paths instead of row ids (which depend on the order
    notes were added in), each table sorted."""
    return index_rows(vault.index.conn)


def index_rows(conn: sqlite3.Connection) -> dict[str, list[tuple[object, ...]]]:
    """:func:`index_content` of an index's connection."""
    columns = [row[1] for row in conn.execute("PRAGMA table_info(notes)") if row[1] != "nid"]
    path_of = dict(conn.execute("SELECT nid, path FROM notes").fetchall())
    links = conn.execute(
        "SELECT nid, target, target_key, subpath, kind, resolved, resolved_nid FROM links"
    ).fetchall()
    stamp = columns.index("mtime_ns")
    notes = [list(row) for row in conn.execute(f"SELECT {', '.join(columns)} FROM notes")]
    for row in notes:  # a pending stamp (read within a clock tick of the write) is the mtime
        row[stamp] = row[stamp] if row[stamp] >= 0 else index_stamps.racy_stamp(row[stamp])
    return {
        "notes": sorted(map(tuple, notes), key=repr),
        "tags": sorted((path_of[nid], tag) for nid, tag in conn.execute("SELECT * FROM tags")),
        "fts": sorted(
            (path_of[nid], title, body, tags)
            for nid, title, body, tags in conn.execute(
                "SELECT rowid, title, body, tags FROM notes_fts"
            )
        ),
        "links": sorted(
            (
                (path_of[nid], *rest[:-1], path_of.get(rest[-1]) if rest[-1] is not None else None)
                for nid, *rest in links
            ),
            key=repr,
        ),
        "attachments": sorted(conn.execute("SELECT path, name_key FROM attachments").fetchall()),
    }
