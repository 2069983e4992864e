"""Every command against every damaged or hostile vault state: one line and exit 0/1/2, never a
traceback.

:data:`COMMAND_ARGS` is the table of arguments per command; a command of ``vaultmem.cli.main``
without an entry fails :func:`test_every_command_has_an_entry` loudly, so a new command gets
its row here. ``watch`` runs in a subprocess with a deadline (it runs until stopped);
``demo`` builds its own vault, so it runs once, in fresh and hostile folders of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from vaultmem import Vault
from vaultmem.cli import main

NOW = "2026-11-20T09:00:00"
LATER = "2027-06-01T09:00:00"

COMMAND_ARGS: dict[str, list[list[str]]] = {
    "init": [["{vault}"]],
    "remember": [["A new memory about hostile vaults", "--now", NOW]],
    "import": [["{jsonl}", "--now", NOW]],
    "show": [["Coffee order"], ["Kyoto"]],
    "touch": [["Coffee order", "--now", NOW]],
    "observe": [["Coffee order", "--context-tags", "food", "--now", NOW]],
    "pin": [["Coffee order"]],
    "unpin": [["Coffee order"]],
    "list": [[], ["--json"]],
    "status": [["--now", NOW]],
    "gc": [["--dry-run", "--now", LATER], ["--now", LATER]],
    "promote": [["--now", LATER]],
    "demo": [["--dir", "{fresh}", "--now", NOW]],
    "index": [[], ["--rebuild"]],
    "links": [["Coffee order"]],
    "graph": [[]],
    "doctor": [[]],
    "lifecycle": [["--dry-run", "--now", LATER], ["--now", LATER]],
    "seal": [["--now", LATER]],
    "expire": [["--now", LATER]],
    "prune": [["--now", LATER]],
    "undo": [[]],
    "recall": [["coffee"], ["passwd", "--json"]],
    "review": [["--now", NOW]],
    "watch": [],  # runs until stopped: see test_watch_against_each_hostile_state
    "mcp": [],  # serves until stdin closes: see test_mcp_against_each_hostile_state
    "forget": [["Tea", "--dry-run", "--now", NOW], ["Tea", "--now", NOW]],
    "merge-driver": [
        ["{vault}/STM/Tea.md", "{vault}/STM/Tea.md", "{vault}/STM/Tea.md", "STM/Tea.md"]
    ],
    "embed": [["--status"], ["--status", "--json"], ["--all"], ["Coffee order"]],
    "consolidate": [["--dry-run", "--now", NOW], ["--now", LATER, "--json"]],
}
"""Arguments of each command (one list per invocation). ``{vault}``, ``{jsonl}`` and ``{fresh}``
are filled in; every command but ``init`` and ``demo`` also gets ``--vault``."""

NO_VAULT_OPTION = {"init", "demo", "merge-driver"}
STATE_INDEPENDENT = {"demo"}
"""Commands that build their own vault: run once, in test_demo_in_fresh_and_hostile_folders."""
ALLOWED_EXIT_CODES = {0, 1, 2}

MEMORY = (
    "---\nid: {id}\ntype: memory\nstatus: active\nlayer: working\ncategory: fact\n"
    "created: 2026-01-01T09:00:00\nlast_used: 2026-01-01T09:00:00\nuse_count: 1\n"
    "strength: 1.0\nimportance: 0.2\nconfidence: 1.0\nsource: human\npinned: false\n"
    "tags: [food]\n---\n{body}\n"
)


def write_base_vault(root: Path) -> None:
    Vault.init(root)
    with Vault.open(root) as vault:
        vault.remember("Coffee order: flat white with oat milk", title="Coffee order", now=None)
        vault.remember("Tea in the afternoon, green", title="Tea", now=None)
    (root / "STM" / "Old snack.md").write_text(
        MEMORY.format(id="01JOLDSNACK000000000000000", body="Old snack: crackers [[Kyoto]]")
    )
    (root / "Kyoto.md").write_text("# Kyoto\nA person's own note about temples.\n")
    with Vault.open(root) as vault:
        vault.sync()


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Make ``folder`` read-only for this process: permissions, or (as root, where permissions
    do not bind) a read-only bind mount of it onto itself."""
    mode = folder.stat().st_mode
    os.chmod(folder, stat.S_IMODE(mode) & ~0o222)
    mounted = False
    try:
        probe = folder / ".probe"
        try:
            probe.write_text("x")
            probe.unlink()
            writable = True
        except OSError:
            writable = False
        if writable:
            done = subprocess.run(
                ["mount", "--bind", str(folder), str(folder)], capture_output=True
            )
            if done.returncode != 0:
                pytest.fail(f"cannot make {folder} read-only here: {done.stderr!r}")
            mounted = True
            done = subprocess.run(
                ["mount", "-o", "remount,bind,ro", str(folder)], capture_output=True
            )
            if done.returncode != 0:
                pytest.fail(f"cannot make {folder} read-only here: {done.stderr!r}")
        yield
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], check=True)
        os.chmod(folder, stat.S_IMODE(mode))


