"""What every MCP tool shares: the reference argument, the annotations, and :class:`VaultTools`,
which runs a call against the open vault (one at a time), turns a
:class:`~vaultmem.errors.VaultmemError` into a one-line tool error and adds the text rendering
(:mod:`vaultmem.mcp.rendering`) to the structured result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from vaultmem.errors import VaultmemError
from vaultmem.services.vault import Vault

MAX_REF_CHARS = 1000
"""Longest id or title a tool accepts."""

Ref = Annotated[
    str,
    Field(
        description="The memory's id (e.g. 01JD8X…) or its title (the note's name, case-"
        "insensitive). Not a file path.",
        min_length=1,
        max_length=MAX_REF_CHARS,
    ),
]

READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
ADD = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


def writes(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """Annotations of a tool that changes the vault."""
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


class VaultTools:
    """Runs tool calls against one open vault, one at a time; errors become tool errors.

    ``session``: this server's id, written into the journal entries it makes (``who: mcp``), so
    its ``undo`` reverts only what it did.
    """

    def __init__(self, vault: Vault, session: str) -> None:
        self.vault = vault
        self.session = session
        self.lock = threading.Lock()
        """Held while a call (or a resource read) runs: one at a time."""

    def call(
        self, work: Callable[[], dict[str, Any]], render: Callable[[dict[str, Any]], str]
    ) -> CallToolResult:
        """Run ``work`` (which returns the structured result) and add its text rendering.

        :class:`VaultmemError` → :class:`ToolError` with the error's one line. Field warnings
        met meanwhile are appended to the text.
        """
        with self.lock:
            self.vault.warnings.clear()
            try:
                data = work()
            except VaultmemError as err:
                raise ToolError(str(err)) from None
            text = render(data)
            warnings = list(dict.fromkeys(self.vault.warnings))
        if warnings:
            text += "\n" + "\n".join(f"warning: {w}" for w in warnings)
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=data
        )


__all__ = ["ADD", "MAX_REF_CHARS", "READ", "Ref", "VaultTools", "writes"]
