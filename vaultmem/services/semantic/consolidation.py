"""``vaultmem consolidate``: merge near-duplicate memories, never destructively.

After Mnemex, Engram and engram; ``docs/user-guide.md``, "Consolidation".

1. **Clusters.** The vectors of the active and promoted memories (``embed`` must have run) are
   grouped by single linkage at ``[embeddings] cluster_cosine`` (0.83) — never linking two
   memories whose texts name different numbers or dates (distinct events) — and each cluster's
   cohesion (mean pairwise cosine) is put in a band (:mod:`vaultmem.core.lifecycle.clusters`):
   ``merge`` (≥ 0.9), ``review`` (0.75–0.9, listed for a person), ``keep`` (below).
2. **Plan** (``--dry-run`` stops here and changes no byte): for each ``merge`` cluster, the
   merged note's title, folder, fields and body.
3. **Apply** through the pass journal (so ``vaultmem undo`` restores every byte): the merged note
   is created — ``source: consolidation``, ``consolidated_from:`` links to every member, the
   members' bodies (normalised duplicates once), the union of their tags, the sum of their uses,
   the latest ``last_used``, the highest strength and importance — and each member is edited to
   ``status: superseded`` with ``superseded_by:`` the merged note. Nothing is deleted or moved.

The merged note goes to ``LTM/`` (``status: promoted``) when a member was promoted, else to
``STM/``. A member that changed since it was indexed, or whose YAML does not parse, makes its
cluster be skipped and reported, never half-merged.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from vaultmem.core.lifecycle.clusters import Band, cohesion, fact_tokens, same_facts, single_linkage
from vaultmem.core.links.link_resolution import note_key
from vaultmem.core.notes.content_hash import normalised_content_hash
from vaultmem.core.notes.fields import MemoryFields
from vaultmem.core.notes.naming import new_id, numbered, safe_title
from vaultmem.core.notes.note_parse import parse_note, title_of
from vaultmem.core.notes.note_text import render_note
from vaultmem.errors import InputError, NoteError, VaultmemError
from vaultmem.services.lifecycle.pass_session import PassSession
from vaultmem.services.lifecycle.progress import report_progress
from vaultmem.services.semantic.embeddings import required_provider, vector_store
from vaultmem.store.note_files import read_note

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext


@dataclass(frozen=True, slots=True)
class Member:
    """One memory of a cluster, as the index knows it."""

    path: str
    id: str | None
    hash: str
    use_count: int
    last_used: float | None
    strength: float
    importance: float
    category: str
    layer: str
    status: str
    tags: tuple[str, ...]
    body: str
    created: float | None = None


@dataclass(slots=True)
class Cluster:
    """A group of near-duplicate memories, its cohesion, band and (for ``merge``) the plan."""

    members: list[Member]
    cohesion: float
    action: str
    title: str | None = None
    path: str | None = None
    text: str | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "cohesion": round(self.cohesion, 4),
            "members": [m.path for m in self.members],
            "merged_into": self.path,
            "error": self.error,
        }


@dataclass(slots=True)
class ConsolidationReport:
    """Every cluster found, what was merged, and the journal of the applied run."""

    dry_run: bool
    memories: int
    clusters: list[Cluster] = field(default_factory=list)
    merged: list[Cluster] = field(default_factory=list)
    journal: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "dry_run": self.dry_run,
            "memories": self.memories,
            "clusters": [c.as_dict() for c in self.clusters],
            "merged": [c.path for c in self.merged],
            "journal": self.journal,
        }


_MEMBER_SQL = """
    SELECT n.path, n.id, n.hash, n.use_count, n.last_used, n.strength, n.importance,
           n.category, n.layer, n.status, n.tags, f.body, n.created
    FROM notes n JOIN notes_fts f ON f.rowid = n.nid
    WHERE n.type = 'memory' AND n.status IN ('active', 'promoted')
    ORDER BY n.path
