"""The filters of listing and recall are honoured or refused, never dropped: nested tags match in
``list`` and ``recent`` as in ``recall``; an empty tag, folder, since, now or query, a folder
outside the vault or not in it, and option pairs of which one would be ignored are refused with
one line naming the value — through the CLI (exit 2 for the value itself, exit 1 for what only
the vault can say), the MCP tools and the Python API alike — and nothing is changed."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import snapshot_files
from test_mcp_server import Client, serving_new_vault

from vaultmem import Vault
from vaultmem.cli import main
from vaultmem.errors import InputError

NOW = "2026-11-20T09:00:00"
WHEN = dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)
TAGGED = {
    "Alpha deploys on Tuesdays": "project/alpha",
    "Beta ships in spring": "Project/Beta/api",
    "The project wiki moved": "project",
    "Projects need owners": "projects",
    "Tea after lunch": "food",
}
"""Memory text → its one tag: ``project`` finds the first three, never ``projects``."""
PROJECT = {"Alpha deploys on Tuesdays", "Beta ships in spring", "The project wiki moved"}


def fill(root: Path) -> None:
    with Vault.open(root) as vault:
        for text, tag in TAGGED.items():
            vault.remember(text, tags=[tag], now=WHEN)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    made, _ = Vault.init(tmp_path / "v")
    made.close()
    fill(made.root)
    return made.root


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    with serving_new_vault(tmp_path_factory.mktemp("filters")) as client:
        fill(client.root)
        yield client


def run(vault: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [*args, "--vault", str(vault)], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def titles(rows: Iterable[Any]) -> set[str]:
    """The titles of listed memories: rows of the API or dicts of an MCP answer."""
    return {str(row["title"] if isinstance(row, dict) else row.title) for row in rows}


# ------------------------------------------------------------------ nested tags


def test_list_and_memories_find_nested_tags_as_recall_does(vault: Path) -> None:
    with Vault.open(vault) as opened:
        for tag in ("project", "#Project", " PROJECT "):
            assert titles(opened.memories(tag=tag, now=WHEN)) == PROJECT, tag
        assert titles(opened.memories(tag="project/beta", now=WHEN)) == {"Beta ships in spring"}
        assert titles(opened.memories(tag="proj", now=WHEN)) == set()
        recalled = opened.recall("project alpha beta wiki owners", tag="project", now=WHEN)
        assert {hit.title for hit in recalled} == PROJECT
    code, out, err = run(vault, "list", "--tag", "project", "--now", NOW)
    assert code == 0, err
    assert {line.rsplit("/", 1)[-1].removesuffix(".md") for line in out.splitlines()[1:]} == PROJECT


def test_mcp_list_and_recent_find_nested_tags(served: Client) -> None:
    assert titles(served.ok("list", tag="project")["memories"]) == PROJECT
    assert titles(served.ok("recent", tag="#project")["memories"]) == PROJECT


# ------------------------------------------------------------------ empty and blank values


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("list", "--tag", ""), "Invalid value for '--tag': tag '' is empty"),
        (("list", "--tag", "   "), "Invalid value for '--tag': tag '   ' is empty"),
        (("list", "--tag", "#"), "Invalid value for '--tag': tag '#' is empty"),
        (("list", "--folder", ""), "Invalid value for '--folder': folder '' is empty"),
        (("list", "--folder", "/"), "Invalid value for '--folder': folder '/' is empty"),
        (("list", "--now", ""), "Invalid value for '--now' (env var: 'VAULTMEM_NOW'): '' is empty"),
        (("recall", "tea", "--tag", ""), "Invalid value for '--tag': tag '' is empty"),
        (("recall", "tea", "--tag", "#"), "Invalid value for '--tag': tag '#' is empty"),
        (("recall", "tea", "--folder", "  "), "Invalid value for '--folder': folder '  ' is"),
        (("recall", "tea", "--folder", "/"), "Invalid value for '--folder': folder '/' is empty"),
        (("recall", "tea", "--since", ""), "Invalid value for '--since': '' is empty"),
        (("recall", "tea", "--since", " "), "Invalid value for '--since': ' ' is empty"),
        (("recall", "tea", "--now", ""), "'' is empty: give a datetime"),
        (("recall", ""), "Invalid value for 'QUERY...': empty query ''"),
        (("recall", "   "), "Invalid value for 'QUERY...': empty query '   '"),
        (("recall", " ", " "), "Invalid value for 'QUERY...': empty query '   '"),
    ],
)
def test_the_cli_refuses_an_empty_filter_or_query_with_one_line(
    vault: Path, args: tuple[str, ...], expected: str
) -> None:
    before = snapshot_files(vault)
    code, out, err = run(vault, *args)
    assert code == 2 and out == "", (code, out, err)
    assert expected in err and err.strip().splitlines()[-1].startswith("Error: "), err
    assert snapshot_files(vault) == before


def test_an_empty_vaultmem_now_still_means_now(vault: Path) -> None:
    code, out, err = run(vault, "list", "--now", "")
    assert code == 2 and "'' is empty" in err
    for blank in ("", "  "):
        code, out, err = run(vault, "list", "--tag", "food", env={"VAULTMEM_NOW": blank})
        assert code == 0 and "Tea after lunch" in out, err


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"tag": ""}, "tag '' is empty"),
        ({"tag": "   "}, "tag '   ' is empty"),
        ({"tag": "#"}, "tag '#' is empty"),
        ({"folder": ""}, "folder '' is empty"),
        ({"folder": "/"}, "folder '/' is empty"),
        ({"folder": "."}, "folder '.' is empty"),
        ({"since": ""}, "since '' is empty"),
        ({"since": "  "}, "since '  ' is empty"),
    ],
)
def test_the_api_refuses_an_empty_filter(
    vault: Path, options: dict[str, Any], expected: str
) -> None:
    with Vault.open(vault) as opened:
        with pytest.raises(InputError, match=expected):
            opened.recall("tea", now=WHEN, **options)
        if "since" not in options:
            with pytest.raises(InputError, match=expected):
                opened.memories(now=WHEN, **options)


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_the_api_refuses_an_empty_query(vault: Path, query: str) -> None:
    with Vault.open(vault) as opened, pytest.raises(InputError, match="empty query"):
        opened.recall(query, now=WHEN)


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("recall", {"query": "tea", "tag": ""}, "tag '' is empty"),
        ("recall", {"query": "tea", "tag": "   "}, "tag '   ' is empty"),
        ("recall", {"query": "tea", "tag": "#"}, "tag '#' is empty"),
        ("recall", {"query": "tea", "folder": ""}, "folder '' is empty"),
        ("recall", {"query": "tea", "folder": "/"}, "folder '/' is empty"),
        ("recall", {"query": "tea", "since": ""}, "since '' is empty"),
        ("recall", {"query": "   "}, "empty query '   '"),
        ("list", {"tag": ""}, "tag '' is empty"),
        ("list", {"folder": ""}, "folder '' is empty"),
        ("recent", {"folder": "/"}, "folder '/' is empty"),
        ("list", {"folder": "NoSuch"}, "no folder 'NoSuch' in the vault"),
        ("recent", {"folder": "../.."}, "folder '../..' leads out of the vault"),
        ("recall", {"query": "tea", "folder": "/etc"}, "folder '/etc' is an absolute path"),
        ("recall", {"query": "tea", "folder": "stm"}, "no folder 'stm' in the vault; did you"),
    ],
)
def test_mcp_tools_refuse_an_empty_or_unknown_filter(
    served: Client, tool: str, arguments: dict[str, str], expected: str
) -> None:
    before = snapshot_files(served.root)
    assert expected in served.error(tool, **arguments)
    assert snapshot_files(served.root) == before


# ------------------------------------------------------------------ folders


@pytest.mark.parametrize(
    ("folder", "code", "expected"),
    [
        ("../..", 2, "folder '../..' leads out of the vault"),
        ("../../etc", 2, "folder '../../etc' leads out of the vault"),
        ("STM/../..", 2, "folder 'STM/../..' leads out of the vault"),
        ("/etc", 2, "folder '/etc' is an absolute path: give a folder relative to the vault"),
        (".obsidian", 2, "folder '.obsidian' is a dot folder"),
        ("NoSuch", 1, "Error: no folder 'NoSuch' in the vault"),
        ("stm", 1, "Error: no folder 'stm' in the vault; did you mean 'STM'?"),
        ("STM/deeper", 1, "Error: no folder 'STM/deeper' in the vault"),
        ("vaultmem.toml", 1, "Error: no folder 'vaultmem.toml' in the vault"),
    ],
)
@pytest.mark.parametrize("command", [("list",), ("recall", "tea")])
def test_a_folder_outside_the_vault_or_not_in_it_is_refused(
    vault: Path, command: tuple[str, ...], folder: str, code: int, expected: str
) -> None:
    before = snapshot_files(vault)
    got, out, err = run(vault, *command, "--folder", folder, "--now", NOW)
    assert got == code and out == "", (got, out, err)
    lines = err.strip().splitlines()
    assert lines[-1].startswith("Error: ") and expected in lines[-1], err
    assert code == 2 or len(lines) == 1, err  # the vault's answer: one line, no usage
    assert snapshot_files(vault) == before
    with Vault.open(vault) as opened:
        with pytest.raises(InputError, match=f"folder {folder!r}"):
            opened.memories(folder=folder, now=WHEN)
        with pytest.raises(InputError, match=f"folder {folder!r}"):
            opened.recall("tea", folder=folder, now=WHEN)


@pytest.mark.parametrize("folder", ["./STM", "./STM/", " ./STM ", "./STM//"])
def test_harmless_forms_of_a_folder_are_honoured(vault: Path, folder: str) -> None:
    with Vault.open(vault) as opened:
        assert titles(opened.memories(folder=folder, now=WHEN)) == set(TAGGED)
        assert {hit.title for hit in opened.recall("tea", folder=folder, now=WHEN)} == {
            "Tea after lunch"
        }
        assert opened.memories(folder="Archive", now=WHEN) == []  # exists, holds nothing
    code, out, err = run(vault, "list", "--folder", folder, "--now", NOW)
    assert code == 0 and "STM/Tea after lunch.md" in out, err


# ------------------------------------------------------------------ pairs and Vault.memories


def test_recall_refuses_touch_with_touch_hit_and_kind_with_include_notes(vault: Path) -> None:
    before = snapshot_files(vault)
    code, out, err = run(vault, "recall", "tea", "--touch", "--touch-hit", "1", "--now", NOW)
    assert code == 2 and out == "", err
    assert "Error: --touch reinforces the first memory and --touch-hit the hits named" in err
    code, out, err = run(vault, "recall", "tea", "--kind", "memory", "--include-notes")
    assert code == 2 and out == "", err
    assert "Error: --include-notes has no effect with --kind memory" in err
    assert snapshot_files(vault) == before
    with Vault.open(vault) as opened, pytest.raises(InputError, match="include_notes has no"):
        opened.recall("tea", kind="box", include_notes=True, now=WHEN)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"limit": -1}, "limit must be a whole number ≥ 1, not -1"),
        ({"limit": 0}, "limit must be a whole number ≥ 1, not 0"),
        ({"limit": True}, "limit must be a whole number ≥ 1, not True"),
        ({"limit": 2.5}, "limit must be a whole number ≥ 1, not 2.5"),
        ({"status": "bogus"}, "status must be one of .*, not 'bogus'"),
        ({"status": ""}, "status must be one of .*, not ''"),
        ({"layer": "deep"}, "layer must be one of .*, not 'deep'"),
        (
            {"sort": "bogus"},
            "sort must be one of score, ei, last_used, created, title, not 'bogus'",
        ),
        ({"tag": 5}, "tag must be text, not 5"),
    ],
)
def test_vault_memories_checks_its_arguments_as_recall_does(
    vault: Path, options: dict[str, Any], expected: str
) -> None:
    with Vault.open(vault) as opened:
        with pytest.raises(InputError, match=expected):
            opened.memories(now=WHEN, **options)
        assert len(opened.memories(limit=len(TAGGED), now=WHEN)) == len(TAGGED)  # none dropped
        assert len(opened.memories(limit=2, now=WHEN)) == 2
