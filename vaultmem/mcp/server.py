"""``vaultmem mcp``: a Model Context Protocol server over stdio for one live vault.

Built on the official ``mcp`` SDK (:class:`mcp.server.mcpserver.MCPServer`); docs/mcp.md lists
the tools. Every tool (:mod:`vaultmem.mcp.tools`) is a thin layer over one :class:`~vaultmem.
Vault` method and returns structured content (a JSON object, its ``outputSchema`` declared)
with a plain-text rendering (:mod:`vaultmem.mcp.rendering`). An unknown or bad argument, or a
:class:`~vaultmem.errors.VaultmemError` — unknown id, ambiguous title, a pass running, a note
with conflict markers — becomes an MCP tool error whose text is one line
(:mod:`vaultmem.mcp.strict`); the server keeps serving. Memory notes are resources and one
prompt says how to use them (:mod:`vaultmem.mcp.resources`).

Tools take ids and titles (and words to search); only ``read_note`` takes a path, confined to
the vault. Calls run one at a time; each server writes its own session into the journal, so
its ``undo`` reverts only what it did. While the server runs, a
:class:`~vaultmem.services.index.watcher.VaultWatcher` keeps the index in step with the notes (and
writes the heartbeat that lets recall skip the vault walk), so a note saved in Obsidian is found
by the next recall within about a second. Writes that meet a running pass wait
:data:`LOCK_WAIT_SECONDS`, then fail with "a pass is running, try again".
"""

from __future__ import annotations

import logging
import threading
import uuid

from mcp.types import Resource

from vaultmem import __version__
from vaultmem.errors import VaultmemError
from vaultmem.mcp import LOCK_WAIT_SECONDS
from vaultmem.mcp.resources import MemoryResources, register_resources
from vaultmem.mcp.strict import StrictServer
from vaultmem.mcp.tools import register_tools
from vaultmem.mcp.tools.tool_calls import VaultTools
from vaultmem.services.index.watcher import VaultWatcher
from vaultmem.services.semantic.background_embedding import BackgroundEmbedder
from vaultmem.services.vault import Vault

logger = logging.getLogger(__name__)

INSTRUCTIONS = """\
vaultmem is your long-term memory, kept as markdown notes in the person's Obsidian vault.
Use `recall` with a few words before answering questions about the person, their projects or
earlier conversations; each hit carries the memory's text (`read_note` reads any note in full).
Use `remember` for a durable fact, preference, decision or lesson (one memory per fact;
`supersedes` when it corrects one). When a recalled memory helped, `touch` it (or `observe`
several with the context's tags) so it is kept; `edit` fixes a detail, `forget` archives a
memory that is wrong or obsolete, and `undo` takes back this server's last change. Memories fade
unless used; `lifecycle` shows (and with apply: true runs) the passes that promote, archive and
prune them. The prompt `use_memory` says more.
"""


class VaultServer(StrictServer):
    """The vaultmem MCP server: strict tools, memory resources and the ``use_memory`` prompt."""

    memory_resources: MemoryResources | None = None

    async def list_resources(self) -> list[Resource]:
        listed = await super().list_resources()
        if self.memory_resources is not None:
            listed += self.memory_resources.listed()
        return listed


def build_server(vault: Vault, *, session: str | None = None) -> VaultServer:
    """A :class:`VaultServer` whose tools act on ``vault`` (already open).

    ``session``: this server's id in the journal (default: a new random one); the vault's
    journal entries made through it say ``who: mcp`` and this session, and its ``undo``
    reverts only those.
    """
    session = session or uuid.uuid4().hex
    vault.origin = {"who": "mcp", "session": session}
    server = VaultServer(
        name="vaultmem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    tools = VaultTools(vault, session)
    register_tools(server, tools)
    server.memory_resources = register_resources(server, tools)
    server.seal_schemas()
    return server


def serve(vault: Vault, *, lock_wait_seconds: float = LOCK_WAIT_SECONDS) -> None:
    """Serve ``vault`` over stdin/stdout until the client closes the connection.

    The watcher starts in the background (its first sync may take a while on a large vault
    whose index is old); until it is up, tools bring the index up to date themselves. With an
    ``[embeddings]`` provider, changed notes are embedded in a thread of their own, as in
    ``vaultmem watch``.
    """
    vault.lock_wait_seconds = lock_wait_seconds
    embedder = (
        BackgroundEmbedder(vault.root, Vault.open) if vault.settings.embeddings.enabled else None
    )
    watcher = VaultWatcher(vault, on_sync=embedder.notify if embedder is not None else None)
    starter = threading.Thread(
        target=_start_watcher, args=(watcher, embedder), name="vaultmem-mcp-watch", daemon=True
    )
    starter.start()
    try:
        build_server(vault).run("stdio")
    finally:
        watcher.stop()  # also ends a first sync still running
        starter.join(timeout=10.0)
        if embedder is not None:
            embedder.stop()


def _start_watcher(watcher: VaultWatcher, embedder: BackgroundEmbedder | None = None) -> None:
    try:
        watcher.start()
        if embedder is not None:
            embedder.start()
    except (VaultmemError, OSError) as err:  # e.g. a read-only sidecar: one line, serve on
        logger.error(
            "mcp: the watcher could not start (%s); every call syncs the index itself", err
        )


__all__ = [
    "INSTRUCTIONS",
    "LOCK_WAIT_SECONDS",
    "VaultServer",
    "VaultTools",
    "build_server",
    "serve",
]
