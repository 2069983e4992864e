"""Embedding the vault's notes and searching their vectors (``vaultmem embed``, hybrid recall).

What is embedded: every indexed note (memories and a person's own notes alike, both are recall
candidates), as its title, a newline and its body text — the text the FTS index holds. The vector
key is :func:`~vaultmem.core.notes.content_hash.embedding_key` of that text and the provider's name,
so a note is embedded once per text: a ``touch``, a move or a lifecycle pass never re-embeds it.

Tiers (engram; :mod:`vaultmem.core.recall.quantisation`): with ``[embeddings] quantise`` (default
on) ``embed`` stores each memory's vector at the precision of its decay retention tier and moves
vectors of memories that faded to a coarser tier; archived memories are stored as int4. A person's
own notes have no decay and stay float32.

Without a configured provider every function here is inert (``semantic_query`` returns ``None``)
and recall works on keywords exactly as before. A configured provider that cannot run (the extra
missing, Ollama down) gives one warning in ``vault.warnings`` per vault object and keyword recall.
"""

from __future__ import annotations

import datetime as dt
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from vaultmem.core.notes.content_hash import embedding_key
from vaultmem.core.recall.quantisation import stored_bytes, tier_for
from vaultmem.core.recall.vector_fusion import screened_top_k, top_k
from vaultmem.services.memories.memory_view import memory_table
from vaultmem.services.semantic.embedding_providers import (
    EmbeddingProvider,
    EmbeddingUnavailableError,
    make_provider,
    no_provider_reason,
)
from vaultmem.store.vectors import Assignment, VectorMatrix, VectorStore

if TYPE_CHECKING:
    from vaultmem.services.vault_context import VaultContext

RETRY_SECONDS = 60.0
"""A provider found unavailable is not asked again for this long (each ask may cost the probe)."""


@dataclass(slots=True)
class _State:
    provider: EmbeddingProvider | None
    store: VectorStore | None = None
    failed_at: float | None = None
    warned: bool = False


_STATES: weakref.WeakKeyDictionary[VaultContext, _State] = weakref.WeakKeyDictionary()


def _state(vault: VaultContext) -> _State:
    state = _STATES.get(vault)
    if state is None:
        state = _State(make_provider(vault.settings.embeddings))
        _STATES[vault] = state
    return state


def vector_store(vault: VaultContext) -> VectorStore:
    """The vault's ``.vaultmem/vectors.db``, opened on first use."""
    state = _state(vault)
    if state.store is None:
        state.store = VectorStore.open(vault.sidecar)
    return state.store


def close_vectors(vault: VaultContext) -> None:
    """Close the vault's vector store if it was opened (``Vault.close`` calls this)."""
    state = _STATES.get(vault)
    if state is not None and state.store is not None:
        state.store.close()
        state.store = None


def provider(vault: VaultContext) -> EmbeddingProvider | None:
    """The configured provider, ready, or ``None`` (none configured, or unavailable: then one
    warning is added to ``vault.warnings`` and it is asked again after :data:`RETRY_SECONDS`)."""
    state = _state(vault)
    if state.provider is None:
        return None
    if state.failed_at is not None and time.monotonic() - state.failed_at < RETRY_SECONDS:
        return None
    try:
        state.provider.check()
    except EmbeddingUnavailableError as err:
        state.failed_at = time.monotonic()
        if not state.warned:
            state.warned = True
            vault.warnings.append(f"embeddings unavailable, recall uses keywords only: {err}")
        return None
    state.failed_at = None
    return state.provider


def required_provider(vault: VaultContext) -> EmbeddingProvider:
    """The configured provider, ready; raises :class:`EmbeddingUnavailableError` saying how to
    enable one."""
    state = _state(vault)
    if state.provider is None:
        raise EmbeddingUnavailableError(no_provider_reason(vault.settings.embeddings))
    state.provider.check()
    return state.provider


# ---------------------------------------------------------------------------- what to embed
@dataclass(frozen=True, slots=True)
class NoteText:
    """One indexed note as it is embedded."""

    path: str
    note_hash: str
    text: str


