"""``vaultmem mcp``: a Model Context Protocol server over stdio for one live vault.

Built on the official ``mcp`` SDK (:class:`mcp.server.mcpserver.MCPServer`). Every tool is a thin
layer over one :class:`~vaultmem.Vault` method and returns structured content (a JSON object)
with a plain-text rendering (:mod:`vaultmem.mcp.rendering`). A :class:`~vaultmem.errors.
VaultmemError` — unknown id, ambiguous title, a pass running, a note with conflict markers —
becomes an MCP tool error whose text is that error's one line; the server keeps serving.

Tools take ids and titles (and words to search), never file paths: a title is made a safe file
name inside ``STM/`` and a lookup only matches notes in the vault's index, so no argument reaches
outside the vault. Calls run one at a time. While the server runs, a
:class:`~vaultmem.services.watcher.VaultWatcher` keeps the index in step with the notes (and
writes the heartbeat that lets recall skip the vault walk), so a note saved in Obsidian is found
by the next recall within about a second. Writes that meet a running pass wait
:data:`LOCK_WAIT_SECONDS`, then fail with "a pass is running, try again".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from vaultmem import __version__
from vaultmem.core.lifecycle_plan import PASS_ORDER
from vaultmem.core.timestamps import utc_now
from vaultmem.errors import VaultmemError
from vaultmem.mcp import LOCK_WAIT_SECONDS, rendering
from vaultmem.services.background_embedding import BackgroundEmbedder
from vaultmem.services.vault import Vault
from vaultmem.services.watcher import VaultWatcher

logger = logging.getLogger(__name__)

MAX_REF_CHARS = 1000
"""Longest id or title a tool accepts."""

INSTRUCTIONS = """\
vaultmem is your long-term memory, kept as markdown notes in the person's Obsidian vault.
Use `recall` with a few words before answering questions about the person, their projects or
earlier conversations; each hit carries the memory's text. Use `remember` for a durable fact,
preference, decision or lesson (one memory per fact). When a recalled memory helped, `touch`
it (or `observe` several with the context's tags) so it is kept; `forget` archives a memory
that is wrong or obsolete (reversible with `undo`). Memories fade unless used; `lifecycle`
shows (and with apply: true runs) the passes that promote, archive and prune them.
"""

Ref = Annotated[
    str,
    Field(
        description="The memory's id (e.g. 01JD8X…) or its title (the note's name, case-"
        "insensitive). Not a file path.",
        min_length=1,
        max_length=MAX_REF_CHARS,
    ),
]

_READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_ADD = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


def _annotations(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


class VaultTools:
    """Runs tool calls against one open vault, one at a time; errors become tool errors."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self._lock = threading.Lock()

    def call(
        self, work: Callable[[], dict[str, Any]], render: Callable[[dict[str, Any]], str]
    ) -> CallToolResult:
        """Run ``work`` (which returns the structured result) and add its text rendering.

        :class:`VaultmemError` → :class:`ToolError` with the error's one line. Field warnings
        met meanwhile are appended to the text.
        """
        with self._lock:
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


def build_server(vault: Vault) -> MCPServer:
    """An :class:`MCPServer` whose tools act on ``vault`` (already open)."""
    server = MCPServer(
        name="vaultmem", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )
    tools = VaultTools(vault)

    @server.tool(annotations=_ADD)
    def remember(
        content: Annotated[
            str,
            Field(
                description="What to remember: one fact, preference, "
                "decision or lesson, in plain sentences (markdown ok).",
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
        source: Annotated[
            Literal["human", "agent", "import", "consolidation"],
            Field(
                description="Who said it: human (the person told you) or agent (you inferred it)."
            ),
        ] = "agent",
    ) -> CallToolResult:
        """Save a new memory (a note in STM/) and return it with its id.

        Related memories are linked automatically. Use one memory per fact; prefer the
        person's own words. Returns the memory's id, title, path in the vault and fields.
        """
        options: dict[str, Any] = {
            "title": title,
            "tags": tags,
            "category": category,
            "importance": importance,
            "source": source,
        }
        return tools.call(
            lambda: vault.remember(content, now=utc_now(), **options).as_dict(),
            lambda data: rendering.memory_text(data, "remembered"),
        )

    @server.tool(annotations=_READ)
    def recall(
        query: Annotated[
            str,
            Field(
                description="A few words about what you need, e.g. "
                '"coffee order" or "staging database port".',
                min_length=1,
            ),
        ],
        k: Annotated[int, Field(description="How many results.", ge=1, le=100)] = 10,
        status: Annotated[
            Literal["active", "promoted", "archived", "superseded"] | None,
            Field(description="Only memories with this status."),
        ] = None,
        layer: Annotated[
            Literal["working", "episodic", "semantic", "procedural"] | None,
            Field(description="Only memories in this layer."),
        ] = None,
        tag: Annotated[
            str | None,
            Field(
                description="Only notes with this tag or one nested "
                "in it (project matches project/alpha)."
            ),
        ] = None,
        folder: Annotated[
            str | None, Field(description="Only notes under this vault folder, e.g. LTM.")
        ] = None,
        since: Annotated[
            str | None,
            Field(description="Only notes used or created at or after this ISO 8601 date/time."),
        ] = None,
        include_archived: Annotated[
            bool, Field(description="Also search archived memories.")
        ] = False,
        explain: Annotated[
            bool,
            Field(
                description="Add each signal behind every score "
                "(relevance, decay, graph, bm25, review)."
            ),
        ] = False,
    ) -> CallToolResult:
        """Find the memories (and the person's notes) that best answer a query, best first.

        Ranks by keyword relevance, memory strength and links to the strongest hits; memories
        due for review are blended in. Each hit has its text (the note body, cut with a marker
        when long), title, id, path in the vault and score. Does not change anything; `touch`
        the hits you used.
        """

        def work() -> dict[str, Any]:
            hits = vault.recall(
                query,
                k=k,
                now=utc_now(),
                status=status,
                layer=layer,
                tag=tag,
                folder=folder,
                since=since or None,
                include_archived=include_archived,
            )
            rows = []
            for hit in hits:
                row = hit.as_dict()
                if not explain:
                    row.pop("contributions", None)
                    row.pop("signals", None)
                rows.append(row)
            return {"query": query, "hits": rows}

        return tools.call(work, lambda data: rendering.hits_text(query, data["hits"]))

    @server.tool(annotations=_READ)
    def show(id_or_title: Ref) -> CallToolResult:
        """One memory in full: its text, fields (status, layer, tags, use_count, …), decay
        score and its factors, effective importance and review priority."""
        return tools.call(
            lambda: vault.memory(id_or_title, now=utc_now()).as_dict(), rendering.memory_text
        )

    @server.tool(annotations=_annotations(destructive=False, idempotent=False))
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

    @server.tool(annotations=_annotations(destructive=False, idempotent=False))
    def observe(
        ids: Annotated[
            list[str],
            Field(description="Ids or titles of the memories used.", min_length=1, max_length=100),
        ],
        context: Annotated[
            list[str] | None,
            Field(description='Tags of the context they were used in, e.g. ["travel"].'),
        ] = None,
    ) -> CallToolResult:
        """Record that memories were used together in a context: a touch of each, plus the
        bookkeeping that tells cross-domain use and review apart."""
        for ref in ids:
            if not ref or len(ref) > MAX_REF_CHARS:
                raise ToolError(f"ids must be 1..{MAX_REF_CHARS} characters each")
        return tools.call(
            lambda: {
                "memories": [m.as_dict() for m in vault.observe(ids, context or [], now=utc_now())]
            },
            lambda data: rendering.memories_text(data["memories"], "observed"),
        )

    @server.tool(annotations=_annotations(destructive=True, idempotent=True))
    def forget(id_or_title: Ref) -> CallToolResult:
        """Archive one memory now (moved to Archive/, status archived): for a memory that is
        wrong or obsolete. Reversible: `undo` right after puts it back exactly. Refuses
        pinned memories and notes that are not memories."""
        return tools.call(
            lambda: {"passes": [vault.forget(id_or_title, now=utc_now()).as_dict()]},
            lambda data: rendering.moves_text(data["passes"], False),
        )

    @server.tool(annotations=_READ)
    def review(
        k: Annotated[int, Field(description="How many memories.", ge=1, le=100)] = 10,
    ) -> CallToolResult:
        """Memories about to fade (decay score in the danger zone), most urgent first: worth
        asking the person about, then `touch` the ones still true or `forget` the rest."""
        return tools.call(
            lambda: {"memories": [r.as_dict() for r in vault.review(k=k, now=utc_now())]},
            lambda data: rendering.rows_text(data["memories"], "no memories are due for review"),
        )

    @server.tool(annotations=_READ)
    def status() -> CallToolResult:
        """Counts of notes and memories per folder, status and layer; how many are in the
        danger zone; what a lifecycle pass would promote and forget now."""
        return tools.call(lambda: vault.status(now=utc_now()).as_dict(), rendering.status_text)

    @server.tool(annotations=_READ)
    def links(id_or_title: Ref) -> CallToolResult:
        """A memory's neighbours in the vault's link graph: the notes it links to, the notes
        linking to it (backlinks) with their titles and ids, and links to missing notes."""
        return tools.call(lambda: vault.links(id_or_title).as_dict(), rendering.links_text)

    @server.tool(annotations=_annotations(destructive=True, idempotent=False))
    def lifecycle(
        apply: Annotated[
            bool,
            Field(description="false (default): only show what would happen; true: carry it out."),
        ] = False,
        passes: Annotated[
            list[Literal["seal", "promote", "expire", "forget", "prune"]] | None,
            Field(description="Which passes (default all, in order)."),
        ] = None,
    ) -> CallToolResult:
        """Run the memory lifecycle: seal boxes of related memories, promote well-used ones to
        long-term memory, expire speculative ones, archive faded ones, prune the excess.
        A dry run unless apply is true; an applied run is undone by `undo`."""
        chosen = tuple(passes) if passes else PASS_ORDER
        return tools.call(
            lambda: vault.lifecycle(chosen, dry_run=not apply, now=utc_now()).as_dict(),
            lambda data: rendering.moves_text(data["passes"], bool(data["dry_run"])),
        )

    @server.tool(annotations=_annotations(destructive=True, idempotent=False))
    def undo() -> CallToolResult:
        """Reverse the last applied lifecycle pass or forget exactly (files back in place,
        edited lines back byte for byte). Refuses, naming the note, if a note changed since."""
        return tools.call(lambda: vault.undo().as_dict(), rendering.undo_text)

    @server.tool(annotations=_READ)
    def doctor() -> CallToolResult:
        """Check the vault: notes whose YAML does not parse, conflict markers, duplicate
        names, wrong-typed values, unresolved links; repairs a stale index (never a note)."""
        return tools.call(lambda: vault.doctor().as_dict(), rendering.doctor_text)

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
        BackgroundEmbedder(vault.root, Vault.open)
        if vault.settings.embeddings.enabled
        else None
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


__all__ = ["INSTRUCTIONS", "LOCK_WAIT_SECONDS", "VaultTools", "build_server", "serve"]