def damage_index(root: Path) -> None:
    """Overwrite the pages of a few tables and indexes: the file opens, queries then fail with
    "database disk image is malformed" (what a torn write or a bad disk leaves)."""
    db = root / ".vaultmem" / "index.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = [
        page
        for (page,) in conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE name IN "
            "('links', 'tags', 'notes_name_key', 'notes_fts_data', 'notes_fts_content')"
        )
    ]
    conn.close()
    with open(db, "r+b") as handle:
        for page in pages:
            handle.seek((page - 1) * page_size)
            handle.write(b"\xa5" * page_size)


def sidecar_as_file(root: Path) -> None:
    shutil.rmtree(root / ".vaultmem")
    (root / ".vaultmem").write_text("not a folder\n")


def index_as_folder(root: Path) -> None:
    for name in ("index.db", "index.db-wal", "index.db-shm"):
        (root / ".vaultmem" / name).unlink(missing_ok=True)
    (root / ".vaultmem" / "index.db").mkdir()


def lock_as_folder(root: Path) -> None:
    (root / ".vaultmem" / "lock").unlink(missing_ok=True)
    (root / ".vaultmem" / "lock").mkdir()


def _symlinks_out(root: Path) -> None:
    (root / "STM" / "passwd.md").symlink_to("/etc/passwd")
    (root / "STM" / "environ.md").symlink_to("/proc/self/environ")
    (root / "Etc").symlink_to("/etc")


def _bad_folders(root: Path) -> None:
    (root / "vaultmem.toml").write_text('[folders]\narchive = "../outside"\n')


def _crafted_journal(root: Path) -> None:
    folder = root / ".vaultmem" / "journal"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "20260101T000000000000-lifecycle.jsonl").write_text(
        '{"journal": 1, "command": "lifecycle", "now": "2026-01-01T00:00:00+00:00"}\n'
        '{"op": "move", "seq": 1, "source": "STM/Tea.md", "target": "../../escaped.md", '
        '"before": "x", "after": "y"}\n'
        '{"op": "create", "seq": 2, "source": null, "target": "../crafted-escape.md", '
        '"before": null, "after": "owned"}\n'
        '{"op": "delete", "seq": 3, "source": null, "target": "Kyoto.md", '
        '"before": "x", "after": null}\n'
        "not json at all\n"
    )


def _non_utf8_note(root: Path) -> None:
    text = MEMORY.format(id="01JLATIN10000000000000000A", body="Caf\xe9 cr\xe8me")
    (root / "STM" / "Latin.md").write_bytes(text.encode("latin-1"))


def _conflict_note(root: Path) -> None:
    (root / "STM" / "Conflict.md").write_text(
        MEMORY.format(
            id="01JCONFLICT000000000000000",
            body="<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> other\n",
        )
    )


