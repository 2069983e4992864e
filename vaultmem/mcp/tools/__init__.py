"""The MCP tools, by concept: memories (:mod:`.memory_tools`), looking things up
(:mod:`.query_tools`) and passes and undo (:mod:`.pass_tools`).

Each tool is a thin layer over one :class:`~vaultmem.Vault` method;
:class:`~vaultmem.mcp.tools.tool_calls.VaultTools` runs it. The tool modules import
:mod:`.tool_calls`, never this package, so no import goes in a circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vaultmem.mcp.tools import memory_tools, pass_tools, query_tools

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from vaultmem.mcp.tools.tool_calls import VaultTools


def register_tools(server: MCPServer, tools: VaultTools) -> None:
    """Add every vaultmem tool to ``server``."""
    memory_tools.register(server, tools)
    query_tools.register(server, tools)
    pass_tools.register(server, tools)


__all__ = ["register_tools"]
