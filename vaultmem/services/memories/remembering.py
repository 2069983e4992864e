"""Making memories: ``remember`` (one) and ``import`` (JSONL, one per line).

A new memory's frontmatter follows the example in docs/user-guide.md, "The memory note"; only keys
that carry information are written (``box``/``related`` when set), datetimes as UTC ISO seconds.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vaultmem.core.collector import collector_paused
from vaultmem.core.notes.content_hash import content_key
from vaultmem.core.notes.fields import (
    DATETIME_KEYS,
    LAYERS,
    MAX_COUNT,
    SOURCES,
    MemoryFields,
    normalise_tags,
    read_fields,
)
from vaultmem.core.notes.naming import new_id, safe_title
from vaultmem.core.notes.note_parse import title_of
from vaultmem.core.notes.timestamps import parse_datetime
from vaultmem.errors import InputError, VaultmemError
from vaultmem.services.index.index_reads import WrittenNote
from vaultmem.services.index.pass_indexer import PassIndexer
from vaultmem.services.memories.memory_creation import BatchNames, NoteCreator, create_memory
from vaultmem.services.vault_context import VaultContext
from vaultmem.store.note_batch import NewNotes
from vaultmem.store.vault_lock import vault_lock

FIELD_ORDER: tuple[str, ...] = MemoryFields._fields
"""The order of a new note's properties: the note model's (each key has its row in
:data:`~vaultmem.core.notes.properties.PROPERTIES`; ``tests/test_properties.py`` checks it)."""


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """What ``remember`` was asked to write, validated. ``extra`` = other properties as given."""

    content: str
    title: str | None = None
    tags: tuple[str, ...] = ()
    category: str = "fact"
    importance: float = 0.5
    confidence: float = 1.0
    source: str = "human"
    layer: str = "working"
    pinned: bool = False
    strength: float = 1.0
    use_count: int = 1
    created: dt.datetime | None = None
    last_used: dt.datetime | None = None
    id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def frontmatter(self, now: dt.datetime) -> dict[str, object]:
        """The new note's frontmatter, in :data:`FIELD_ORDER` then ``extra`` keys."""
        created = self.created or now
        values: dict[str, object] = {
            "id": self.id or new_id(),
            "type": "memory",
            "status": "active",
            "layer": self.layer,
            "category": self.category,
            "created": created,
            "last_used": self.last_used or created,
            "use_count": self.use_count,
            "strength": self.strength,
            "importance": self.importance,
            "confidence": self.confidence,
            "source": self.source,
            "pinned": self.pinned,
            "tags": list(self.tags),
        }
        if not self.extra:  # already in FIELD_ORDER
            return values
        for key, value in self.extra.items():
            values[key] = value
        ordered = {k: values[k] for k in FIELD_ORDER if k in values}
        ordered.update((k, v) for k, v in values.items() if k not in ordered)
        return ordered


