"""`vaultmem mcp` as a real subprocess, driven through the MCP SDK's own stdio client.

One server serves the whole module (starting one costs about a second); each test uses words and
titles of its own so the tests do not see each other's memories.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import start_blocking_portal
from click.testing import CliRunner
from conftest import snapshot_files
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.core.notes.naming import safe_title
from vaultmem.services.index.live_index import index_is_live
from vaultmem.store.vault_lock import vault_lock

TOOLS = {
    "remember",
    "recall",
    "show",
    "read_note",
    "list",
    "recent",
    "touch",
    "observe",
    "edit",
    "link",
    "pin",
    "unpin",
    "forget",
    "promote",
    "review",
    "status",
    "links",
    "lifecycle",
    "consolidate",
    "undo",
    "journal",
    "embed_status",
    "doctor",
}
READ_ONLY = {
    "recall",
    "show",
    "read_note",
    "list",
    "recent",
    "review",
    "status",
    "links",
    "journal",
    "embed_status",
    "doctor",
}
DESTRUCTIVE = {"forget", "lifecycle", "undo"}
OLD_NOTE = """---
id: {id}
type: memory
status: active
layer: working
category: fact
created: 2020-01-01T09:00:00
last_used: 2020-01-01T09:00:00
use_count: 1
strength: 1.0
importance: 0.3
confidence: 1.0
source: human
pinned: false
tags: [old]
---
{text}
"""


def _command() -> list[str]:
    script = Path(sys.executable).with_name("vaultmem")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from vaultmem.cli import main; main()"]


class Client:
    """A ClientSession on a portal thread, called synchronously from the tests."""

    def __init__(self, root: Path, errlog: Path) -> None:
        self.root = root
        self._stack = ExitStack()
        self.portal = self._stack.enter_context(start_blocking_portal())
        command = _command()
        params = StdioServerParameters(
            command=command[0],
            args=[*command[1:], "mcp", "--vault", str(root), "--lock-wait", "0.3"],
            env={**os.environ, "VAULTMEM_VAULT": ""},
        )
        self._err = self._stack.enter_context(errlog.open("w"))
        read, write = self._stack.enter_context(
            self.portal.wrap_async_context_manager(stdio_client(params, errlog=self._err))
        )
        self.session = self._stack.enter_context(
            self.portal.wrap_async_context_manager(ClientSession(read, write))
        )
        self.portal.call(self.session.initialize)

    def call(self, name: str, **arguments: Any) -> CallToolResult:
        result = self.portal.call(self.session.call_tool, name, arguments)
        assert isinstance(result, CallToolResult)
        return result

    def ok(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = self.call(name, **arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return dict(result.structured_content)

    def error(self, name: str, **arguments: Any) -> str:
        result = self.call(name, **arguments)
        assert result.is_error
        text = result.content[0].text  # type: ignore[union-attr]
        assert "\n" not in text.strip()
        return str(text)

    def close(self) -> None:
        self._stack.close()


@contextmanager
def serving_new_vault(folder: Path) -> Iterator[Client]:
    """A client of a server on a new vault ``folder/vault`` (its stderr in ``folder``)."""
    vault, _ = Vault.init(folder / "vault")
    vault.close()
    client = Client(vault.root, folder / "server-stderr.txt")
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    with serving_new_vault(tmp_path_factory.mktemp("mcp")) as client:
        yield client


def wait_until_indexed(served: Client, ref: str, timeout: float = 15.0) -> None:
    """Poll ``show`` until the server's watcher has indexed the note ``ref``."""
    deadline = time.monotonic() + timeout
    while served.call("show", id_or_title=ref).is_error:
        assert time.monotonic() < deadline, f"{ref} was not indexed within {timeout} s"
        time.sleep(0.02)


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_every_tool_is_listed_with_annotations_and_a_description(served: Client) -> None:
    listed = served.portal.call(served.session.list_tools).tools
    assert {tool.name for tool in listed} == TOOLS
    for tool in listed:
        assert tool.description and len(tool.description) > 40, tool.name
        hints = tool.annotations
        assert hints is not None
        assert hints.read_only_hint is (tool.name in READ_ONLY), tool.name
        assert hints.destructive_hint is (tool.name in DESTRUCTIVE), tool.name
        assert hints.idempotent_hint is not None
    recall = next(t for t in listed if t.name == "recall")
    assert {"query", "k", "tag", "folder", "explain"} <= set(recall.input_schema["properties"])


