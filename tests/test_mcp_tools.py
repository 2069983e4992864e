"""Every MCP tool, every rejected argument and every ``undo`` case, through the SDK's own client.

`vaultmem mcp` runs as a real subprocess (see test_mcp_server.py); the client checks each
structured result against the tool's declared ``outputSchema`` itself. One server serves most
tests (each with words and titles of its own); the undo tests start servers of their own, on
vaults of their own, so what "this server did" is known exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import snapshot_files
from mcp.types import TextContent, TextResourceContents
from test_mcp_server import OLD_NOTE, Client, serving_new_vault, text_of, wait_until_indexed

from vaultmem import Vault
from vaultmem.cli import main


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    with serving_new_vault(tmp_path_factory.mktemp("mcp-tools")) as client:
        yield client


@pytest.fixture()
def own_server(tmp_path: Path) -> Iterator[Client]:
    with serving_new_vault(tmp_path) as client:
        yield client


def listed_tools(client: Client) -> list[Any]:
    return list(client.portal.call(client.session.list_tools).tools)


def one_line_error(client: Client, name: str, **arguments: Any) -> str:
    message = client.error(name, **arguments)
    assert "https://" not in message and "Traceback" not in message, message
    return message


# ------------------------------------------------------------------ arguments


def test_every_tool_declares_closed_input_and_an_output_schema(served: Client) -> None:
    for tool in listed_tools(served):
        assert tool.input_schema.get("additionalProperties") is False, tool.name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", tool.name
        assert tool.output_schema["required"], tool.name


def test_every_tool_refuses_an_unknown_argument_naming_it_and_the_allowed_ones(
    served: Client,
) -> None:
    before = snapshot_files(served.root)
    for tool in listed_tools(served):
        message = one_line_error(served, tool.name, no_such_option=1)
        assert f"{tool.name}: unknown argument 'no_such_option'; allowed: " in message, message
        allowed = message.split("allowed: ", 1)[1]
        expected = list(tool.input_schema.get("properties", {})) or ["none"]
        assert allowed.split(", ") == expected, (tool.name, message)
    assert snapshot_files(served.root) == before  # nothing was done


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("recall", {"query": "x", "k": 0}, "recall: argument 'k': "),
        ("recall", {}, "recall: missing argument 'query'"),
        ("remember", {"content": "x", "importance": 2}, "remember: argument 'importance': "),
        ("remember", {"content": "x", "confidence": -1}, "remember: argument 'confidence': "),
        ("remember", {"content": "x", "layer": "deep"}, "remember: argument 'layer': "),
        ("remember", {"content": "x", "pinned": "maybe"}, "remember: argument 'pinned': "),
        ("remember", {"content": ""}, "remember: argument 'content': "),
        ("read_note", {"id_or_title_or_path": "x", "limit": 0}, "read_note: argument 'limit'"),
        ("read_note", {"id_or_title_or_path": "x", "offset": -1}, "read_note: argument 'offset'"),
        ("list", {"sort": "size"}, "list: argument 'sort': "),
        ("list", {"status": "gone"}, "list: argument 'status': "),
        ("recent", {"limit": 0}, "recent: argument 'limit': "),
        ("observe", {"ids": []}, "observe: argument 'ids': "),
        ("lifecycle", {"passes": ["nap"]}, "lifecycle: argument 'passes.0': "),
        ("edit", {"id_or_title": "x"}, "edit: give append, or replace with by"),
        ("edit", {"id_or_title": "x", "replace": "a"}, "edit: replace needs by"),
        ("edit", {"id_or_title": "x", "append": "a", "replace": "b", "by": "c"}, "not both"),
        ("link", {"id_or_title": "x"}, "link: missing argument 'to'"),
        ("undo", {"entry": ""}, "undo: argument 'entry': "),
        ("show", {"id_or_title": "x" * 1001}, "show: argument 'id_or_title': "),
    ],
)
def test_a_bad_value_is_one_line_naming_the_argument(
    served: Client, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    assert expected in one_line_error(served, tool, **arguments)


# ------------------------------------------------------------------ memories


def test_remember_keeps_every_option_and_says_what_it_did(served: Client) -> None:
    made = served.ok(
        "remember",
        content="Deploys of Project Alpha happen on Tuesdays",
        title="Alpha deploy day",
        tags=["project/alpha"],
        category="decision",
        importance=0.8,
        confidence=0.9,
        source="human",
        layer="procedural",
        pinned=True,
        episode="standup 2026-12-01",
    )
    assert made["outcome"] == "written" and made["superseded"] is None
    text = served.ok("read_note", id_or_title_or_path=made["path"])["text"]
    for line in (
        "pinned: true",
        "confidence: 0.9",
        "layer: procedural",
        "category: decision",
        "source: human",
        "episode: standup 2026-12-01",
    ):
        assert f"\n{line}\n" in text, line
    assert made["memory"]["pinned"] is True and made["memory"]["layer"] == "procedural"
    assert "remembered (written)" in text_of(
        served.call("remember", content="Alpha's staging runs on port 8443")
    )

    again = served.call("remember", content="Deploys of project alpha happen on Tuesdays!")
    assert not again.is_error and again.structured_content is not None
    assert again.structured_content["outcome"] == "reinforced"
    assert again.structured_content["path"] == made["path"]
    assert again.structured_content["memory"]["use_count"] == 2
    assert text_of(again).startswith("reinforced instead")

    fixed = served.ok(
        "remember",
        content="Deploys of Project Alpha now happen on Wednesdays",
        title="Alpha deploy day now",
        supersedes="Alpha deploy day",
    )
    assert fixed["outcome"] == "corrected" and fixed["superseded"] == made["path"]
    assert fixed["supersedes"] == "[[Alpha deploy day]]"
    assert served.ok("show", id_or_title=made["id"])["status"] == "superseded"
    hits = served.ok("recall", query="Project Alpha deploys")["hits"]
    assert made["path"] not in [h["path"] for h in hits]
    assert fixed["path"] in [h["path"] for h in hits]


def test_read_note_reads_any_note_in_pages_and_never_outside(served: Client) -> None:
    root = served.root
    (root / "Notes").mkdir(exist_ok=True)
    long_text = "# Trip plan\n\n" + "".join(f"Day {i}: walk and eat well.\n" for i in range(1500))
    (root / "Notes/Trip plan.md").write_text(long_text)
    (root.parent / "secret.md").write_text("secret outside the vault\n")
    (root / "Notes/Escape.md").symlink_to(root.parent / "secret.md")
    wait_until_indexed(served, "Trip plan")
    first = served.ok("read_note", id_or_title_or_path="Trip plan")
    assert first["kind"] == "note" and first["path"] == "Notes/Trip plan.md"
    assert first["chars"] == len(long_text) > 20_000
    assert first["text"] == long_text[:20_000] and first["next_offset"] == 20_000
    rest = served.ok(
        "read_note", id_or_title_or_path="Notes/Trip plan.md", offset=20_000, limit=200_000
    )
    assert first["text"] + rest["text"] == long_text and rest["next_offset"] is None
    page = served.ok("read_note", id_or_title_or_path="Notes/Trip plan", offset=13, limit=25)
    assert page["text"] == long_text[13:38] and page["next_offset"] == 38
    assert "past the end" in one_line_error(
        served, "read_note", id_or_title_or_path="Trip plan", offset=len(long_text) + 1
    )
    for ref in (
        "../secret.md",
        str(root.parent / "secret.md"),
        "Notes/../../secret.md",
        ".vaultmem/index.md",
        ".obsidian/app.md",
        "Notes/Escape.md",
        "~/secret.md",
    ):
        message = one_line_error(served, "read_note", id_or_title_or_path=ref)
        assert "secret outside" not in message, ref


def test_list_and_recent_filter_and_order_like_the_cli(served: Client) -> None:
    for name in ("Kiln b", "Kiln a", "Kiln c"):
        served.ok("remember", content=f"{name}: pottery firing notes", title=name, tags=["kiln"])
    served.ok("touch", id_or_title="Kiln b")
    listed = served.ok("list", tag="kiln", sort="title")["memories"]
    assert [m["title"] for m in listed] == ["Kiln a", "Kiln b", "Kiln c"]
    assert len(served.ok("list", tag="kiln", limit=2)["memories"]) == 2
    assert served.ok("list", tag="no-such-tag")["memories"] == []
    recent = served.ok("recent", tag="kiln", limit=3)["memories"]
    assert {m["title"] for m in recent} == {"Kiln a", "Kiln b", "Kiln c"}
    assert [m["last_used"] for m in recent] == sorted(
        (m["last_used"] for m in recent), reverse=True
    )
    for sort, rows in (("title", listed), ("last_used", recent)):
        cli = CliRunner().invoke(
            main, ["list", "--tag", "kiln", "--sort", sort, "--json", "--vault", str(served.root)]
        )
        printed = json.loads(cli.stdout)  # one shape from the CLI and MCP (scores move with now)
        assert list(printed) == ["memories"] and [set(m) for m in printed["memories"]] == [
            set(m) for m in rows
        ]
        assert [m["path"] for m in printed["memories"]] == [m["path"] for m in rows]


def test_edit_appends_or_replaces_one_line_and_undo_reverts_it(served: Client) -> None:
    made = served.ok("remember", content="Router admin\n- user: admin\n- port: 8080", title="Rt")
    path = served.root / str(made["path"])
    original = path.read_bytes()
    appended = served.ok("edit", id_or_title="Rt", append="Reset button is on the back.")
    assert appended["action"] == "appended" and appended["journal"]
    now = path.read_bytes()
    assert now.startswith(original.rstrip(b"\n")) and now.endswith(
        b"- port: 8080\n\nReset button is on the back.\n"
    )
    replaced = served.ok("edit", id_or_title="Rt", replace="- port: 8080", by="- port: 8443")
    assert replaced["action"] == "replaced" and replaced["by"] == "- port: 8443"
    lines_before, lines_after = now.splitlines(), path.read_bytes().splitlines()
    assert len(lines_before) == len(lines_after)
    pairs = zip(lines_before, lines_after, strict=True)
    differing = [i for i, (a, b) in enumerate(pairs) if a != b]
    assert len(differing) == 1
    assert "- port: 8443" in replaced["memory"]["text"]
    assert "no line" in one_line_error(served, "edit", id_or_title="Rt", replace="- x", by="y")
    served.ok("remember", content="Twice\n- same line\n- same line", title="Twice")
    assert "2 lines read '- same line'" in one_line_error(
        served, "edit", id_or_title="Twice", replace="- same line", by="- other"
    )
    served.ok("undo")
    assert path.read_bytes() == now
    served.ok("undo")
    assert path.read_bytes() == original
    (served.root / "Notes").mkdir(exist_ok=True)
    (served.root / "Notes/Mine.md").write_text("my own words\n")
    wait_until_indexed(served, "Mine")
    assert "not a note vaultmem manages" in one_line_error(
        served, "edit", id_or_title="Mine", append="x"
    )
    assert (served.root / "Notes/Mine.md").read_text() == "my own words\n"


def test_link_adds_a_related_link_once_and_undo_removes_it(served: Client) -> None:
    served.ok("remember", content="Sourdough starter is fed at 8am", title="Starter feeding")
    made = served.ok("remember", content="Bread flour is kept in the pantry", title="Flour spot")
    path = served.root / str(made["path"])
    before = path.read_bytes()
    linked = served.ok("link", id_or_title="Flour spot", to="Starter feeding")
    assert linked["action"] == "linked" and linked["linked_to"] == "STM/Starter feeding.md"
    assert "[[Starter feeding]]" in linked["memory"]["related"]
    titles = {o["title"] for o in served.ok("links", id_or_title="Flour spot")["outgoing"]}
    assert "Starter feeding" in titles
    assert "already links" in one_line_error(
        served, "link", id_or_title="Flour spot", to="Starter feeding"
    )
    assert "itself" in one_line_error(served, "link", id_or_title="Flour spot", to="Flour spot")
    served.ok("undo")
    assert path.read_bytes() == before


def test_pin_unpin_promote_and_forget(served: Client) -> None:
    made = served.ok("remember", content="Passport expires in March 2031", title="Passport")
    assert served.ok("pin", id_or_title="Passport")["pinned"] is True
    assert "pinned" in one_line_error(served, "forget", id_or_title="Passport")
    assert served.ok("unpin", id_or_title="Passport")["pinned"] is False
    before = snapshot_files(served.root)
    plan = served.ok("promote", id_or_title="Passport")
    assert plan["dry_run"] is True and plan["planned"][0]["path"] == made["path"]
    assert snapshot_files(served.root) == before
    done = served.ok("promote", id_or_title="Passport", apply=True)
    assert done["applied"][0]["destination"] == "LTM/Passport.md"
    assert (served.root / "LTM/Passport.md").exists()
    served.ok("undo")
    assert (served.root / "STM/Passport.md").read_bytes() == before["STM/Passport.md"]


def test_embed_status_and_consolidate_without_a_provider(served: Client) -> None:
    status = served.ok("embed_status")
    assert status["provider"] is None and status["available"] is False
    assert "VAULTMEM_EMBEDDINGS=off" in status["problem"]  # the tests switch the extra off
    assert "embed" in one_line_error(served, "consolidate")


def test_memories_are_resources_and_one_prompt_explains_the_tools(served: Client) -> None:
    made = served.ok("remember", content="Bike lock code is 4312", title="Bike lock")
    resources = served.portal.call(served.session.list_resources).resources
    uris = {str(r.uri) for r in resources}
    assert f"vaultmem://memory/{made['id']}" in uris
    read = served.portal.call(served.session.read_resource, f"vaultmem://memory/{made['id']}")
    content = read.contents[0]
    assert isinstance(content, TextResourceContents)
    assert f"id: {made['id']}" in content.text and "Bike lock code is 4312" in content.text
    assert content.mime_type == "text/markdown"
    with pytest.raises(Exception, match="no memory with id"):
        served.portal.call(served.session.read_resource, "vaultmem://memory/NOSUCHID")
    prompts = served.portal.call(served.session.list_prompts).prompts
    assert [p.name for p in prompts] == ["use_memory"]
    prompt = served.portal.call(served.session.get_prompt, "use_memory")
    message = prompt.messages[0].content
    assert isinstance(message, TextContent)
    for tool in ("recall", "remember", "touch", "supersedes", "edit", "forget", "undo"):
        assert f"`{tool}`" in message.text, tool


# ------------------------------------------------------------------ undo


def _cli(root: Path, *args: str, actor: str = "cli") -> Any:
    result = CliRunner(env={"VAULTMEM_ACTOR": actor}).invoke(
        main, [*args, "--vault", str(root)]
    )
    assert result.exit_code == 0, result.output
    return result


def test_undo_reverts_only_this_servers_changes_and_names_what_it_would_revert(
    own_server: Client,
) -> None:
    client, root = own_server, own_server.root
    mine = client.ok("remember", content="Gate code is 1234", title="Gate code")
    theirs = client.ok("remember", content="Garage code is 9876", title="Garage code")
    assert "no pass has been applied" in one_line_error(client, "undo")
    client.ok("forget", id_or_title="Gate code")  # the server's change …
    _cli(root, "forget", "Garage code")  # … and then a person's, newer
    entries = client.ok("journal")["entries"]
    assert [(e["command"], e["who"], e["mine"]) for e in entries[:2]] == [
        ("forget", "cli", False),
        ("forget", "mcp", True),
    ]
    cli_entry, mcp_entry = entries[0]["entry"], entries[1]["entry"]
    assert [e["entry"] for e in client.ok("journal", limit=1)["entries"]] == [cli_entry]
    undone = client.ok("undo")  # the server's own forget, not the newer one
    assert undone["journal"].startswith(mcp_entry) and undone["who"] == "mcp"
    assert (root / str(mine["path"])).exists()
    assert (root / "Archive/Garage code.md").exists() and not (root / str(theirs["path"])).exists()
    message = one_line_error(client, "undo")
    assert "nothing this MCP server did is left to undo" in message
    assert f"vaultmem undo {cli_entry}" in message and "by cli" in message
    message = one_line_error(client, "undo", entry=cli_entry)
    assert "not made by this MCP server" in message and cli_entry in message
    assert "already undone" in one_line_error(client, "undo", entry=mcp_entry)
    assert "no journal entry 'nope'" in one_line_error(client, "undo", entry="nope")
    assert (root / "Archive/Garage code.md").exists()  # all of that changed nothing
    listed = json.loads(_cli(root, "undo", "--list", "--json").stdout)["entries"]
    assert [(e["entry"], e["state"]) for e in listed[:2]] == [
        (cli_entry, "undoable"),
        (mcp_entry, "undone"),
    ]
    assert listed[1]["session"] and listed[0]["session"] is None
    _cli(root, "undo", cli_entry[:21])  # the person's own, by a unique start of its name
    assert (root / str(theirs["path"])).exists()


def test_undo_of_an_own_entry_by_name_and_refusals_that_change_nothing(
    own_server: Client,
) -> None:
    client, root = own_server, own_server.root
    assert "nothing to undo" in one_line_error(client, "undo")
    client.ok("remember", content="Wifi name is Attic", title="Wifi name")
    client.ok("remember", content="Printer is on the second floor", title="Printer spot")
    first = client.ok("edit", id_or_title="Wifi name", append="Password is on the fridge.")
    client.ok("forget", id_or_title="Printer spot")
    undone = client.ok("undo", entry=first["journal"])  # an older entry of its own, by name
    assert undone["command"] == "edit"
    assert "fridge" not in (root / "STM/Wifi name.md").read_text()
    archived = root / "Archive/Printer spot.md"
    archived.write_text(archived.read_text() + "edited by the person\n")
    wait_until_indexed(client, "Printer spot")
    changed = archived.read_bytes()
    message = one_line_error(client, "undo")
    assert "Archive/Printer spot.md" in message and "changed after the pass" in message
    assert archived.read_bytes() == changed and not (root / "STM/Printer spot.md").exists()


def test_journal_entries_say_who_made_them(tmp_path: Path) -> None:
    vault, _ = Vault.init(tmp_path / "v")
    vault.remember("Stand-up is at 09:30", title="Standup", now=None)
    vault.close()
    (tmp_path / "v/STM/Old.md").write_text(OLD_NOTE.format(id="old1", text="an old fact"))
    _cli(vault.root, "lifecycle", actor="cron")
    _cli(vault.root, "forget", "Standup", actor="")  # no actor named, no terminal: cron
    _cli(vault.root, "undo", actor="")
    text = _cli(vault.root, "undo", "--list").stdout.splitlines()
    assert "undone" in text[0] and "forget" in text[0] and "by cron" in text[0]
    assert "undoable" in text[1] and "lifecycle" in text[1] and "by cron" in text[1]
    empty, _ = Vault.init(tmp_path / "empty")
    empty.close()
    assert "nothing has been applied" in _cli(empty.root, "undo", "--list").stdout


def test_consolidate_and_embed_status_with_embeddings_and_undo(tmp_path: Path) -> None:
    from test_consolidation import _vault

    root = _vault(tmp_path)  # three near-duplicates and three others, embedded
    client = Client(root, tmp_path / "server-stderr.txt")
    try:
        status = client.ok("embed_status")
        assert status["provider"] and status["available"] is True
        assert status["embedded"] >= 6 and status["missing"] == 0
        before = snapshot_files(root)
        plan = client.ok("consolidate")
        assert plan["dry_run"] is True and plan["merged"] == []
        merges = [c for c in plan["clusters"] if c["action"] == "merge"]
        assert len(merges) == 1 and len(merges[0]["members"]) == 3
        assert snapshot_files(root) == before
        done = client.ok("consolidate", apply=True)
        assert len(done["merged"]) == 1 and (root / done["merged"][0]).exists()
        entries = client.ok("journal")["entries"]
        assert entries[0]["command"] == "consolidate" and entries[0]["mine"] is True
        client.ok("undo")
        assert snapshot_files(root) == before
    finally:
        client.close()


def test_show_of_a_persons_own_note_says_it_is_not_a_memory(served: Client) -> None:
    (served.root / "Notes").mkdir(exist_ok=True)
    (served.root / "Notes/Packing list.md").write_text("- passport\n- charger\n")
    wait_until_indexed(served, "Packing list")
    result = served.call("show", id_or_title="Packing list")
    assert not result.is_error and result.structured_content is not None
    assert result.structured_content["memory"] is False
    assert "not a memory" in text_of(result) and "status active" not in text_of(result)
    assert "- charger" in text_of(result)


def test_edit_through_a_symbolic_link_edits_its_target_and_keeps_the_link(
    served: Client,
) -> None:
    made = served.ok("remember", content="Linked memory text", title="Linked source")
    source = served.root / str(made["path"])
    link = served.root / "STM/Linked copy.md"
    link.symlink_to(source)
    wait_until_indexed(served, "Linked copy")
    before = source.read_bytes()
    edited = served.ok("edit", id_or_title="Linked copy", append="more")
    assert edited["path"] == made["path"], edited
    after = source.read_bytes()
    assert after.startswith(before.rstrip(b"\n")) and after.rstrip().endswith(b"more")
    assert link.is_symlink() and link.resolve() == source.resolve()