"""


def _members(vault: VaultContext) -> dict[str, Member]:
    out: dict[str, Member] = {}
    for row in vault.index.conn.execute(_MEMBER_SQL):
        tags = tuple(json.loads(row[10] or "[]"))
        out[str(row[0])] = Member(
            str(row[0]),
            row[1],
            str(row[2]),
            int(row[3]),
            row[4],
            float(row[5]),
            float(row[6]),
            str(row[7]),
            str(row[8]),
            str(row[9]),
            tags,
            str(row[11] or ""),
            row[12],
        )
    return out


def find_clusters(vault: VaultContext) -> tuple[int, list[Cluster]]:
    """(memories with a vector, clusters best cohesion first). Needs a ready provider."""
    provider = required_provider(vault)
    vault.sync()
    members = _members(vault)
    matrix = vector_store(vault).matrix(provider.name)
    paths = [p for p in matrix.paths if p in members]
    if not paths:
        return 0, []
    rows = np.array([matrix.row[p] for p in paths], dtype=np.intp)
    vectors = matrix.vectors[rows]
    settings = vault.settings.embeddings
    band = Band(settings.cohesion_merge, settings.cohesion_review)
    clusters = []
    facts = [fact_tokens(members[p].body) for p in paths]
    for group in single_linkage(vectors, settings.cluster_cosine, same_facts(facts)):
        value = cohesion(vectors[group])
        clusters.append(Cluster([members[paths[i]] for i in group], value, band.action(value)))
    clusters.sort(key=lambda c: (-c.cohesion, c.members[0].path))
    return len(paths), clusters


def _merged_body(members: list[Member]) -> str:
    seen: set[str] = set()
    parts: list[str] = []
    # chronological: the first told first (notes without `created` last, by path)
    for member in sorted(members, key=lambda m: (m.created is None, m.created or 0.0, m.path)):
        body = member.body.strip()
        key = normalised_content_hash(body)
        if body and key not in seen:
            seen.add(key)
            parts.append(body)
    return "\n\n".join(parts) + "\n"


def _plan(vault: VaultContext, cluster: Cluster, now: dt.datetime, taken: set[str]) -> None:
    members = cluster.members
    lead = max(members, key=lambda m: (m.use_count, m.importance, -len(m.path), m.path))
    base = safe_title(f"{title_of(lead.path)} (consolidated)") or f"Memory {new_id()}"
    n = 1
    while True:
        title = numbered(base, n)
        key = note_key(title + ".md")
        if key not in taken and not vault.index.paths_with_name(key):
            break
        n += 1
    taken.add(note_key(title + ".md"))
    promoted = any(m.status == "promoted" for m in members)
    folders = vault.settings.folders
    last_used = max((m.last_used for m in members if m.last_used is not None), default=None)
    fields: dict[str, object] = {
        "id": new_id(),
        "type": "memory",
        "status": "promoted" if promoted else "active",
        "layer": Counter(m.layer for m in members).most_common(1)[0][0],
        "category": Counter(m.category for m in members).most_common(1)[0][0],
        "created": now,
        "last_used": dt.datetime.fromtimestamp(last_used, tz=dt.UTC) if last_used else now,
        "use_count": sum(max(1, m.use_count) for m in members),
        "strength": max(m.strength for m in members),
        "importance": max(m.importance for m in members),
        "confidence": 1.0,
        "source": "consolidation",
        "pinned": False,
        "tags": sorted({t for m in members for t in m.tags}),
        "consolidated_from": [f"[[{title_of(m.path)}]]" for m in members],
    }
    if promoted:
        fields["promoted_at"] = now
    cluster.title = title
    cluster.path = f"{folders.ltm if promoted else folders.stm}/{title}.md"
    cluster.text = render_note(fields, _merged_body(members))


def consolidate(vault: VaultContext, *, now: dt.datetime, dry_run: bool) -> ConsolidationReport:
    """Find clusters, plan the merges, and (unless ``dry_run``) apply them, journaled.

    Raises :class:`~vaultmem.services.semantic.embedding_providers.EmbeddingUnavailableError`
    without a provider, :class:`InputError` when no memory has a vector yet.
    """
    count, clusters = find_clusters(vault)
    if not count:
        raise InputError("no memory has a vector yet: run `vaultmem embed --all` first")
    report = ConsolidationReport(dry_run, count, clusters)
    taken: set[str] = set()
    for cluster in clusters:
        if cluster.action == "merge":
            _plan(vault, cluster, now, taken)
    if dry_run:
        return report
    with PassSession(vault, "consolidate", now, dry_run=False) as session:
        merging = [c for c in clusters if c.action == "merge"]
        for done, cluster in enumerate(merging):
            report_progress("consolidate", done, len(merging))
            if cluster.path is None or cluster.text is None:
                continue
            try:
                _check_unchanged(vault, cluster)
                session.create(cluster.path, cluster.text)
                for member in cluster.members:
                    session.edit_fields(member.path, _superseded_by(str(cluster.title), now))
            except (VaultmemError, OSError) as err:
                cluster.error = str(err)
                continue
            report.merged.append(cluster)
        report_progress("consolidate", len(merging), len(merging))
        report.journal = session.journal_path.name if session.journal_path else None
    return report


def _superseded_by(
    title: str, now: dt.datetime
) -> Callable[[MemoryFields], dict[str, object]]:
    """The field changes that mark a member superseded by the merged note ``title`` at ``now``
    (archived ``superseded_grace_days`` later, like a correction)."""

    def changes(_fields: MemoryFields) -> dict[str, object]:
        return {"status": "superseded", "superseded_by": f"[[{title}]]", "superseded_at": now}

    return changes


def _check_unchanged(vault: VaultContext, cluster: Cluster) -> None:
    """Refuse (``NoteError``) a cluster whose member notes changed or cannot be written."""
    for member in cluster.members:
        snapshot = read_note(vault.root / member.path)
        if snapshot.fingerprint.sha256 != member.hash:
            raise NoteError(member.path, "changed since it was indexed; cluster not merged")
        note = parse_note(member.path, snapshot.text)
        if note.problems:
            raise NoteError(member.path, f"{note.problems[0]}; cluster not merged")