def note_texts(vault: VaultContext, paths: Iterable[str] | None = None) -> list[NoteText]:
    """Title + body of the indexed notes (all, or those at ``paths``), by path."""
    conn = vault.index.conn
    sql = "SELECT n.path, n.hash, f.title, f.body FROM notes n JOIN notes_fts f ON f.rowid = n.nid"
    if paths is None:
        rows = conn.execute(sql + " ORDER BY n.path").fetchall()
    else:
        wanted = list(dict.fromkeys(paths))
        rows = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            rows += conn.execute(sql + f" WHERE n.path IN ({marks})", chunk).fetchall()
        rows.sort(key=lambda r: str(r[0]))
    return [NoteText(str(p), str(h), text_of(t or "", b or "")) for p, h, t, b in rows]


def text_of(title: str, body: str) -> str:
    """The text embedded for a note titled ``title`` with body ``body``.

    Title and body, except that a title the body already begins with (a memory's title is made
    from its first words) is not repeated: a sentence said twice embeds farther from a short
    query than the sentence alone (all-MiniLM-L6-v2: "dietary restrictions" against "Allergic to
    peanuts" 0.261, against it twice 0.185).
    """
    title, body = title.strip(), body.strip()
    if title and body.startswith(title):
        return body
    return f"{title}\n{body}".strip()


def _tiers(vault: VaultContext, now: dt.datetime) -> dict[str, str]:
    """Storage tier per memory path (engram); paths not listed are ``active``."""
    if not vault.settings.embeddings.quantise:
        return {}
    table = memory_table(vault.index, vault.settings, now, where="n.type = 'memory'")
    out: dict[str, str] = {}
    cols, retention = table.columns, table.scores.retention
    for i in range(len(cols.path)):
        out[str(cols.path[i])] = tier_for(
            float(retention[i]), archived=str(cols.status[i]) == "archived"
        )
    return out


@dataclass(slots=True)
class EmbedReport:
    """What ``embed`` did: notes embedded now, reused vectors, unchanged notes, requantised."""

    provider: str
    embedded: int = 0
    reused: int = 0
    unchanged: int = 0
    retiered: int = 0
    forgotten: int = 0
    seconds: float = 0.0
    paths: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "embedded": self.embedded,
            "reused": self.reused,
            "unchanged": self.unchanged,
            "retiered": self.retiered,
            "forgotten": self.forgotten,
            "seconds": round(self.seconds, 3),
            "paths": self.paths,
        }


Progress = Callable[[int], None]


def embed_notes(
    vault: VaultContext,
    paths: Sequence[str] | None = None,
    *,
    now: dt.datetime,
    progress: Progress | None = None,
    sync: bool = True,
) -> EmbedReport:
    """Embed the notes at ``paths`` (default: every note) that have no current vector.

    ``progress(n)`` is called with the number of notes handled so far. Raises
    :class:`EmbeddingUnavailableError` when no provider can run.
    """
    chosen = required_provider(vault)
    started = time.perf_counter()
    if sync:
        vault.sync()
    store = vector_store(vault)
    report = EmbedReport(chosen.name)
    texts = note_texts(vault, paths)
    assigned = store.assignments(chosen.name)
    if paths is None:
        present = {t.path for t in texts}
        report.forgotten = store.forget_paths(p for p in assigned if p not in present)
    tiers = _tiers(vault, now) if paths is None else {}  # new and edited notes start active
    stale = [t for t in texts if (a := assigned.get(t.path)) is None or a.note_hash != t.note_hash]
    report.unchanged = len(texts) - len(stale)
    done = report.unchanged
    if progress is not None:
        progress(done)
    keys = {t.path: embedding_key(chosen.name, t.text) for t in stale}
    known = store.known_keys(keys.values())
    batch = max(1, vault.settings.embeddings.batch_size)
    # similar lengths share a batch: padding to the longest text costs the model the most
    todo = sorted((t for t in stale if keys[t.path] not in known), key=lambda t: len(t.text))
    reuse = [t for t in stale if keys[t.path] in known]
    if reuse:
        store.assign([Assignment(t.path, t.note_hash, keys[t.path], chosen.name) for t in reuse])
        report.reused = len(reuse)
        done += len(reuse)
        if progress is not None:
            progress(done)
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        vectors = chosen.embed([t.text for t in chunk])
        by_tier: dict[str, list[tuple[str, npt.ArrayLike]]] = {}
        for note, vector in zip(chunk, vectors, strict=True):
            by_tier.setdefault(tiers.get(note.path, "active"), []).append((keys[note.path], vector))
        for tier, items in by_tier.items():
            store.put(chosen.name, items, tier=tier)
        store.assign([Assignment(t.path, t.note_hash, keys[t.path], chosen.name) for t in chunk])
        report.embedded += len(chunk)
        report.paths += [t.path for t in chunk]
        done += len(chunk)
        if progress is not None:
            progress(done)
    if tiers:
        current = store.assignments(chosen.name)
        report.retiered = store.retier(
            chosen.name, {current[p].key: tier for p, tier in tiers.items() if p in current}
        )
    report.seconds = time.perf_counter() - started
    return report


