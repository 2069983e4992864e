"""MCP resources and the prompt: memory notes readable by URI, and how to use this memory.

Each memory is the resource ``vaultmem://memory/{id}`` (its note as markdown, frontmatter
included); the server lists the :data:`LISTED_MEMORIES` most recently used. The prompt
``use_memory`` tells an assistant when to recall, remember, reinforce, correct and forget.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.types import Resource

from vaultmem.core.notes.timestamps import utc_now
from vaultmem.errors import NoteNotFoundError, VaultmemError
from vaultmem.mcp.tools.tool_calls import VaultTools
from vaultmem.services.memories.note_pages import MAX_PAGE_CHARS, read_note_page

MEMORY_URI = "vaultmem://memory/{id}"
LISTED_MEMORIES = 50
"""How many memories ``resources/list`` names (the most recently used)."""

USE_MEMORY_PROMPT = """\
You have a long-term memory: vaultmem, markdown notes in the person's Obsidian vault. Use it so
the person never has to repeat themselves.

- Before answering about the person, their projects, preferences or earlier conversations,
  `recall` a few words. Each hit carries the memory's text; `read_note` reads any note in full
  (their own notes too, or the rest of a long memory).
- When a recalled memory helped, `touch` it (or `observe` several with the context's tags):
  used memories are kept and, used on several days, promoted to long-term memory.
- When you learn a durable fact, preference, decision or lesson, `remember` it: one memory per
  fact, in the person's words, with `source: "human"` when they said it and `"agent"` when you
  inferred it. The result says whether it was written or reinforced an existing memory.
- When a memory is wrong: if the fact changed, `remember` the new one with `supersedes` (the
  old one leaves recall); to fix a detail, `edit` it (append, or replace one line); `forget`
  archives one that is simply obsolete. `link` two memories that belong together; `pin` what
  must never fade.
- Everything you change is journaled: `undo` takes back your own last change (only yours), and
  `journal` lists the changes.
- Leave the lifecycle to the person's schedule; `lifecycle` and `consolidate` show what they
  would do unless you pass `apply: true` (ask first).
"""


class MemoryResources:
    """The resource list and reads of one server's vault."""

    def __init__(self, tools: VaultTools) -> None:
        self.tools = tools

    def listed(self) -> list[Resource]:
        """The most recently used memories as resources."""
        with self.tools.lock:
            rows = self.tools.vault.memories(sort="last_used", limit=LISTED_MEMORIES, now=utc_now())
        return [
            Resource(
                uri=MEMORY_URI.format(id=row.id),
                name=row.title,
                description=f"memory {row.path} ({row.status}, {row.layer})",
                mime_type="text/markdown",
            )
            for row in rows
            if row.id
        ]

    def read(self, id: str) -> str:  # noqa: A002  (the URI template's name)
        """The memory note with id ``id``, as markdown; raises :class:`ResourceError`."""
        vault = self.tools.vault
        with self.tools.lock:
            try:
                if not vault.index.paths_by_id(id):
                    vault.catch_up()
                paths = vault.index.paths_by_id(id)
                if not paths:
                    raise ResourceNotFoundError(f"no memory with id {id!r}")
                page = read_note_page(vault, paths[0], limit=MAX_PAGE_CHARS)
            except NoteNotFoundError as err:
                raise ResourceNotFoundError(str(err)) from None
            except VaultmemError as err:
                raise ResourceError(str(err)) from None
        return str(page["text"])


def register_resources(server: MCPServer, tools: VaultTools) -> MemoryResources:
    """Add the memory resource template and the ``use_memory`` prompt to ``server``."""
    resources = MemoryResources(tools)

    @server.resource(
        MEMORY_URI,
        name="memory",
        description="A memory note by its id: frontmatter and text, as markdown.",
        mime_type="text/markdown",
    )
    def memory(id: str) -> str:  # noqa: A002
        return resources.read(id)

    @server.prompt(
        name="use_memory",
        description="How to use vaultmem as your long-term memory: when to recall, remember, "
        "reinforce, correct, forget and undo.",
    )
    def use_memory() -> str:
        return USE_MEMORY_PROMPT

    return resources


__all__ = [
    "LISTED_MEMORIES",
    "MEMORY_URI",
    "USE_MEMORY_PROMPT",
    "MemoryResources",
    "register_resources",
]
