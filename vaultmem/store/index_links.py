"""The link table of the sidecar index ("Index and graph"): links, backlinks, edge counts.

Each link row keeps the target as written, its lower-cased file name (``target_key``, so an
unresolved link resolves when a note of that name appears), and — when it resolves — the
target's path and nid. ``notes.edges`` (distinct notes linked to or from a note, the edge factor
of EI, docs/user-guide.md "Scores") is recounted for exactly the notes whose links changed.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple, TypeVar

T = TypeVar("T")

_LOW_64 = (1 << 64) - 1
"""Mask of the higher note id in an edge packed as ``low << 64 | high`` (see set_edges)."""

LinkValues = tuple[int, str, str, str | None, str, str | None, int | None]
"""(source nid, target, target_key, subpath, kind, resolved path, resolved nid)."""

LINK_GROUP = 500
"""Notes whose stored links are compared with their new ones in one query (replace_links)."""

BULK_RECOUNT = 2000
"""Above this many notes, edge counts are recomputed for the whole vault at once (one pass over
every link in Python) rather than by one SQL count per note."""


class LinkRow(NamedTuple):
    """A stored link: ``source`` path, ``target`` as written, ``kind``, ``resolved`` path/None."""

    lid: int
    source: str
    target: str
    subpath: str | None
    kind: str
    resolved: str | None


def _chunks(values: Sequence[T], size: int = 500) -> Iterable[Sequence[T]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


class LinkIndex:
    """Link queries of :class:`~vaultmem.store.index_db.IndexDB` (mixed in; uses ``conn``)."""

    conn: sqlite3.Connection

    def replace_links(self, nids: Sequence[int], rows: Iterable[LinkValues]) -> set[int]:
        """Make ``rows`` the links of ``nids``; returns nids whose edges changed.

        ``rows`` come grouped by source nid (one note's links together, in order). A note whose
        new rows equal its stored ones, in the same order, keeps them untouched: a lifecycle
        move changes a few fields and rarely a link, and then neither the note nor its
        neighbours count as changed. Processed :data:`LINK_GROUP` notes at a time.
        """
        touched: set[int] = set()
        done: set[int] = set()
        group: dict[int, list[LinkValues]] = {}
        for row in rows:
            nid = row[0]
            if nid in done:  # a note handed over twice: its further rows are added, as before
                self._insert_links([row])
                touched.update(n for n in (nid, row[6]) if n is not None)
                continue
            if nid not in group and len(group) >= LINK_GROUP:
                touched |= self._replace_changed(group)
                done.update(group)
                group = {}
            group.setdefault(nid, []).append(row)
        touched |= self._replace_changed(group)
        done.update(group)
        rest: list[int] = [n for n in dict.fromkeys(nids) if n not in done]  # no link rows
        for start in range(0, len(rest), LINK_GROUP):
            touched |= self._replace_changed({n: [] for n in rest[start : start + LINK_GROUP]})
        return touched

    def _replace_changed(self, group: dict[int, list[LinkValues]]) -> set[int]:
        """Replace the links of the notes of ``group`` whose stored rows differ; the nids whose
        edges may have changed (those notes, and the notes they stopped or started linking to)."""
        if not group:
            return set()
        stored: dict[int, list[LinkValues]] = {nid: [] for nid in group}
        marks = ", ".join("?" * len(group))
        for row in self.conn.execute(
            "SELECT nid, target, target_key, subpath, kind, resolved, resolved_nid FROM links "
            f"WHERE nid IN ({marks}) ORDER BY nid, lid",
            tuple(group),
        ):
            stored[row[0]].append(tuple(row))
        changed = [nid for nid, new in group.items() if stored[nid] != new]
        if not changed:
            return set()
        # a note's edge count is its number of distinct linked notes, either way: when its own
        # links change, only it and the notes it stopped or started linking to can count
        # differently (a note still linked, or linking to it, counts it as before)
        touched = set(changed)
        for nid in changed:
            before = {row[6] for row in stored[nid] if row[6] is not None}
            after = {row[6] for row in group[nid] if row[6] is not None}
            touched |= before ^ after
        marks = ", ".join("?" * len(changed))
        self.conn.execute(f"DELETE FROM links WHERE nid IN ({marks})", tuple(changed))
        self._insert_links([row for nid in changed for row in group[nid]])
        return touched

    def _insert_links(self, rows: Sequence[LinkValues]) -> None:
        self.conn.executemany(
            "INSERT INTO links (nid, target, target_key, subpath, kind, resolved, resolved_nid) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )

    def links_to_keys(self, keys: Iterable[str]) -> list[tuple[int, int, str, str, int | None]]:
        """(lid, source nid, source path, target, resolved nid) of links to file names ``keys``."""
        out: list[tuple[int, int, str, str, int | None]] = []
        for chunk in _chunks(sorted(set(keys))):
            out += self.conn.execute(
                "SELECT l.lid, n.nid, n.path, l.target, l.resolved_nid FROM links l "
                "JOIN notes n ON n.nid = l.nid "
                f"WHERE l.target_key IN ({', '.join('?' * len(chunk))})",
                tuple(chunk),
            ).fetchall()
        return out

    def set_resolved(self, updates: Sequence[tuple[str | None, int | None, int]]) -> None:
        """Apply (resolved path, resolved nid, lid) triples (``None`` = unresolved)."""
        self.conn.executemany(
            "UPDATE links SET resolved = ?, resolved_nid = ? WHERE lid = ?", updates
        )

    def links_from(self, path: str) -> list[LinkRow]:
        return self._link_rows("n.path = ?", (path,))

    def links_into(self, path: str) -> list[LinkRow]:
        """Links resolved to the note at ``path``, found by its nid (none for an attachment)."""
        return self._link_rows(
            "l.resolved_nid = (SELECT nid FROM notes WHERE path = ?)", (path,)
        )

    def all_links(self) -> list[LinkRow]:
        return self._link_rows("1", ())

    def _link_rows(self, where: str, params: tuple[object, ...]) -> list[LinkRow]:
        rows = self.conn.execute(
            "SELECT l.lid, n.path, l.target, l.subpath, l.kind, l.resolved FROM links l "
            f"JOIN notes n ON n.nid = l.nid WHERE {where} ORDER BY n.path, l.lid",
            params,
        )
        return [LinkRow(*row) for row in rows]

    def neighbours(self, nids: Iterable[int]) -> set[int]:
        """Nids linked to or from any of ``nids``."""
        found: set[int] = set()
        for chunk in _chunks(sorted(set(nids))):
            marks = ", ".join("?" * len(chunk))
            found.update(
                row[0]
                for row in self.conn.execute(
                    f"SELECT resolved_nid FROM links WHERE nid IN ({marks}) "
                    f"AND resolved_nid IS NOT NULL "
                    f"UNION SELECT nid FROM links WHERE resolved_nid IN ({marks})",
                    (*chunk, *chunk),
                )
            )
        return found

    def recount_edges(self, nids: Iterable[int] | None = None) -> None:
        """Recompute ``notes.edges`` for ``nids`` (``None``: every note).

        edges = distinct other notes linked to or from the note (Mnemon's EI, "Scores").
        """
        wanted = None if nids is None else sorted(set(nids))
        if wanted is not None and len(wanted) <= BULK_RECOUNT:
            for chunk in _chunks(wanted):
                self._recount(chunk)
            return
        pairs = self.conn.execute(
            "SELECT nid, resolved_nid FROM links "
            "WHERE resolved_nid IS NOT NULL AND resolved_nid != nid"
        ).fetchall()
        self.set_edges(pairs)

    def _recount(self, nids: Sequence[int]) -> None:
        """Recount ``notes.edges`` of ``nids`` (at most 500): their links either way, read in
        two queries and counted here, and only the counts that changed written (a correlated
        count per note, each with a UNION of its own, took three times as long: a pass's
        batch recounts hundreds of notes, most of which keep their count)."""
        marks = ", ".join("?" * len(nids))
        others: dict[int, set[int]] = {nid: set() for nid in nids}
        for nid, other in self.conn.execute(
            f"SELECT nid, resolved_nid FROM links WHERE nid IN ({marks}) "
            "AND resolved_nid IS NOT NULL AND resolved_nid != nid "
            f"UNION ALL SELECT resolved_nid, nid FROM links WHERE resolved_nid IN ({marks}) "
            "AND nid != resolved_nid",
            (*nids, *nids),
        ):
            others[nid].add(other)
        stored = self.conn.execute(
            f"SELECT nid, edges FROM notes WHERE nid IN ({marks})", tuple(nids)
        ).fetchall()
        self.conn.executemany(
            "UPDATE notes SET edges = ? WHERE nid = ?",
            [(len(others[nid]), nid) for nid, edges in stored if len(others[nid]) != edges],
        )

    def set_edges(self, pairs: Sequence[tuple[int, int]], *, fresh: bool = False) -> None:
        """Set every note's ``edges`` from all (source nid, resolved nid) pairs of the index
        whose ends differ; only notes whose count changes are written. ``fresh``: every
        note's count is still 0 (just loaded)."""
        # an edge is an unordered pair of notes, counted once however many links join them;
        # (low << 64 | high) ints hash faster than tuples (rowids are below 2**63), and
        # numpy's import (~70 ms) would cost a 10,000-note cold index more than it saves
        distinct = {a << 64 | b if a < b else b << 64 | a for a, b in pairs}
        counts = Counter(pair >> 64 for pair in distinct)
        counts.update(pair & _LOW_64 for pair in distinct)
        changed: dict[int, int] = dict(counts)
        if not fresh:  # most counts stand after a pass: compared here, not rewritten
            for nid, edges in self.conn.execute("SELECT nid, edges FROM notes"):
                if counts.get(nid, 0) == edges:
                    changed.pop(nid, None)
                else:
                    changed[nid] = counts.get(nid, 0)
        # in nid order: each page of the notes table is then visited once, not once per note
        self.conn.executemany(
            "UPDATE notes SET edges = ? WHERE nid = ?",
            ((count, nid) for nid, count in sorted(changed.items())),
        )
