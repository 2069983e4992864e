"""A note's neighbours in the link graph: outgoing links, backlinks and unresolved links."""

from __future__ import annotations

from dataclasses import dataclass

from vaultmem.core.note_parse import title_of
from vaultmem.store.index_db import IndexDB
from vaultmem.store.index_links import LinkRow


@dataclass(frozen=True, slots=True)
class NoteLinks:
    """The links of the note at ``path`` as the index holds them (ordered by source, link).

    ``ids`` maps each linked note's path to its ``id`` (``None`` for a person's own notes).
    """

    path: str
    outgoing: list[LinkRow]
    backlinks: list[LinkRow]
    ids: dict[str, str | None]

    @property
    def resolved(self) -> list[LinkRow]:
        return [r for r in self.outgoing if r.resolved]

    @property
    def unresolved(self) -> list[LinkRow]:
        return [r for r in self.outgoing if not r.resolved]

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: ``outgoing`` (resolved), ``backlinks``, ``unresolved``; neighbours carry
        their ``title`` and ``id`` so a caller can look them up."""

        def neighbour(path: str) -> dict[str, object]:
            return {"title": title_of(path), "id": self.ids.get(path)}

        return {
            "path": self.path,
            "title": title_of(self.path),
            "outgoing": [
                {
                    "target": r.target,
                    "kind": r.kind,
                    "resolved": r.resolved,
                    **neighbour(str(r.resolved)),
                }
                for r in self.resolved
            ],
            "backlinks": [
                {"source": r.source, "kind": r.kind, **neighbour(r.source)} for r in self.backlinks
            ],
            "unresolved": [{"target": r.target, "kind": r.kind} for r in self.unresolved],
        }


def note_links(index: IndexDB, path: str) -> NoteLinks:
    """The links of the indexed note at ``path`` (vault-relative) and its neighbours' ids."""
    outgoing = index.links_from(path)
    backlinks = index.links_into(path)
    paths = sorted(
        {str(r.resolved) for r in outgoing if r.resolved} | {r.source for r in backlinks}
    )
    ids: dict[str, str | None] = {}
    for start in range(0, len(paths), 500):
        chunk = paths[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = index.conn.execute(f"SELECT path, id FROM notes WHERE path IN ({marks})", chunk)
        ids.update((str(p), None if i is None else str(i)) for p, i in rows)
    return NoteLinks(path, outgoing, backlinks, ids)


__all__ = ["NoteLinks", "note_links"]