def _number(name: str, value: object, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{name} must be a number in {low:g}..{high:g}, not {value!r}")
    if not low <= value <= high:
        raise InputError(f"{name} must be in {low:g}..{high:g}, not {value!r}")
    return float(value)


def make_draft(content: str, **options: Any) -> MemoryDraft:
    """Validate ``remember``'s options into a :class:`MemoryDraft`; raises :class:`InputError`.

    ``options``: :data:`DRAFT_KEYS`, ``imp`` and ``extra`` (other properties); another name is
    refused, naming it. ``imp`` (Mnemon's 1..5) sets ``importance`` = (imp − 1) / 4; it
    conflicts with ``importance``. Unknown ``layer``/``source`` values are refused with the
    allowed list; so are a ``title`` given but empty once cleaned into a file name (``"???"``)
    and an empty ``category`` (``None`` = not given: the first words, ``fact``).
    """
    unknown = sorted(set(options) - {*DRAFT_KEYS, "imp", "extra"})
    if unknown:
        raise InputError(
            f"unknown remember option {unknown[0]!r}; known: "
            + ", ".join((*DRAFT_KEYS, "imp", "extra"))
        )
    if not content or not content.strip():
        raise InputError("nothing to remember: the content is empty")
    if "\0" in content:  # (a title loses its control characters: safe_title)
        raise InputError("content holds a NUL byte (git would take the note for binary)")
    for name, text in (("content", content), ("title", options.get("title"))):
        if isinstance(text, str) and not text.isascii() and _SURROGATE.search(text):
            raise InputError(f"{name} holds a lone surrogate (bytes that are not UTF-8)")
    title = options.get("title")
    if title is not None:
        if not isinstance(title, str):
            raise InputError(f"title must be a string, not {title!r}")
        if not safe_title(title):
            raise InputError(
                f"the title {title!r} is empty once cleaned into a file name; give one with "
                "letters or digits, or none for the first words of the text"
            )
    if options.get("pinned") is not None and not isinstance(options["pinned"], bool):
        raise InputError(f"pinned must be true or false, not {options['pinned']!r}")
    imp = options.pop("imp", None)
    if imp is not None:
        if options.get("importance") is not None:
            raise InputError("give --importance or --imp, not both")
        if isinstance(imp, bool) or not isinstance(imp, int) or not 1 <= imp <= 5:
            raise InputError(f"--imp must be a whole number 1..5, not {imp!r}")
        from vaultmem.core.scoring.importance import importance_from_level  # numpy: only for --imp

        options["importance"] = importance_from_level(imp)
    values = {k: v for k, v in options.items() if v is not None}
    for name in ("importance", "confidence"):
        if name in values:
            values[name] = _number(name, values[name], 0.0, 1.0)
    if "strength" in values:
        values["strength"] = _number("strength", values["strength"], 0.0, 2.0)
    if "use_count" in values:
        count = values["use_count"]
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_COUNT:
            raise InputError(f"use_count must be a whole number in 1..2^53, not {count!r}")
    if values.get("layer", "working") not in LAYERS:
        raise InputError(f"layer must be one of {', '.join(LAYERS)}, not {values['layer']!r}")
    if values.get("source", "human") not in SOURCES:
        raise InputError(f"source must be one of {', '.join(SOURCES)}, not {values['source']!r}")
    if "tags" in values:
        try:
            values["tags"] = normalise_tags(values["tags"])
        except ValueError:
            raise InputError(f"tags must be a list of words, not {values['tags']!r}") from None
    for key in ("created", "last_used"):
        if key in values:
            try:
                values[key] = parse_datetime(values[key])
            except (ValueError, OverflowError, OSError):
                raise InputError(f"{key} is not a datetime: {values[key]!r}") from None
    if "category" in values:
        values["category"] = str(values["category"]).strip()
        if not values["category"]:
            raise InputError("the category is empty; give one (fact, preference, …) or none")
    return MemoryDraft(content=content, **values)


DRAFT_KEYS = (
    "title",
    "tags",
    "category",
    "importance",
    "confidence",
    "source",
    "layer",
    "pinned",
    "strength",
    "use_count",
    "created",
    "last_used",
    "id",
)


def draft_from_json(record: object) -> MemoryDraft:
    """A JSONL import record → :class:`MemoryDraft`.

    ``content`` is required; the keys of docs/user-guide.md, "The memory note", map to fields (so
    decay histories migrate); other datetime keys are parsed; every other key becomes a property as
    it is. Raises :class:`InputError` describing the problem.
    """
    if not isinstance(record, dict):
        raise InputError("a line must be a JSON object")
    content = record.get("content")
    if not isinstance(content, str):
        raise InputError('missing "content" (a string)')
    options: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    record = conversation_fields(record)
    for key, value in record.items():
        if key == "content":
            continue
        if key in DRAFT_KEYS:
            options[key] = value
        elif key in ("type", "status"):
            continue  # an import always makes an active memory
        elif key in DATETIME_KEYS:
            try:
                extra[key] = parse_datetime(value)
            except (ValueError, OverflowError, OSError):
                raise InputError(f"{key} is not a datetime: {value!r}") from None
        else:
            extra[key] = _property_value(key, value)
    options.setdefault("source", "import")
    return make_draft(content, extra=extra, **options)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _scalar(value: object) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)


def _property_value(key: str, value: object) -> object:
    """``value`` if a note property can hold it (a scalar or a list of scalars), else
    :class:`InputError` naming ``key``."""
    if not isinstance(key, str) or not key.strip() or _SURROGATE.search(key):
        raise InputError(f"{key!r} is not a property name")
    if isinstance(value, list) and all(_scalar(v) for v in value):
        items = value
    elif _scalar(value):
        items = [value]
    elif isinstance(value, dict):
        raise InputError(f"property {key!r}: a nested object is not a note property")
    else:
        raise InputError(f"property {key!r}: {value!r} is not a text, number or list of them")
    if any(isinstance(v, str) and _SURROGATE.search(v) for v in items):
        raise InputError(f"property {key!r} holds a lone surrogate (bytes that are not UTF-8)")
    if "\0" in key or any(isinstance(v, str) and "\0" in v for v in items):
        raise InputError(f"property {key!r} holds a NUL byte (git would take the note for binary)")
    _, wrong = read_fields({key: value})
    if wrong:  # a memory key of the wrong type (review_count: 1e20): refused, not written
        raise InputError(f"property {wrong[0].key}: {wrong[0].value!r} {wrong[0].problem}")
    return value


