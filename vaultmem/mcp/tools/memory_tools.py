"""MCP tools on single memories and notes: remember, show, read_note, touch, observe, edit,
link, pin, unpin."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult
from pydantic import Field

from vaultmem.core.notes.timestamps import utc_now
from vaultmem.mcp import rendering
from vaultmem.mcp.tools.tool_calls import ADD, MAX_REF_CHARS, READ, Ref, VaultTools, writes
from vaultmem.services.memories.memory_rewrites import MAX_EDIT_CHARS, edit_memory, link_memories
from vaultmem.services.memories.note_pages import MAX_PAGE_CHARS, PAGE_CHARS, read_note_page

Layer = Literal["working", "episodic", "semantic", "procedural"]


def register(server: MCPServer, tools: VaultTools) -> None:  # noqa: C901  (one def per tool)
    vault = tools.vault

    @server.tool(annotations=ADD)
    def remember(
        content: Annotated[
            str,
            Field(
                description="What to remember: one fact, preference, decision or lesson, in "
                "plain sentences (markdown ok).",
                min_length=1,
            ),
        ],
        title: Annotated[
            str | None,
            Field(
                description="A short title (becomes the note's name); default: the first words.",
                max_length=MAX_REF_CHARS,
            ),
        ] = None,
        tags: Annotated[
            list[str] | None, Field(description='Topic tags, e.g. ["project/alpha", "food"].')
        ] = None,
        category: Annotated[
            str | None,
            Field(description="fact, preference, decision, lesson, procedure, … (default fact)."),
        ] = None,
        importance: Annotated[
            float | None,
            Field(
                description="0..1: how much forgetting it would cost (default 0.5).", ge=0.0, le=1.0
            ),
        ] = None,
        confidence: Annotated[
            float | None,
            Field(
                description="0..1: how sure you are (default 1); below 0.4 it is speculative and "
                "expires unless confirmed.",
                ge=0.0,
                le=1.0,
            ),
        ] = None,
        source: Annotated[
            Literal["human", "agent", "import", "consolidation"],
            Field(
                description="Who said it: human (the person told you) or agent (you inferred it)."
            ),
        ] = "agent",
        layer: Annotated[
            Layer | None,
            Field(description="Memory layer (default working); procedural for how-tos."),
        ] = None,
        pinned: Annotated[
            bool | None, Field(description="true: never forgotten or pruned.")
        ] = None,
        supersedes: Annotated[
            str | None,
            Field(
                description="Id or title of the memory this one corrects: that one becomes "
                "superseded and leaves recall.",
                min_length=1,
                max_length=MAX_REF_CHARS,
            ),
        ] = None,
        episode: Annotated[
            str | None,
            Field(
                description="The conversation or session this belongs to (any text); memories "
                "of one episode are boxed together.",
                min_length=1,
                max_length=MAX_REF_CHARS,
            ),
        ] = None,
    ) -> CallToolResult:
        """Save a new memory (a note in STM/) and say what happened: written, reinforced
        instead (an active memory already says the same), or corrected (it supersedes another).

        When reinforced instead, pinned true, new tags and a higher importance are applied to
        that memory; other options are not, and `options` says what became of each.
        Related memories are linked automatically. Use one memory per fact; prefer the
        person's own words. Returns the outcome, the memory's id, title, path and fields.
        """
        options: dict[str, Any] = {
            "title": title,
            "tags": tags,
            "category": category,
            "importance": importance,
            "confidence": confidence,
            "source": source,
            "layer": layer,
            "pinned": pinned,
            "supersedes": supersedes,
            "episode": episode,
        }
        chosen = {k: v for k, v in options.items() if v is not None}
        return tools.call(
            lambda: vault.save(content, now=utc_now(), **chosen).as_dict(),
            rendering.remembered_text,
        )

    @server.tool(annotations=READ)
    def show(id_or_title: Ref) -> CallToolResult:
        """One memory in full: its text, fields (status, layer, tags, use_count, …), decay
        score and its factors, effective importance and review priority."""
        return tools.call(
            lambda: vault.memory(id_or_title, now=utc_now()).as_dict(), rendering.memory_text
        )

    @server.tool(annotations=READ)
    def read_note(
        id_or_title_or_path: Annotated[
            str,
            Field(
                description="A memory's id, a note's title, or its path inside the vault "
                '(e.g. "Projects/Alpha.md"): any note, the person\'s own included.',
                min_length=1,
                max_length=MAX_REF_CHARS,
            ),
        ],
        offset: Annotated[
            int, Field(description="Character to start at (next_offset of the last page).", ge=0)
        ] = 0,
        limit: Annotated[
            int, Field(description="Characters to return at most.", ge=1, le=MAX_PAGE_CHARS)
        ] = PAGE_CHARS,
    ) -> CallToolResult:
        """Read any note of the vault as it is on disk (frontmatter and all), a page at a time:
        for the person's own notes and for memories too long for recall's excerpt. Never reads
        outside the vault."""
        return tools.call(
            lambda: read_note_page(vault, id_or_title_or_path, offset=offset, limit=limit),
            rendering.page_text,
        )

    @server.tool(annotations=writes(destructive=False, idempotent=False))
    def touch(
        id_or_title: Ref,
        boost: Annotated[bool, Field(description="Also add 0.1 to its strength.")] = False,
    ) -> CallToolResult:
        """Reinforce a memory you just used: last_used = now, use_count + 1 (keeps it from
        fading; repeated use over several days promotes it to long-term memory)."""
        return tools.call(
            lambda: vault.touch(id_or_title, boost=boost, now=utc_now()).as_dict(),
            lambda data: rendering.memory_text(data, "touched"),
        )

    @server.tool(annotations=writes(destructive=False, idempotent=False))
    def observe(
        ids: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=MAX_REF_CHARS)]],
            Field(description="Ids or titles of the memories used.", min_length=1, max_length=100),
        ],
        context: Annotated[
            list[str] | None,
            Field(description='Tags of the context they were used in, e.g. ["travel"].'),
        ] = None,
    ) -> CallToolResult:
        """Record that memories were used together in a context: a touch of each (a memory
        named twice counts once), plus the bookkeeping that tells cross-domain use and review
        apart."""
        return tools.call(
            lambda: {
                "memories": [m.as_dict() for m in vault.observe(ids, context or [], now=utc_now())]
            },
            lambda data: rendering.memories_text(data["memories"], "observed"),
        )

    @server.tool(annotations=writes(destructive=False, idempotent=False))
    def edit(
        id_or_title: Ref,
        append: Annotated[
            str | None,
            Field(
                description="Text to add at the end of the memory (a new paragraph).",
                min_length=1,
                max_length=MAX_EDIT_CHARS,
            ),
        ] = None,
        replace: Annotated[
            str | None,
            Field(
                description="A line of the memory's text to replace (exactly as written; it "
                "must occur once).",
                min_length=1,
                max_length=MAX_EDIT_CHARS,
            ),
        ] = None,
        by: Annotated[
            str | None,
            Field(
                description="The line to put in its place ('' removes the line).",
                max_length=MAX_EDIT_CHARS,
            ),
        ] = None,
    ) -> CallToolResult:
        """Correct a memory's text: append a paragraph, or replace one line (give replace and
        by). Only those lines change; journaled, so `undo` reverts it. For a fact that is
        now wrong as a whole, remember the new one with supersedes instead."""
        # (the SDK puts "Error executing tool edit: " before these lines)
        if (append is None) == (replace is None):
            raise ToolError("give append, or replace with by (not both)")
        if replace is not None and by is None:
            raise ToolError("replace needs by (the new line; '' removes the line)")
        if by is not None and replace is None:
            raise ToolError("by goes with replace (the line it replaces); append takes no by")
        return tools.call(
            lambda: edit_memory(
                vault, id_or_title, append=append, replace=replace, with_text=by, now=utc_now()
            ).as_dict(),
            rendering.rewrite_text,
        )

    @server.tool(annotations=writes(destructive=False, idempotent=False))
    def link(
        id_or_title: Ref,
        to: Annotated[
            str,
            Field(
                description="Id or title of the memory to link to.",
                min_length=1,
                max_length=MAX_REF_CHARS,
            ),
        ],
    ) -> CallToolResult:
        """Link two related memories: adds [[to]] to the first one's `related` property
        (recall then brings them up together). Journaled, so `undo` reverts it."""
        return tools.call(
            lambda: link_memories(vault, id_or_title, to, now=utc_now()).as_dict(),
            rendering.rewrite_text,
        )

    @server.tool(annotations=writes(destructive=False, idempotent=True))
    def pin(id_or_title: Ref) -> CallToolResult:
        """Pin a memory: it is never forgotten, archived or pruned (for what must stay)."""
        return tools.call(
            lambda: vault.pin(id_or_title, True, now=utc_now()).as_dict(),
            lambda data: rendering.memory_text(data, "pinned"),
        )

    @server.tool(annotations=writes(destructive=False, idempotent=True))
    def unpin(id_or_title: Ref) -> CallToolResult:
        """Unpin a memory: it fades and is archived like any other when unused."""
        return tools.call(
            lambda: vault.pin(id_or_title, False, now=utc_now()).as_dict(),
            lambda data: rendering.memory_text(data, "unpinned"),
        )


__all__ = ["register"]