@dataclass(slots=True)
class EmbedStatus:
    """Coverage of the vault by vectors of the configured provider, and storage per tier."""

    provider: str | None
    available: bool
    problem: str | None
    notes: int
    embedded: int
    stale: int
    missing: int
    tiers: dict[str, tuple[int, int]]
    dim: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "available": self.available,
            "problem": self.problem,
            "notes": self.notes,
            "embedded": self.embedded,
            "stale": self.stale,
            "missing": self.missing,
            "dim": self.dim,
            "tiers": {t: {"vectors": n, "bytes": b} for t, (n, b) in self.tiers.items()},
        }


def embed_status(vault: VaultContext) -> EmbedStatus:
    """How many notes have a current vector, a stale one (text changed) or none."""
    vault.sync()
    state = _state(vault)
    if state.provider is None:
        return EmbedStatus(
            None,
            False,
            no_provider_reason(vault.settings.embeddings),
            vault.index.note_count(),
            0,
            0,
            0,
            {},
            None,
        )
    problem = None
    try:
        state.provider.check()
    except EmbeddingUnavailableError as err:
        problem = str(err)
    store = vector_store(vault)
    name = state.provider.name
    assigned = store.assignments(name)
    hashes = dict(vault.index.conn.execute("SELECT path, hash FROM notes").fetchall())
    embedded = sum(1 for p, a in assigned.items() if hashes.get(p) == a.note_hash)
    stale = sum(1 for p, a in assigned.items() if p in hashes and hashes[p] != a.note_hash)
    matrix = store.matrix(name)
    dim = int(matrix.vectors.shape[1]) if len(matrix) else None
    return EmbedStatus(
        name,
        problem is None,
        problem,
        len(hashes),
        embedded,
        stale,
        len(hashes) - embedded - stale,
        store.tier_counts(name),
        dim,
    )


def bytes_per_vector(dim: int) -> dict[str, int]:
    """Blob bytes of one ``dim``-vector per tier (for the status and the benchmark)."""
    return {tier: stored_bytes(dim, tier) for tier in ("active", "warm", "cold", "archive")}


def embed_new(vault: VaultContext, path: str, now: dt.datetime) -> None:
    """Embed a note vaultmem just wrote, when a provider is ready (best effort: a provider
    failing now leaves the note for the next ``embed --all`` or the watcher)."""
    if provider(vault) is None:
        return
    try:
        embed_notes(vault, [path], now=now, sync=False)
    except EmbeddingUnavailableError as err:
        vault.warnings.append(f"{path} not embedded: {err}")


def embed_imported(vault: VaultContext, paths: Sequence[str], now: dt.datetime) -> None:
    """Embed the memories ``import`` just wrote, in batches, when a provider is ready (a
    provider failing adds one warning and leaves them to ``embed --all`` or the watcher)."""
    if provider(vault) is None:
        return
    try:
        embed_notes(vault, paths, now=now, sync=False)
    except EmbeddingUnavailableError as err:
        vault.warnings.append(f"{len(paths)} imported memories not embedded: {err}")