@dataclass(slots=True)
class ImportReport:
    """``import`` outcome: paths written, lines already there, and bad lines (number, problem)."""

    imported: list[str] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)
    duplicates: list[tuple[int, str]] = field(default_factory=list)
    """(line number, path of the memory it repeats) of lines already in the vault or file."""
    over_cap: str | None = None
    """Set when the import left more active memories than ``max_active``: what the next prune
    will do (a warning line)."""

    def as_dict(self) -> dict[str, object]:
        return {
            "imported": len(self.imported),
            "paths": self.imported,
            "already_there": [{"line": n, "path": p} for n, p in self.duplicates],
            "errors": [{"line": n, "error": e} for n, e in self.errors],
            "over_max_active": self.over_cap,
        }


IMPORT_BATCH = 500
"""Notes written between two index updates (one SQLite transaction each) during ``import``."""
TAIL_BATCH = 64
"""With a helper, the last :data:`IMPORT_BATCH` lines are committed in batches that halve (250,
125…) while at least this many lines are left after them, so the import waits at its end for
the helper to index its last 64-128 notes, not 500 (5,000 lines: 0.14 s → 0.06 s, means of 6
runs alternated; three more flushes to disk)."""
HANDED_CHARS_MAX = 65_536
"""A note written by a big import is handed to the indexing helper with its text when the text
is at most this long (the helper reads a longer one back): a batch's line in the pipe stays
within ~32 M characters, whatever the lines imported."""
INDEX_AHEAD_FROM = 2 * IMPORT_BATCH
"""Lines from which ``import`` has a helper process index each batch written while it writes the
next (:mod:`~vaultmem.services.index.pass_indexer`); below, it indexes each batch itself."""


def _decode(number: int, raw: str | bytes) -> str:
    if isinstance(raw, str):
        return raw.lstrip("\ufeff") if number == 1 else raw
    try:
        return raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as err:
        raise InputError(
            f"not UTF-8 (byte {err.start + 1}: {raw[err.start : err.start + 1]!r}); "
            "save the file as UTF-8"
        ) from None


def _parse_line(number: int, raw: str | bytes) -> MemoryDraft | None:
    """The draft of one JSONL line, ``None`` for a blank line; :class:`InputError` says why not."""
    line = _decode(number, raw)
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise InputError(f"not JSON: {err.msg} at column {err.colno}") from None
    except RecursionError:
        raise InputError("not JSON this program reads: nested too deeply") from None
    return draft_from_json(record)


KEYS_TABLE = "import_content_keys_1"
"""Content keys of memories already seen, by the hash of the note's bytes (kept in the index)."""


class _Known:
    """Ids and content keys already in the vault (read from the index once) or in the file.

    The content key of each memory is kept in the index beside its file hash
    (:data:`KEYS_TABLE`), so only memories new or changed since the last import have their body
    read and hashed; the others cost one row each.
    """

    def __init__(self, vault: VaultContext) -> None:
        conn = vault.index.conn
        self._last: tuple[MemoryDraft, str] | None = None
        self.ids: dict[str, str] = dict(
            conn.execute("SELECT id, path FROM notes WHERE id IS NOT NULL").fetchall()
        )
        self.keys: dict[str, str] = {}
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {KEYS_TABLE} "
            "(hash TEXT PRIMARY KEY, key TEXT NOT NULL) WITHOUT ROWID"
        )
        rows = conn.execute(
            f"SELECT n.path, n.hash, k.key, n.nid FROM notes n LEFT JOIN {KEYS_TABLE} k "
            "ON k.hash = n.hash WHERE n.type = 'memory'"
        ).fetchall()
        missing = [nid for _, _, key, nid in rows if key is None]
        found: dict[str, str] = {}
        for start in range(0, len(missing), 500):
            chunk = missing[start : start + 500]
            for file_hash, body in conn.execute(
                "SELECT n.hash, f.body FROM notes n JOIN notes_fts f ON f.rowid = n.nid "
                f"WHERE n.nid IN ({', '.join('?' * len(chunk))})",
                chunk,
            ):
                found[file_hash] = content_key(body or "")
        if found:
            with vault.index.transaction():
                conn.execute(f"DELETE FROM {KEYS_TABLE} WHERE hash NOT IN (SELECT hash FROM notes)")
                conn.executemany(
                    f"INSERT OR REPLACE INTO {KEYS_TABLE} (hash, key) VALUES (?, ?)",
                    found.items(),
                )
        for path, file_hash, key, _ in rows:
            key = key or found.get(file_hash)
            if key is not None:
                self.keys.setdefault(key, path)

    def repeats(self, draft: MemoryDraft) -> str | None:
        """Path of the memory ``draft`` repeats (same id, else same content key), if any."""
        if draft.id is not None:
            return self.ids.get(draft.id)
        return self.keys.get(self._key(draft))

    def add(self, draft: MemoryDraft, note_id: str, path: str) -> None:
        self.ids[note_id] = path
        self.keys.setdefault(self._key(draft), path)

    def _key(self, draft: MemoryDraft) -> str:
        """``draft``'s :func:`content_key`, worked out once for :meth:`repeats` and :meth:`add`."""
        last = self._last
        if last is not None and last[0] is draft:
            return last[1]
        key = content_key(draft.content)
        self._last = (draft, key)
        return key


