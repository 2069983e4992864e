"""remember, edit, observe, import, init, graph: what a tool is asked is honoured or refused.

A call that cannot be honoured is refused in one line naming the problem, with nothing written;
one that can is honoured and says what it did (a repeat of a memory says what became of each
option given). Errors name the remedy that works (the path for notes without an id, the MCP
``journal`` tool from MCP).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import snapshot_files
from test_mcp_server import Client, serving_new_vault

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.errors import AmbiguousNoteError, InputError
from vaultmem.services.memories.remembering import DRAFT_KEYS

NOW = "2026-11-20T09:00:00"
FACT = "The staging database listens on port 5433"


def run(*args: str, vault: Path | None = None, input: str | None = None) -> tuple[int, str, str]:
    argv = [*args, "--vault", str(vault)] if vault is not None else list(args)
    result = CliRunner().invoke(main, argv, input=input)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    made, _ = Vault.init(tmp_path / "v")
    with made:
        yield made


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    with serving_new_vault(tmp_path_factory.mktemp("mcp-refusals")) as client:
        yield client


def note_text(vault: Vault, path: str) -> str:
    return (vault.root / path).read_text(encoding="utf-8")


# ------------------------------------------------------------------ remember: a repeat


def test_a_repeat_applies_what_only_adds_and_names_each_option_not_applied(vault: Vault) -> None:
    first = vault.remember(FACT, tags=["db"])
    vault.warnings.clear()
    saved = vault.save(
        FACT,
        pinned=True,
        importance=0.95,
        tags=["urgent", "DB"],
        layer="semantic",
        title="Staging port",
        category="decision",
    )
    assert saved.outcome == "reinforced" and saved.memory.path == first.path
    fields = saved.memory.fields
    assert fields.pinned is True and fields.importance == 0.95
    assert fields.tags == ("db", "urgent") and fields.use_count == 2
    assert fields.layer == "working" and fields.category == "fact"  # not applied, and said
    assert saved.options == {
        "title": f"not applied: it keeps {first.title!r}",
        "tags": "applied: added urgent",
        "category": "not applied: it keeps 'fact'",
        "importance": "applied: 0.5 → 0.95",
        "layer": "not applied: it keeps 'working'",
        "pinned": "applied",
    }
    assert saved.as_dict()["options"] == saved.options
    (line,) = vault.warnings
    assert line.startswith(f"same content as {first.path}: reinforced it instead")
    assert "; applied: pinned, " in line and "tags (added urgent)" in line
    assert "importance (0.5 → 0.95)" in line
    assert "; not applied: layer (it keeps 'working'), title (it keeps" in line
    assert "category (it keeps 'fact')" in line
    assert "remember it again with supersedes" in line
    assert sorted(p.name for p in (vault.root / "STM").glob("*.md")) == [Path(first.path).name]


def test_a_repeat_keeps_a_pin_and_a_higher_importance_and_says_so(vault: Vault) -> None:
    vault.remember(FACT, pinned=True, importance=0.8)
    vault.warnings.clear()
    saved = vault.save(FACT, pinned=False, importance=0.3, source="human")
    assert saved.memory.fields.pinned is True and saved.memory.fields.importance == 0.8
    assert saved.options == {
        "importance": "not applied: it keeps 0.8",
        "source": "already so",
        "pinned": "not applied: it stays pinned; unpin unpins it",
    }
    assert "supersedes" not in vault.warnings[0]  # pin and importance have their own remedy


def test_a_repeat_through_the_cli_warns_what_was_not_applied(tmp_path: Path) -> None:
    Vault.init(tmp_path / "v")[0].close()
    code, _, err = run("remember", FACT, vault=tmp_path / "v")
    assert code == 0, err
    code, out, err = run("remember", FACT, "--pin", "--category", "lesson", vault=tmp_path / "v")
    assert code == 0 and out.startswith("reinforced STM/")
    assert "applied: pinned" in err and "not applied: category (it keeps 'fact')" in err


def test_a_repeat_through_mcp_pins_and_names_what_it_did_not_apply(served: Client) -> None:
    content = "The office wifi password is on the fridge"
    made = served.ok("remember", content=content)
    result = served.call(
        "remember", content=content, pinned=True, category="lesson", tags=["office"]
    )
    assert not result.is_error and result.structured_content is not None
    data = result.structured_content
    assert data["outcome"] == "reinforced" and data["path"] == made["path"]
    assert data["memory"]["pinned"] is True and "office" in data["memory"]["tags"]
    assert data["options"]["category"].startswith("not applied")
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert "not applied: category" in text and "applied: tags (added office)" in text


# ------------------------------------------------------------------ remember: refusals


def test_save_options_are_the_draft_keys_and_the_saving_ones() -> None:
    from vaultmem.services.memories.memory_saving import SAVE_OPTIONS

    assert set(SAVE_OPTIONS) == {*DRAFT_KEYS, "imp", "extra", "episode", "supersedes", "dedup"}


def test_remember_refuses_an_unknown_option_naming_it(vault: Vault) -> None:
    before = snapshot_files(vault.root)
    with pytest.raises(InputError, match="unknown remember option 'bogus'; known: title"):
        vault.remember("A fact worth keeping", bogus=1)
    with pytest.raises(InputError, match="pinned must be true or false, not 'yes'"):
        vault.remember("A fact worth keeping", pinned="yes")
    assert snapshot_files(vault.root) == before


@pytest.mark.parametrize("title", ["", "   ", "???", ".."])
def test_cli_remember_refuses_a_title_empty_once_cleaned(tmp_path: Path, title: str) -> None:
    Vault.init(tmp_path / "v")[0].close()
    before = snapshot_files(tmp_path / "v")
    code, _, err = run("remember", "A fact worth keeping", "--title", title, vault=tmp_path / "v")
    assert code == 1 and f"the title {title!r} is empty once cleaned into a file name" in err
    assert len(err.strip().splitlines()) == 1
    assert snapshot_files(tmp_path / "v") == before


@pytest.mark.parametrize("category", ["", "  "])
def test_cli_remember_refuses_an_empty_category(tmp_path: Path, category: str) -> None:
    Vault.init(tmp_path / "v")[0].close()
    before = snapshot_files(tmp_path / "v")
    code, _, err = run("remember", "A fact", "--category", category, vault=tmp_path / "v")
    assert code == 1 and "the category is empty" in err
    assert snapshot_files(tmp_path / "v") == before


def test_mcp_remember_refuses_a_blank_title(served: Client) -> None:
    before = snapshot_files(served.root)
    message = served.error("remember", content="Something new to keep", title="   ")
    assert "the title '   ' is empty once cleaned into a file name" in message
    assert snapshot_files(served.root) == before


# ------------------------------------------------------------------ edit, observe, touch


def test_mcp_edit_refuses_by_without_replace_and_says_it_once(served: Client) -> None:
    made = served.ok("remember", content="The build runs on the blue runner")
    before = snapshot_files(served.root)
    message = served.error("edit", id_or_title=made["id"], append="more", by="x")
    assert "by goes with replace" in message
    assert message.startswith("Error executing tool edit: by goes")  # no "edit: edit:"
    assert "edit: edit:" not in served.error("edit", id_or_title=made["id"])
    assert snapshot_files(served.root) == before


def test_observe_counts_a_memory_named_twice_once(vault: Vault) -> None:
    memory = vault.remember("Lunch is at noon on Fridays")
    observed = vault.observe([memory.title, str(memory.fields.id), memory.title], ["food"])
    assert [m.path for m in observed] == [memory.path]
    assert observed[0].fields.use_count == 2  # one use, not three
    assert vault.warnings == [f"{memory.path} was named 3 times: observed once (one use)"]


@pytest.mark.parametrize("refs", [[], (), ""])
def test_observe_refuses_no_memories(vault: Vault, refs: Any) -> None:
    with pytest.raises(InputError, match="no memories given to observe"):
        vault.observe(refs, [])


@pytest.mark.parametrize("touch", [0, -1, [], "", "  ", [1, 0], 1.5, [None]])
def test_recall_refuses_a_touch_that_names_no_hit(vault: Vault, touch: object) -> None:
    memory = vault.remember("The printer on floor two jams on A3 paper")
    before = snapshot_files(vault.root)
    with pytest.raises(InputError, match="^touch: "):
        vault.recall("printer", touch=touch)
    assert snapshot_files(vault.root) == before
    assert vault.memory(memory.path).fields.use_count == 1
    vault.recall("printer", touch=[1])  # a rank touches its hit
    assert vault.memory(memory.path).fields.use_count == 2


# ------------------------------------------------------------------ import, init, graph


@pytest.mark.parametrize("content", ["", "\n\n   \n"])
def test_import_of_a_file_without_memories_exits_1(tmp_path: Path, content: str) -> None:
    Vault.init(tmp_path / "v")[0].close()
    source = tmp_path / "empty.jsonl"
    source.write_text(content)
    code, _, err = run("import", str(source), vault=tmp_path / "v")
    assert code == 1 and f"no memories in {source}" in err
    code, out, _ = run("import", str(source), "--json", vault=tmp_path / "v")
    assert code == 1 and "no memories in" in json.loads(out)["error"]


def test_init_refuses_an_empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run("init", "")
    assert code == 2 and "PATH: is empty" in err
    assert list(tmp_path.iterdir()) == []


def test_init_git_outside_a_repository_creates_nothing(tmp_path: Path) -> None:
    code, _, err = run("init", str(tmp_path / "v"), "--git")
    assert code == 1 and "is not in a git repository" in err and "nothing was created" in err
    assert not (tmp_path / "v").exists()
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    code, out, err = run("init", str(tmp_path / "v"), "--git")
    assert code == 0, err
    assert (tmp_path / "v" / "vaultmem.toml").is_file() and "git: " in out


def test_graph_refuses_dot_with_json(tmp_path: Path) -> None:
    Vault.init(tmp_path / "v")[0].close()
    code, out, err = run("graph", "--format", "dot", "--json", vault=tmp_path / "v")
    assert code == 2  # (with --json the error is JSON on stdout, as for every command)
    assert json.loads(out)["error"] == "give --format dot or --json, not both"


# ------------------------------------------------------------------ error texts


def test_two_notes_of_one_title_without_ids_name_the_path(vault: Vault) -> None:
    for folder in ("Travel", "Work"):
        (vault.root / folder).mkdir()
        (vault.root / folder / "Trip.md").write_text(f"A trip for {folder}\n")
    with pytest.raises(AmbiguousNoteError) as caught:
        vault.memory("Trip")
    assert str(caught.value).endswith("— use the path") and "id" not in str(caught.value)
    assert vault.memory("Travel/Trip.md").path == "Travel/Trip.md"  # the remedy works


def test_two_memories_of_one_title_name_the_id_or_the_path(vault: Vault) -> None:
    one = vault.remember("First fact about ferries", title="Ferry")
    (vault.root / "LTM" / "Ferry.md").write_text(
        note_text(vault, one.path).replace(str(one.fields.id), "01OTHERFERRYID0000000000AA")
    )
    with pytest.raises(AmbiguousNoteError, match="— use the id or the path$"):
        vault.memory("Ferry")


def test_mcp_read_note_and_undo_errors_name_notes_and_the_journal_tool(served: Client) -> None:
    message = served.error("read_note", id_or_title_or_path="no-such-note-here")
    assert "no note with id, title or path 'no-such-note-here'" in message
    message = served.error("undo", entry="no-such-entry")
    assert "no journal entry 'no-such-entry'; the `journal` tool lists them" in message
    assert "vaultmem undo --list" not in message
