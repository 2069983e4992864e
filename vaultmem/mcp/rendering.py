"""Text renderings of the MCP tools' structured results (what a model reads first).

Each function takes the JSON-ready ``dict`` a tool returns as structured content and gives a few
plain lines: identity (title, id, path), the numbers that matter, and the memory text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

_INDENT = "   "


def _indented(text: str) -> str:
    return "\n".join(_INDENT + line if line else "" for line in text.splitlines())


def _ident(item: Mapping[str, Any]) -> str:
    ident = f"id {item['id']}, " if item.get("id") else ""
    return f"{item.get('title')} ({ident}{item.get('path')})"


def memory_text(data: Mapping[str, Any], verb: str | None = None) -> str:
    """One memory (``show``, ``remember``, ``touch``): header, state line, then its text."""
    head = f"{verb} {_ident(data)}" if verb else _ident(data)
    if data.get("memory") is False:  # a person's own note: no memory fields to speak of
        state = "a note of your own, not a memory: it is searched, never decayed or moved"
        if data.get("problems"):  # its frontmatter did not parse: whether it is one is unknown
            state = (
                f"not read as a memory: {data.get('path')}: {data['problems'][0]}; its "
                "properties cannot be read, so vaultmem never writes it"
            )
        return f"{head}\n{state}\n\n{data.get('text', '')}".rstrip()
    tags = ", ".join(data.get("tags") or []) or "—"
    state = (
        f"status {data.get('status')}, layer {data.get('layer')}, category "
        f"{data.get('category')}, tags {tags}; score {data.get('score')}, use_count "
        f"{data.get('use_count')}, last_used {data.get('last_used') or '—'}"
    )
    return f"{head}\n{state}\n\n{data.get('text', '')}".rstrip()


def memories_text(items: Sequence[Mapping[str, Any]], verb: str) -> str:
    return "\n\n".join(memory_text(item, verb) for item in items) or f"nothing {verb}"


def hits_text(query: str, hits: Sequence[Mapping[str, Any]]) -> str:
    """Recall hits: rank, title, id, path, score (and signals when explained), then the text."""
    if not hits:
        return f"no memories match {query!r}"
    blocks = []
    for hit in hits:
        review = " [due for review]" if hit.get("review") else ""
        lines = [f"{hit['rank']}. {_ident(hit)} score {hit['score']}{review}"]
        signals = hit.get("signals")
        if isinstance(signals, Mapping):
            parts = ", ".join(f"{k} {v}" for k, v in signals.items() if v is not None)
            lines.append(f"{_INDENT}signals: {parts}")
        if hit.get("text"):
            lines.append(_indented(str(hit["text"])))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def rows_text(rows: Sequence[Mapping[str, Any]], empty: str) -> str:
    """Memory rows (``review``): one line each."""
    if not rows:
        return empty
    return "\n".join(
        f"{_ident(r)}: score {r['score']}, review priority {r['review_priority']}, "
        f"use_count {r['use_count']}, last_used {r['last_used'] or '—'}"
        for r in rows
    )


def status_text(data: Mapping[str, Any]) -> str:
    folders = ", ".join(f"{k} {v}" for k, v in data["by_folder"].items()) or "—"
    statuses = ", ".join(f"{k} {v}" for k, v in data["by_status"].items()) or "—"
    return (
        f"{data['notes']} notes, {data['memories']} memories\n"
        f"by folder: {folders}\nby status: {statuses}\n"
        f"danger zone: {data['danger_zone']}; a pass now would promote "
        f"{data['would_promote']} and forget {data['would_forget']}"
    )


def links_text(data: Mapping[str, Any]) -> str:
    lines = [f"{data['title']} ({data['path']})"]
    for link in data["outgoing"]:
        lines.append(f"  → {link['title']} ({link['resolved']}, {link['kind']})")
    for link in data["backlinks"]:
        lines.append(f"  ← {link['title']} ({link['source']}, {link['kind']})")
    for link in data["unresolved"]:
        lines.append(f"  ? [[{link['target']}]] (no such note)")
    if len(lines) == 1:
        lines.append("  no links")
    return "\n".join(lines)


def moves_text(passes: Sequence[Mapping[str, Any]], dry_run: bool) -> str:
    """Lifecycle or forget results: one line per planned or applied move."""
    lines = []
    for result in passes:
        moves = result["planned"] if dry_run else result["applied"]
        lines.append(f"{result['pass']}: {len(moves)} {'planned' if dry_run else 'applied'}")
        for move in moves:
            where = f" → {move['destination']}" if move.get("destination") else ""
            lines.append(f"  {move['action']} {move['path']}{where} ({move['reason']})")
        for skipped in result.get("skipped", []):
            lines.append(f"  skipped {skipped['path']}: {skipped['error']}")
    if dry_run:
        lines.append("(dry run: nothing changed; call again with apply: true to carry it out)")
    return "\n".join(lines)


def remembered_text(data: Mapping[str, Any]) -> str:
    """``remember``: what happened (written, reinforced instead, corrected), then the memory."""
    outcome = data["outcome"]
    if outcome == "reinforced":
        head = "reinforced instead (an active memory already says this):"
    elif outcome == "corrected":
        head = f"remembered a correction; superseded {data.get('superseded')}:"
    else:
        head = "remembered (written):"
    text = memory_text(data["memory"], head)
    clash = data.get("title_clash")
    if clash:
        text += f"\n(title taken by {clash['taken_by']}: saved as {clash['saved_as']})"
    return text


def page_text(data: Mapping[str, Any]) -> str:
    """``read_note``: where the page lies in the note, then the text."""
    end = data["offset"] + len(data["text"])
    more = f"; more from offset {data['next_offset']}" if data["next_offset"] is not None else ""
    return (
        f"{data['title']} ({data['path']}, {data['kind']}): characters {data['offset']}–{end} "
        f"of {data['chars']}{more}\n\n{data['text']}"
    )


def rewrite_text(data: Mapping[str, Any]) -> str:
    """``edit`` and ``link``: what changed and the journal entry that undoes it."""
    action = data["action"]
    if action == "appended":
        what = "appended a paragraph to"
    elif action == "replaced":
        what = "replaced a line of"
    else:
        what = f"linked (related → {data.get('linked_to')})"
    head = f"{what} {data['path']} (undo: entry {data['journal']})"
    return memory_text(data["memory"], head)


def embed_status_text(data: Mapping[str, Any]) -> str:
    if data["provider"] is None:
        return str(data["problem"])
    state = "answers" if data["available"] else f"does not answer ({data['problem']})"
    return (
        f"provider {data['provider']} {state}; {data['notes']} notes: {data['embedded']} "
        f"embedded, {data['stale']} stale, {data['missing']} missing"
    )


def consolidation_text(data: Mapping[str, Any]) -> str:
    lines = [f"{len(data['clusters'])} clusters among {data['memories']} memories with vectors"]
    for cluster in data["clusters"]:
        members = ", ".join(
            str(m.get("path")) if isinstance(m, Mapping) else str(m)
            for m in cluster.get("members", [])
        )
        lines.append(f"  {cluster.get('action')} cohesion {cluster.get('cohesion')}: {members}")
    if data["dry_run"]:
        lines.append("(dry run: nothing changed; call again with apply: true to merge)")
    else:
        lines.append(f"merged {len(data['merged'])}; `undo` reverts it")
    return "\n".join(lines)


def journal_text(data: Mapping[str, Any]) -> str:
    """``journal``: one line per entry, newest first."""
    if not data["entries"]:
        return "the journal is empty"
    return "\n".join(
        f"{e['entry']}: {e['command']} by {e['who'] or '?'}"
        f"{' (this server)' if e.get('mine') else ''}, {e['operations']} files, "
        f"{e['started'] or '?'}, {e['state']}"
        for e in data["entries"]
    )


def undo_text(data: Mapping[str, Any]) -> str:
    lines = [f"undid {data['command']} ({data['journal']})"]
    for item in data["restored"]:
        lines.append(f"  {item['operation']}: {item['to']} (was {item['from']})")
    return "\n".join(lines)


def doctor_text(data: Mapping[str, Any]) -> str:
    lines = [
        f"{data['notes']} notes checked: {len(data['problems'])} problems, "
        f"{len(data['warnings'])} warnings, {len(data['stale_index'])} stale index rows repaired"
    ]
    for kind in ("problems", "warnings"):
        for finding in data[kind]:
            lines.append(
                f"  {kind[:-1]} [{finding['kind']}] {finding['path']}: {finding['detail']}"
            )
    return "\n".join(lines)


__all__ = [
    "consolidation_text",
    "doctor_text",
    "embed_status_text",
    "journal_text",
    "page_text",
    "remembered_text",
    "rewrite_text",
    "hits_text",
    "links_text",
    "memories_text",
    "memory_text",
    "moves_text",
    "rows_text",
    "status_text",
    "undo_text",
]