def _bad_yaml_note(root: Path) -> None:
    (root / "STM" / "Broken yaml.md").write_text(
        "---\ntype: memory\ntags: [unclosed\nid: : :\n---\nbroken\n"
    )


STATES: dict[str, Callable[[Path], None]] = {
    "damaged index page": damage_index,
    "read-only .vaultmem": lambda root: None,  # applied around the run by read_only()
    "read-only STM": lambda root: None,
    ".vaultmem is a file": sidecar_as_file,
    "index.db is a folder": index_as_folder,
    "lock is a folder": lock_as_folder,
    "symlinks out of the vault": _symlinks_out,
    "bad [folders]": _bad_folders,
    "crafted journal": _crafted_journal,
    "non-UTF-8 note": _non_utf8_note,
    "conflict-marked note": _conflict_note,
    "unparsable YAML": _bad_yaml_note,
}
READ_ONLY = {"read-only .vaultmem": ".vaultmem", "read-only STM": "STM"}


@pytest.fixture(scope="module")
def base_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("base") / "vault"
    write_base_vault(root)
    return root


def _argv(name: str, args: list[str], root: Path, tmp: Path) -> list[str]:
    jsonl = tmp / "memories.jsonl"
    if not jsonl.exists():
        jsonl.write_text('{"content": "Imported memory one"}\n{"content": {"nested": 1}}\n')
    fresh = tmp / f"demo-{time.monotonic_ns()}"
    filled = [
        a.replace("{vault}", str(root))
        .replace("{jsonl}", str(jsonl))
        .replace("{fresh}", str(fresh))
        for a in args
    ]
    if name not in NO_VAULT_OPTION:
        filled += ["--vault", str(root)]
    return [name, *filled]


def test_every_command_has_an_entry() -> None:
    missing = sorted(set(main.all_commands()) - set(COMMAND_ARGS))
    assert not missing, (
        f"commands without arguments in tests/test_hostile_states.py COMMAND_ARGS: {missing}; "
        "add a row for each so it is run against every hostile vault state"
    )


@pytest.mark.parametrize("state", list(STATES))
def test_every_command_against_a_hostile_state(
    state: str, base_vault: Path, tmp_path: Path
) -> None:
    root = tmp_path / "vault"
    shutil.copytree(base_vault, root, symlinks=True)
    STATES[state](root)
    runner = CliRunner()
    failures: list[str] = []
    everything = ""
    guard = read_only(root / READ_ONLY[state]) if state in READ_ONLY else contextlib.nullcontext()
    with guard:
        for name in sorted(set(main.all_commands()) - STATE_INDEPENDENT):
            for args in COMMAND_ARGS[name]:
                argv = _argv(name, args, root, tmp_path)
                result = runner.invoke(main, argv, catch_exceptions=True)
                output = result.stdout + result.stderr
                everything += output
                if result.exception is not None and not isinstance(result.exception, SystemExit):
                    failures.append(f"{argv}: raised {result.exception!r}")
                elif "Traceback" in output:
                    failures.append(f"{argv}: traceback in output:\n{output}")
                elif result.exit_code not in ALLOWED_EXIT_CODES:
                    failures.append(f"{argv}: exit {result.exit_code}")
                elif result.exit_code == 1 and not output.strip():
                    failures.append(f"{argv}: exit 1 without a message")
    assert not failures, f"state {state!r}:\n" + "\n".join(failures)
    # nothing reached outside the vault through the states this test owns
    assert not (root.parent / "outside").exists()
    assert "root:x:0" not in everything
    environ = Path("/proc/self/environ")
    if environ.exists():  # Linux: no variable of this process shows up in any output
        pairs = environ.read_bytes().decode("utf-8", "replace").split("\0")
        assert not [p for p in pairs if "=" in p and len(p) > 8 and p in everything]