def test_remember_show_recall_touch_carry_the_text(served: Client) -> None:
    made = served.ok(
        "remember",
        content="Coffee order: flat white with oat milk",
        title="Coffee order",
        tags=["food"],
        importance=0.7,
    )
    assert made["path"] == "STM/Coffee order.md" and made["id"]
    assert made["outcome"] == "written"
    assert made["memory"]["text"] == "Coffee order: flat white with oat milk"
    assert made["memory"]["source"] == "agent" and made["memory"]["tags"] == ["food"]
    by_title = served.ok("show", id_or_title="coffee order")
    assert by_title["id"] == made["id"] and by_title["text"] == made["memory"]["text"]
    found = served.ok("recall", query="oat milk coffee", k=3)
    hit = found["hits"][0]
    assert (hit["id"], hit["title"], hit["path"]) == (
        made["id"],
        "Coffee order",
        "STM/Coffee order.md",
    )
    assert hit["text"] == "Coffee order: flat white with oat milk" and hit["score"] > 0
    assert "signals" not in hit
    explained = served.ok("recall", query="oat milk coffee", k=3, explain=True)["hits"][0]
    assert {"relevance", "decay", "graph", "bm25"} <= set(explained["signals"])
    result = served.call("recall", query="oat milk coffee")
    assert "flat white with oat milk" in text_of(result)
    touched = served.ok("touch", id_or_title=str(made["id"]))
    assert touched["use_count"] == 2
    observed = served.ok("observe", ids=[str(made["id"])], context=["travel"])
    assert observed["memories"][0]["use_count"] == 3


def test_links_review_status_doctor(served: Client) -> None:
    served.ok("remember", content="The greenhouse heater runs on propane", title="Heater fuel")
    served.ok("remember", content="Refill before frost, see [[Heater fuel]]", title="Frost plan")
    around = served.ok("links", id_or_title="Heater fuel")
    # the body's wikilink (and the auto-link in `related:`, when the words overlap enough)
    assert {b["title"] for b in around["backlinks"]} == {"Frost plan"}
    assert "wikilink" in {kind for b in around["backlinks"] for kind in b["kinds"]}
    assert served.ok("links", id_or_title="Frost plan")["outgoing"][0]["title"] == "Heater fuel"
    assert isinstance(served.ok("review", k=5)["memories"], list)
    status = served.ok("status")
    assert status["memories"] >= 2 and "STM/" in status["by_folder"]
    report = served.ok("doctor")
    assert report["problems"] == [] and report["notes"] >= 2


def test_forget_lifecycle_and_undo(served: Client) -> None:
    root = served.root
    made = served.ok("remember", content="Staging DB listens on port 5433", title="Staging port")
    forgotten = served.ok("forget", id_or_title=str(made["id"]))
    assert forgotten["applied"][0]["destination"] == "Archive/Staging port.md"
    assert (root / "Archive/Staging port.md").exists()
    assert "already" in served.error("forget", id_or_title=str(made["id"]))
    served.ok("undo")
    assert (root / "STM/Staging port.md").exists() and not (
        root / "Archive/Staging port.md"
    ).exists()
    (root / "STM/Faded fact.md").write_text(OLD_NOTE.format(id="faded1", text="a faded fact"))
    wait_until_indexed(served, "faded1")
    before = snapshot_files(root)
    plan = served.ok("lifecycle", passes=["forget"])
    assert plan["dry_run"] is True
    assert "STM/Faded fact.md" in [m["path"] for m in plan["passes"][0]["planned"]]
    assert snapshot_files(root) == before  # a dry run changes nothing
    applied = served.ok("lifecycle", passes=["forget"], apply=True)
    assert "STM/Faded fact.md" in [m["path"] for m in applied["passes"][0]["applied"]]
    assert (root / "Archive/Faded fact.md").exists()
    served.ok("undo")
    assert (root / "STM/Faded fact.md").read_bytes() == before["STM/Faded fact.md"]