EPISODE_KEYS = ("episode", "session", "conversation", "session_id", "conversation_id")
"""Keys of an import line that name the conversation (episode) a turn belongs to, first wins."""
TIME_KEYS = ("timestamp", "time", "date_time")
"""Keys of an import line that give a turn's time when it has no ``created``."""
_CONVERSATION_KEYS = frozenset(EPISODE_KEYS + TIME_KEYS)


def conversation_fields(record: dict[str, Any]) -> dict[str, Any]:
    """An import line with its conversation keys mapped to memory properties.

    The first of :data:`EPISODE_KEYS` becomes ``episode`` (text) and the others are dropped; the
    first of :data:`TIME_KEYS` becomes ``created`` when the line has none. Other keys (e.g.
    ``speaker``) are kept as they are. The record given is not changed (it is returned itself
    when it holds none of those keys).
    """
    if record.keys().isdisjoint(_CONVERSATION_KEYS):
        return record
    out = dict(record)
    episode = next((out[k] for k in EPISODE_KEYS if out.get(k) not in (None, "")), None)
    for key in EPISODE_KEYS:
        out.pop(key, None)
    if episode is not None:
        if isinstance(episode, bool) or not isinstance(episode, str | int | float):
            raise InputError(f"episode must be text, not {episode!r}")
        out["episode"] = str(episode).strip()
    if "created" not in out:
        when = next((out[k] for k in TIME_KEYS if out.get(k) not in (None, "")), None)
        if when is not None:
            out["created"] = when
    for key in TIME_KEYS:
        if key in out and "created" in out and out[key] == out["created"]:
            out.pop(key)
    return out


def conversation_order(drafts: list[tuple[int, MemoryDraft]]) -> list[tuple[int, MemoryDraft]]:
    """``(line number, draft)`` pairs in the order to write them: each episode's turns sorted
    by ``created`` (ties, and turns without a time, keep their line order), placed where the
    episode's first line is; lines without an episode stay where they are."""
    groups: dict[str, list[tuple[int, MemoryDraft]]] = {}
    slots: list[tuple[int, MemoryDraft] | str] = []
    for number, draft in drafts:
        episode = draft.extra.get("episode")
        if not isinstance(episode, str):
            slots.append((number, draft))
            continue
        if episode not in groups:
            groups[episode] = []
            slots.append(episode)
        groups[episode].append((number, draft))
    ordered: list[tuple[int, MemoryDraft]] = []
    for slot in slots:
        if isinstance(slot, str):
            turns = groups[slot]
            timed = all(d.created is not None for _, d in turns)
            ordered += sorted(turns, key=lambda t: (t[1].created, t[0])) if timed else turns
        else:
            ordered.append(slot)
    return ordered


def linked_turn(draft: MemoryDraft, previous_title: str | None) -> MemoryDraft:
    """``draft`` with ``previous: "[[previous_title]]"`` when it follows a turn of its episode."""
    if previous_title is None:
        return draft
    extra = dict(draft.extra)
    extra["previous"] = f"[[{previous_title}]]"
    return replace(draft, extra=extra)