def test_demo_in_fresh_and_hostile_folders(tmp_path: Path) -> None:
    runner = CliRunner()
    (tmp_path / "a file").write_text("x")
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "note.md").write_text("a person's note\n")
    for name in sorted(STATE_INDEPENDENT):
        for args in COMMAND_ARGS[name]:
            result = runner.invoke(main, _argv(name, args, tmp_path / "unused", tmp_path))
            assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    for target in ("a file", "used"):
        result = runner.invoke(main, ["demo", "--dir", str(tmp_path / target), "--now", NOW])
        assert result.exit_code in ALLOWED_EXIT_CODES and "Traceback" not in result.output
        assert result.exit_code != 0
    assert (tmp_path / "used" / "note.md").read_text() == "a person's note\n"


@pytest.mark.parametrize("state", list(STATES))
def test_watch_against_each_hostile_state(state: str, base_vault: Path, tmp_path: Path) -> None:
    """``watch`` either says in one line why it cannot run, or runs and stops on SIGINT."""
    root = tmp_path / "vault"
    shutil.copytree(base_vault, root, symlinks=True)
    STATES[state](root)
    guard = read_only(root / READ_ONLY[state]) if state in READ_ONLY else contextlib.nullcontext()
    with guard:
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from vaultmem.cli import main; main()",
                "watch",
                "--vault",
                str(root),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            ready = selectors.DefaultSelector()
            ready.register(process.stdout, selectors.EVENT_READ)
            # the first line is "watching …" once the initial sync is done; or it exits first
            first = process.stdout.readline() if ready.select(timeout=30) else ""
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
            out, err = process.communicate(timeout=30)
            out = first + out
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    assert "Traceback" not in out + err, err
    assert process.returncode in ALLOWED_EXIT_CODES, (process.returncode, err)


def _rpc(method: str, rid: int | None, params: dict[str, object]) -> str:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method, "params": params}
    if rid is not None:
        message["id"] = rid
    return json.dumps(message) + "\n"


@pytest.mark.parametrize("state", list(STATES))
def test_mcp_against_each_hostile_state(state: str, base_vault: Path, tmp_path: Path) -> None:
    """``mcp`` either says in one line why it cannot serve, or answers tool calls (errors as
    tool errors) and exits when its client closes stdin — never a traceback."""
    root = tmp_path / "vault"
    shutil.copytree(base_vault, root, symlinks=True)
    STATES[state](root)
    guard = read_only(root / READ_ONLY[state]) if state in READ_ONLY else contextlib.nullcontext()
    initialize = _rpc(
        "initialize",
        1,
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "hostile-test", "version": "0"},
        },
    )
    calls = [  # one at a time, each once the last was answered, as a client does
        _rpc("notifications/initialized", None, {})
        + _rpc("tools/call", 2, {"name": "status", "arguments": {}}),
        _rpc("tools/call", 3, {"name": "recall", "arguments": {"query": "passwd"}}),
        _rpc("tools/call", 4, {"name": "show", "arguments": {"id_or_title": "Coffee order"}}),
    ]
    with guard:
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from vaultmem.cli import main; main()",
                "mcp",
                "--vault",
                str(root),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(initialize)
            process.stdin.flush()
            answered: list[str] = []
            ready = selectors.DefaultSelector()
            ready.register(process.stdout, selectors.EVENT_READ)
            deadline = time.monotonic() + 120
            while len(answered) < 4 and time.monotonic() < deadline:
                if not ready.select(timeout=deadline - time.monotonic()):
                    break
                line = process.stdout.readline()
                if not line:
                    break  # it exited (e.g. a one-line error on stderr)
                answered.append(line)
                if len(answered) <= len(calls):
                    process.stdin.write(calls[len(answered) - 1])
                    process.stdin.flush()
            out, err = process.communicate(timeout=30)  # closes stdin: the client leaves
        finally:
            if process.poll() is None:
                process.kill()
                process.communicate()
    everything = "".join(answered) + out + err
    assert "Traceback" not in everything, err
    assert "SECRET" not in everything and "root:x:" not in everything
    assert process.returncode in ALLOWED_EXIT_CODES, (process.returncode, err)
    if process.returncode == 0:
        assert len(answered) == 4, (answered, err)
