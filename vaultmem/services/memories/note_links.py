"""A note's neighbours in the link graph: outgoing links, backlinks and unresolved links."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from vaultmem.core.notes.note_parse import title_of
from vaultmem.store.index_db import IndexDB
from vaultmem.store.index_links import LinkRow


@dataclass(frozen=True, slots=True)
class LinkGroup:
    """Every link between a note and one neighbour (or to one unresolved target): the first as
    written, and how many of each kind (``{"wikilink": 2, "frontmatter": 1}``)."""

    first: LinkRow
    kinds: dict[str, int]

    def describe_kinds(self) -> str:
        """``"frontmatter, wikilink ×2"``."""
        return ", ".join(k if n == 1 else f"{k} ×{n}" for k, n in self.kinds.items())


def grouped(rows: list[LinkRow], key: Callable[[LinkRow], str]) -> list[LinkGroup]:
    """``rows`` as one :class:`LinkGroup` per ``key`` (neighbour or target), first-seen order."""
    groups: dict[str, LinkGroup] = {}
    for row in rows:
        group = groups.setdefault(key(row), LinkGroup(row, {}))
        group.kinds[row.kind] = group.kinds.get(row.kind, 0) + 1
    return list(groups.values())


@dataclass(frozen=True, slots=True)
class NoteLinks:
    """The links of the note at ``path`` as the index holds them (ordered by source, link).

    ``ids`` maps each linked note's path to its ``id`` (``None`` for a person's own notes).
    ``outgoing`` and ``backlinks`` hold every link (a note linking twice, twice);
    :meth:`neighbours` and :meth:`as_dict` list each neighbour once.
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

    def neighbours(self) -> tuple[list[LinkGroup], list[LinkGroup], list[LinkGroup]]:
        """(outgoing per note linked to, backlinks per linking note, unresolved per target)."""
        return (
            grouped(self.resolved, lambda r: str(r.resolved)),
            grouped(self.backlinks, lambda r: r.source),
            grouped(self.unresolved, lambda r: r.target),
        )

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: ``outgoing`` (resolved), ``backlinks``, ``unresolved``, each neighbour
        or target once: ``target`` and ``kind`` of its first link, ``kinds`` counting its links
        by kind; neighbours carry their ``title`` and ``id`` so a caller can look them up."""

        def neighbour(path: str) -> dict[str, object]:
            return {"title": title_of(path), "id": self.ids.get(path)}

        outgoing, backlinks, unresolved = self.neighbours()
        return {
            "path": self.path,
            "title": title_of(self.path),
            "outgoing": [
                {
                    "target": g.first.target,
                    "kind": g.first.kind,
                    "kinds": g.kinds,
                    "resolved": g.first.resolved,
                    **neighbour(str(g.first.resolved)),
                }
                for g in outgoing
            ],
            "backlinks": [
                {
                    "source": g.first.source,
                    "kind": g.first.kind,
                    "kinds": g.kinds,
                    **neighbour(g.first.source),
                }
                for g in backlinks
            ],
            "unresolved": [
                {"target": g.first.target, "kind": g.first.kind, "kinds": g.kinds}
                for g in unresolved
            ],
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


__all__ = ["LinkGroup", "NoteLinks", "grouped", "note_links"]