def test_errors_are_one_line_tool_errors_and_the_server_keeps_serving(served: Client) -> None:
    root = served.root
    assert "no memory with id or title 'no-such-id'" in served.error(
        "show", id_or_title="no-such-id"
    )
    for folder in ("Notes", "Other"):
        (root / folder).mkdir(exist_ok=True)
        (root / folder / "Twin.md").write_text(OLD_NOTE.format(id=f"twin-{folder}", text="twin"))
    deadline = time.monotonic() + 5
    message = ""
    while time.monotonic() < deadline:  # the watcher indexes both within a moment
        message = served.error("show", id_or_title="Twin")
        if "2 notes are named" in message:
            break
        time.sleep(0.05)
    assert "2 notes are named 'Twin'" in message and "use the id" in message
    made = served.ok("remember", content="A memory with a merge conflict", title="Conflicted")
    path = root / str(made["path"])
    # saved as git and editors do (a new file renamed over the note): the server's watcher
    # never reads it half written (emptied, without its id, just before ``touch`` asks)
    temp = path.with_name(".Conflicted.md.tmp")
    temp.write_text(path.read_text() + "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> b\n")
    os.replace(temp, path)
    conflicted = path.read_bytes()
    message = served.error("touch", id_or_title=str(made["id"]))
    assert "conflict markers" in message and "Conflicted.md" in message
    assert path.read_bytes() == conflicted
    other = served.ok("remember", content="Another memory to reinforce", title="Lock test")
    with vault_lock(root / ".vaultmem"):  # as a pass in another process would
        message = served.error("touch", id_or_title=str(other["id"]))
        assert "a pass is running" in message and "try again" in message
        assert "a pass is running" in served.error("forget", id_or_title=str(other["id"]))
        assert served.ok("recall", query="another memory reinforce")["hits"]  # reads still work
    assert served.ok("touch", id_or_title=str(other["id"]))["use_count"] == 2
    assert served.call("recall", query="x", k=0).is_error  # the SDK checks the schema: k ≥ 1
    assert served.ok("status")["notes"] > 0


def test_a_note_saved_while_serving_is_recalled_within_a_second(served: Client) -> None:
    root = served.root
    assert index_is_live(root / ".vaultmem")  # the server's watcher keeps a heartbeat
    for i in range(3):
        rel = f"STM/Saved in Obsidian {i}.md"
        word = f"zebrawidget{i}"
        saved = time.monotonic()
        (root / rel).write_text(OLD_NOTE.format(id=f"obs{i}", text=f"the {word} lives here"))
        hits: list[dict[str, Any]] = []
        while time.monotonic() - saved < 5 and not hits:
            hits = served.ok("recall", query=word, k=1)["hits"]
        elapsed = time.monotonic() - saved
        assert [h["path"] for h in hits] == [rel]
        assert elapsed < 1.0, f"found after {elapsed:.2f} s"
    # the CLI trusts the live index too (no walk), and finds what the watcher indexed
    result = CliRunner().invoke(main, ["recall", "zebrawidget2", "--vault", str(root)])
    assert result.exit_code == 0 and "STM/Saved in Obsidian 2.md" in result.stdout


