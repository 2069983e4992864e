"""MCP tools that move memories or take changes back: forget, promote, lifecycle, consolidate,
undo, journal."""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from vaultmem.core.lifecycle.lifecycle_plan import PASS_ORDER
from vaultmem.core.notes.timestamps import utc_now
from vaultmem.mcp import rendering
from vaultmem.mcp.tools.tool_calls import READ, Ref, VaultTools, writes
from vaultmem.services.semantic.consolidation import consolidate as run_consolidation

Apply = Annotated[
    bool,
    Field(description="false (default): only show what would happen; true: carry it out."),
]


def register(server: MCPServer, tools: VaultTools) -> None:  # noqa: C901  (one def per tool)
    vault = tools.vault

    @server.tool(annotations=writes(destructive=True, idempotent=True))
    def forget(id_or_title: Ref) -> CallToolResult:
        """Archive one memory now (moved to Archive/, status archived): for a memory that is
        wrong or obsolete. Reversible: `undo` right after puts it back exactly. Refuses
        pinned memories and notes that are not memories."""
        return tools.call(
            lambda: vault.forget(id_or_title, now=utc_now()).as_dict(),
            lambda data: rendering.moves_text([data], False),
        )

    @server.tool(annotations=writes(destructive=False, idempotent=True))
    def promote(
        id_or_title: Annotated[
            str | None,
            Field(
                description="The memory to promote now (id or title); default: every "
                "candidate (used on several days).",
                min_length=1,
                max_length=1000,
            ),
        ] = None,
        apply: Apply = False,
    ) -> CallToolResult:
        """Move memories to long-term memory (LTM/, layer semantic): the one named, or every
        well-used candidate. A dry run unless apply is true; `undo` reverts it. Refuses notes
        that are not memories (boxes, traces) and memories already promoted, archived or
        superseded."""
        return tools.call(
            lambda: vault.promote(id_or_title, dry_run=not apply, now=utc_now()).as_dict(),
            lambda data: rendering.moves_text([data], not apply),
        )

    @server.tool(annotations=writes(destructive=True, idempotent=False))
    def lifecycle(
        apply: Apply = False,
        passes: Annotated[
            list[Literal["seal", "promote", "expire", "forget", "prune"]] | None,
            Field(
                description="Which passes, run in the order seal, promote, expire, forget, "
                "prune (default: all of them; an empty list is refused).",
            ),
        ] = None,
    ) -> CallToolResult:
        """Run the memory lifecycle: seal boxes of related memories, promote well-used ones to
        long-term memory, expire speculative ones, archive faded ones, prune the excess.
        A dry run unless apply is true; an applied run is undone by `undo`."""
        chosen = PASS_ORDER if passes is None else tuple(passes)  # []: refused, not "all"
        return tools.call(
            lambda: vault.lifecycle(chosen, dry_run=not apply, now=utc_now()).as_dict(),
            lambda data: rendering.moves_text(data["passes"], bool(data["dry_run"])),
        )

    @server.tool(annotations=writes(destructive=False, idempotent=False))
    def consolidate(apply: Apply = False) -> CallToolResult:
        """Merge near-duplicate memories (close vectors; needs embeddings) into one new note;
        the originals become superseded, nothing is deleted. A dry run unless apply is true;
        an applied run is undone by `undo`."""
        return tools.call(
            lambda: run_consolidation(vault, now=utc_now(), dry_run=not apply).as_dict(),
            rendering.consolidation_text,
        )

    @server.tool(annotations=writes(destructive=True, idempotent=False))
    def undo(
        entry: Annotated[
            str | None,
            Field(
                description="The journal entry to revert (from `journal`); default: the "
                "newest change this server made.",
                min_length=1,
                max_length=200,
            ),
        ] = None,
    ) -> CallToolResult:
        """Take back a change this server made (forget, lifecycle, promote, edit, link,
        consolidate): files back in place, edited lines back byte for byte. Only this
        server's changes: for anything else it refuses and names the entry. Refuses, naming
        the note, if a note changed since."""
        return tools.call(
            lambda: vault.undo(entry, session=tools.session).as_dict(), rendering.undo_text
        )

    @server.tool(annotations=READ)
    def journal(
        limit: Annotated[int, Field(description="How many entries at most.", ge=1, le=500)] = 20,
    ) -> CallToolResult:
        """The journal of changes, newest first: each entry's name, command, who made it
        (cli, cron, mcp with its session; yours is marked), files changed, time and whether it
        can still be undone."""

        def work() -> dict[str, object]:
            rows = vault.journal()[:limit]
            for row in rows:
                row["mine"] = row["session"] == tools.session
            return {"entries": rows}

        return tools.call(work, rendering.journal_text)


__all__ = ["register"]
