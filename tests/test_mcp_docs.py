"""docs/mcp.md stays true: its tool section is what the server lists, its examples are calls the
tools accept, and its comparison table names every tool."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from vaultmem import Vault
from vaultmem.core.settings import Settings
from vaultmem.mcp.reference import EXAMPLES, documented_reference, tool_reference
from vaultmem.mcp.server import VaultServer, build_server
from vaultmem.mcp.strict import allowed_arguments

DOC = Path(__file__).resolve().parents[1] / "docs" / "mcp.md"


def _server() -> VaultServer:
    return build_server(Vault(Path("/nonexistent-vault"), Settings()), session="docs")


def test_the_tool_section_matches_the_server() -> None:
    assert documented_reference(DOC.read_text(encoding="utf-8")) == tool_reference(), (
        "docs/mcp.md is stale: regenerate its tool section with python -m vaultmem.mcp.reference"
    )


def test_every_tool_has_an_example_its_input_schema_accepts() -> None:
    server = _server()
    names = [tool.name for tool in asyncio.run(server.list_tools())]
    assert sorted(EXAMPLES) == sorted(names)
    for name in names:
        allowed = allowed_arguments(server, name)
        assert allowed is not None and set(EXAMPLES[name]) <= set(allowed), name
        tool = server._tool_manager.get_tool(name)  # noqa: SLF001
        assert tool is not None
        tool.fn_metadata.arg_model.model_validate(EXAMPLES[name])  # raises if refused


def test_a_wrong_example_would_be_caught() -> None:
    server = _server()
    tool = server._tool_manager.get_tool("recall")  # noqa: SLF001
    assert tool is not None
    with pytest.raises(ValueError):
        tool.fn_metadata.arg_model.model_validate({"query": "x", "k": 0})


def test_the_comparison_table_names_every_tool() -> None:
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| What | vaultmem |") : text.index("## Tools")]
    rows = [row.split("|") for row in table.splitlines()[2:] if row.startswith("|")]
    ours = {cell for row in rows for cell in re.findall(r"`(\w+)`", row[2])}
    names = {tool.name for tool in asyncio.run(_server().list_tools())}
    assert names <= ours, names - ours