def import_lines(
    vault: NoteCreator,
    lines: Iterable[str | bytes],
    *,
    now: dt.datetime,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import one memory per JSONL line (text or raw bytes); never stops at a bad line.

    A bad line (not UTF-8 — a BOM on the first line is fine —, not JSON, not an object, a
    value a note cannot hold, a bad datetime, a lone surrogate) is reported by number and
    skipped. A line whose ``id`` — or, without one, whose normalised content (:func:`content_key`)
    — is already in the vault or earlier in the file is reported as already there and not
    written again, so importing the same file twice adds nothing. Turns of one conversation (an
    ``episode``/``session``/``conversation`` key) are written in time order and each links the
    turn before it (``previous``, :func:`linked_turn`). Notes are made durable (one flush to
    disk), put in place and indexed :data:`IMPORT_BATCH` at a time
    (:class:`~vaultmem.store.note_batch.NewNotes`); an interrupted import leaves whole notes.
    From :data:`INDEX_AHEAD_FROM` lines a helper process indexes each batch while the next is
    written (:class:`~vaultmem.services.index.pass_indexer.PassIndexer`); the index is complete when
    this returns either way.
    """
    with collector_paused():  # thousands of small objects, no cycles among them
        return _import_lines(vault, lines, now=now, progress=progress)


def _import_lines(
    vault: NoteCreator,
    lines: Iterable[str | bytes],
    *,
    now: dt.datetime,
    progress: Callable[[int], None] | None,
) -> ImportReport:
    report = ImportReport()
    drafts: list[tuple[int, MemoryDraft]] = []
    for number, raw in enumerate(lines, 1):
        if progress is not None:
            progress(number)
        try:
            draft = _parse_line(number, raw)
        except VaultmemError as err:
            report.errors.append((number, str(err)))
            continue
        except (TypeError, ValueError, OverflowError, UnicodeError) as err:
            report.errors.append((number, f"cannot be written as a note: {err}"))
            continue
        if draft is not None:
            drafts.append((number, draft))
    last_turn: dict[str, str] = {}
    with vault_lock(vault.sidecar):
        vault.index.check_writable()
        vault.sync()
        known = _Known(vault)
        batch = NewNotes()
        pending: list[tuple[int, str]] = []  # (line number, path) added to the batch
        # a name read with all the others costs ~1 µs, asked on its own ~6 µs (100,000 notes)
        bulk = len(drafts) * 6 >= vault.index.note_count()
        names = BatchNames.read(vault.index) if bulk else BatchNames()
        indexer = (  # big imports: each batch re-indexed by a helper while the next is written
            PassIndexer.start(vault.root, vault.sidecar)
            if len(drafts) >= INDEX_AHEAD_FROM
            else None
        )

        def commit() -> None:
            if len(batch):
                vault.index.check_writable()  # create_memory leaves it to the batch's writer
            failed = batch.commit()
            names.forget_folders()  # each batch confines its folders again
            written = [path for _, path in pending]
            if failed:  # (rare: a name taken by another writer meanwhile, a full disk)
                fulls = [(number, path, vault.root / path) for number, path in pending]
                written = [path for _, path, full in fulls if full not in failed]
                report.errors.extend(
                    (number, f"{path}: {failed[full]}")
                    for number, path, full in fulls
                    if full in failed
                )
            report.imported.extend(written)
            pending.clear()
            if not written:
                return
            linked = batch.linked
            texts = {path: WrittenNote(*linked[path]) for path in written if path in linked}
            if indexer is not None:  # (a long note is read back: a batch's line stays short)
                indexer.submit(
                    written,
                    {p: t for p, t in texts.items() if len(t.text) <= HANDED_CHARS_MAX},
                )
            else:
                vault.refresh(written, texts)

        try:
            ordered = conversation_order(drafts)
            for taken, (number, draft) in enumerate(ordered, 1):
                after = len(ordered) - taken  # lines after this one
                episode = draft.extra.get("episode")
                key = episode if isinstance(episode, str) else None
                try:
                    repeated = known.repeats(draft)
                    if repeated is not None:
                        report.duplicates.append((number, repeated))
                        if key:
                            last_turn[key] = title_of(repeated)
                        continue
                    linked = linked_turn(draft, last_turn.get(key) if key else None)
                    fields = linked.frontmatter(now)
                    path = create_memory(
                        vault,
                        linked.content,
                        fields,
                        title=linked.title,
                        refresh=False,
                        explicit_title=False,
                        batch=batch,
                        names=names,
                    )
                except VaultmemError as err:
                    report.errors.append((number, str(err)))
                    continue
                except (TypeError, ValueError, OverflowError, UnicodeError) as err:
                    report.errors.append((number, f"cannot be written as a note: {err}"))
                    continue
                known.add(draft, str(fields["id"]), path)
                pending.append((number, path))
                if key:
                    last_turn[key] = title_of(path)
                if len(pending) >= IMPORT_BATCH or (
                    indexer is not None and len(pending) >= after >= TAIL_BATCH
                ):  # the last lines in ever smaller batches: the helper ends soon after them
                    commit()
            commit()
            if indexer is not None:
                left = indexer.wait()  # a batch the helper did not index is indexed here
                if left:
                    vault.refresh(left)
        finally:
            batch.discard()  # only after an error: what was added and not committed
            if indexer is not None:
                indexer.close()
    report.errors.sort()
    return report
