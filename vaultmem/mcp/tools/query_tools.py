"""MCP tools that look things up (none changes the vault): recall, list, recent, review,
status, links, embed_status, doctor."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from vaultmem.core.notes.timestamps import utc_now
from vaultmem.mcp import rendering
from vaultmem.mcp.tools.tool_calls import READ, Ref, VaultTools
from vaultmem.services.semantic.embeddings import embed_status as coverage

Status = Literal["active", "promoted", "archived", "superseded"]
Layer = Literal["working", "episodic", "semantic", "procedural"]
Sort = Literal["score", "ei", "last_used", "created", "title"]

StatusFilter = Annotated[Status | None, Field(description="Only memories with this status.")]
LayerFilter = Annotated[Layer | None, Field(description="Only memories in this layer.")]
TagFilter = Annotated[
    str | None,
    Field(description="Only notes with this tag or one nested in it (project: project/alpha)."),
]
FolderFilter = Annotated[
    str | None,
    Field(description="Only notes under this vault folder, e.g. LTM (it must exist, case too)."),
]
Limit = Annotated[int, Field(description="How many memories at most.", ge=1, le=500)]


def register(server: MCPServer, tools: VaultTools) -> None:  # noqa: C901  (one def per tool)
    vault = tools.vault

    def listed(
        status: str | None,
        layer: str | None,
        tag: str | None,
        folder: str | None,
        sort: str,
        limit: int,
    ) -> CallToolResult:
        """What ``list`` and ``recent`` answer: the memories
        :meth:`~vaultmem.services.vault.Vault.memories` finds, as rows."""
        return tools.call(
            lambda: {
                "memories": [
                    row.as_dict()
                    for row in vault.memories(
                        status=status,
                        layer=layer,
                        tag=tag,
                        folder=folder,
                        sort=sort,
                        limit=limit,
                        now=utc_now(),
                    )
                ]
            },
            lambda data: rendering.rows_text(data["memories"], "no memories match"),
        )

    @server.tool(annotations=READ)
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
        status: StatusFilter = None,
        layer: LayerFilter = None,
        tag: TagFilter = None,
        folder: FolderFilter = None,
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
        when long: `read_note` gives the rest), title, id, path in the vault and score. Does
        not change anything; `touch` the hits you used.
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
                since=since,
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

    @server.tool(name="list", annotations=READ)
    def list_(
        status: StatusFilter = None,
        layer: LayerFilter = None,
        tag: TagFilter = None,
        folder: FolderFilter = None,
        sort: Annotated[
            Sort, Field(description="Order: score, ei, last_used, created (newest first), title.")
        ] = "score",
        limit: Limit = 50,
    ) -> CallToolResult:
        """List memories with their score, effective importance and review priority, with the
        filters and orders of `vaultmem list`."""
        return listed(status, layer, tag, folder, sort, limit)

    @server.tool(annotations=READ)
    def recent(
        status: StatusFilter = None,
        layer: LayerFilter = None,
        tag: TagFilter = None,
        folder: FolderFilter = None,
        limit: Limit = 10,
    ) -> CallToolResult:
        """The memories used most recently (last_used, newest first): what was on the
        person's mind lately. The filters of `list`."""
        return listed(status, layer, tag, folder, "last_used", limit)

    @server.tool(annotations=READ)
    def review(
        k: Annotated[int, Field(description="How many memories.", ge=1, le=100)] = 10,
    ) -> CallToolResult:
        """Memories about to fade (decay score in the danger zone), most urgent first: worth
        asking the person about, then `touch` the ones still true or `forget` the rest."""
        return tools.call(
            lambda: {"memories": [r.as_dict() for r in vault.review(k=k, now=utc_now())]},
            lambda data: rendering.rows_text(data["memories"], "no memories are due for review"),
        )

    @server.tool(annotations=READ)
    def status() -> CallToolResult:
        """Counts of notes and memories per folder, status and layer; how many are in the
        danger zone; what a lifecycle pass would promote and forget now."""
        return tools.call(lambda: vault.status(now=utc_now()).as_dict(), rendering.status_text)

    @server.tool(annotations=READ)
    def links(id_or_title: Ref) -> CallToolResult:
        """A memory's neighbours in the vault's link graph: the notes it links to, the notes
        linking to it (backlinks) with their titles and ids, and links to missing notes."""
        return tools.call(lambda: vault.links(id_or_title).as_dict(), rendering.links_text)

    @server.tool(annotations=READ)
    def embed_status() -> CallToolResult:
        """Whether semantic recall is on: the embedding provider, whether it answers, and how
        many notes have a current vector, a stale one or none (`vaultmem embed` fills them)."""
        return tools.call(lambda: coverage(vault).as_dict(), rendering.embed_status_text)

    @server.tool(annotations=READ)
    def doctor() -> CallToolResult:
        """Check the vault: notes whose YAML does not parse, conflict markers, duplicate
        names, wrong-typed values, unresolved links; repairs a stale index (never a note)."""
        return tools.call(lambda: vault.doctor().as_dict(), rendering.doctor_text)


__all__ = ["register"]