# ---------------------------------------------------------------------------- searching
SCREEN_POOL = 400
"""Rows screened by the projection (large vaults) whose exact cosines are computed."""


@dataclass(slots=True)
class SemanticQuery:
    """One query's vector against the vault's vectors: cosines and the nearest notes.

    Small vaults compare the query with every vector at once; above
    :data:`~vaultmem.store.vectors.SCREEN_FROM` vectors the nearest notes come from the
    projection's best :data:`SCREEN_POOL` rows, and a candidate's cosine is computed for it.
    """

    provider: str
    matrix: VectorMatrix
    query: npt.NDArray[np.float32]
    cosines: npt.NDArray[np.float32] | None = None
    _near: dict[int, list[tuple[str, float]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.matrix.reduced is None:
            self.cosines = self.matrix.vectors @ self.query

    def cosine_of(self, paths: Sequence[str]) -> npt.NDArray[np.float64]:
        """Cosine of each path's note with the query; NaN for notes without a vector."""
        out = np.full(len(paths), np.nan, dtype=np.float64)
        found = [(i, r) for i, p in enumerate(paths) if (r := self.matrix.row.get(p)) is not None]
        if not found:
            return out
        where, rows = (np.array(x, dtype=np.intp) for x in zip(*found, strict=True))
        if self.cosines is not None:
            out[where] = self.cosines[rows]
        else:
            out[where] = self.matrix.vectors[rows] @ self.query
        return out

    def nearest(self, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest notes (path, cosine), nearest first."""
        if k not in self._near:
            m = self.matrix
            if self.cosines is not None:
                rows = top_k(self.cosines, k)
                sims = self.cosines[rows]
            else:
                assert m.reduced is not None and m.basis is not None
                rows, sims = screened_top_k(
                    m.vectors, m.reduced, m.basis, self.query, k, SCREEN_POOL
                )
            self._near[k] = [(m.paths[int(i)], float(c)) for i, c in zip(rows, sims, strict=True)]
        return self._near[k]

    def cosine_between(self, a: str, b: str) -> float | None:
        """Cosine of the stored vectors of the notes at ``a`` and ``b``; ``None`` when either has
        no vector."""
        m = self.matrix
        ra, rb = m.row.get(a), m.row.get(b)
        if ra is None or rb is None:
            return None
        return float(m.vectors[ra] @ m.vectors[rb])

    @property
    def top(self) -> float:
        """The best cosine in the vault (from any nearest list already computed)."""
        near = next(iter(self._near.values()), None) or self.nearest(1)
        return near[0][1] if near else 0.0


def semantic_query(vault: VaultContext, query: str) -> SemanticQuery | None:
    """The query embedded and compared with every stored vector, or ``None`` when there is no
    provider, it is unavailable (one warning), or no note has a vector yet."""
    chosen = provider(vault)
    if chosen is None:
        return None
    matrix = vector_store(vault).matrix(chosen.name)
    if not len(matrix):
        return None
    try:
        vector = chosen.embed([query])[0]
    except EmbeddingUnavailableError as err:
        state = _state(vault)
        state.failed_at = time.monotonic()
        if not state.warned:
            state.warned = True
            vault.warnings.append(f"embeddings unavailable, recall uses keywords only: {err}")
        return None
    if vector.shape[0] != matrix.vectors.shape[1]:
        return None  # vectors of another dimension: `embed --all` has not run for this model
    return SemanticQuery(chosen.name, matrix, vector.astype(np.float32))


def similar_to_text(vault: VaultContext, text: str, k: int) -> list[tuple[str, float]]:
    """The ``k`` notes nearest ``text`` (path, cosine), nearest first; ``[]`` without vectors."""
    found = semantic_query(vault, text)
    return found.nearest(k) if found is not None else []