@pytest.mark.parametrize(
    "ref",
    [
        "../../x",
        "../vault/STM/Coffee order",
        "/etc/passwd",
        "..\\..\\x",
        "a/b/../../c",
        "STM/../../outside",
        "~/secret",
        "\x00",
        "Coffee order/../../../x",
    ],
)
def test_ids_and_titles_never_reach_outside_the_vault(served: Client, ref: str) -> None:
    root = served.root
    outside = root.parent
    (outside / "outside.md").write_text(OLD_NOTE.format(id="outside", text="secret outside"))
    before_outside = sorted(p.name for p in outside.iterdir())
    for tool in ("show", "touch", "forget", "links"):
        message = served.error(tool, id_or_title=ref)
        assert (
            "no memory with id or title" in message
            or "characters" in message.lower()
            or ("not a note vaultmem manages" in message)
        ), message
        assert "secret outside" not in message
    assert served.error("observe", ids=[ref])
    if safe_title(ref):
        made = served.ok("remember", content=f"Title test for {ref!r}", title=ref)
        path = root / str(made["path"])
        assert path.resolve().parent == (root / "STM").resolve()
        assert made["path"].count("/") == 1
    else:  # nothing of it makes a name: refused, not saved as "Memory <id>"
        message = served.error("remember", content=f"Title test for {ref!r}", title=ref)
        assert "is empty once cleaned into a file name" in message
    refused = served.error("recall", query="secret outside", folder="..", include_archived=True)
    assert "folder '..' leads out of the vault" in refused and "secret outside" not in refused
    assert sorted(p.name for p in outside.iterdir()) == before_outside
    assert (outside / "outside.md").read_text().endswith("secret outside\n")


def test_server_person_and_a_cli_pass_at_once_lose_nothing(tmp_path: Path) -> None:
    vault, _ = Vault.init(tmp_path / "busy")
    vault.close()
    root = vault.root
    for i in range(30):  # faded memories: the passes archive them meanwhile
        (root / f"STM/Old {i}.md").write_text(OLD_NOTE.format(id=f"old{i}", text=f"old fact {i}"))
    (root / "Notes").mkdir()
    client = Client(root, tmp_path / "busy-stderr.txt")
    remembered: dict[str, str] = {}
    person: dict[str, str] = {}
    journal_lines: list[str] = []
    retries = 0
    try:
        for round_ in range(3):
            command = _command()
            pass_ = subprocess.Popen(
                [*command, "lifecycle", "--vault", str(root)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for i in range(8):
                n = round_ * 8 + i
                rel = f"Notes/Person {n}.md"  # Obsidian saves a new note, appends to another
                person[rel] = f"written by the person, note {n}\n"
                (root / rel).write_text(person[rel])
                journal_lines.append(f"- line {n}\n")
                with (root / "Notes/Journal.md").open("a") as journal:
                    journal.write(journal_lines[-1])
                for _ in range(50):  # an assistant retries when told a pass is running
                    result = client.call("remember", content=f"assistant fact number {n}")
                    if not result.is_error:
                        break
                    assert "a pass is running" in text_of(result)
                    retries += 1
                    time.sleep(0.05)
                assert not result.is_error and result.structured_content is not None
                remembered[str(result.structured_content["id"])] = f"assistant fact number {n}"
            _, err = pass_.communicate(timeout=60)
            assert pass_.returncode in (0, 1), err
            assert pass_.returncode == 0 or b"a pass is running" in err
    finally:
        client.close()
    files = {
        p.relative_to(root).as_posix(): p.read_text()
        for p in root.rglob("*.md")
        if ".vaultmem" not in p.parts
    }
    for rel, text in person.items():
        assert files.get(rel) == text
    assert files["Notes/Journal.md"] == "".join(journal_lines)
    for note_id, content in remembered.items():  # every memory exactly once, text intact
        holders = [rel for rel, text in files.items() if f"id: {note_id}\n" in text]
        assert len(holders) == 1, (note_id, holders)
        assert content in files[holders[0]]
    assert any(rel.startswith("Archive/Old ") for rel in files)  # the passes did run meanwhile
    for i in range(30):
        holders = [rel for rel, text in files.items() if f"id: old{i}\n" in text]
        assert len(holders) == 1 and f"old fact {i}" in files[holders[0]]
