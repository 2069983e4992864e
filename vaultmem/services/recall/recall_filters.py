"""Which notes recall may return: :class:`RecallFilters`, the SQL condition every candidate
query of recall shares (:mod:`~vaultmem.services.recall.recall`, its candidates and neighbours),
and the scaffolding rules (box and trace notes, templates, the dashboard). docs/user-guide.md,
"Recall".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vaultmem.core.notes.fields import LAYERS, MANAGED_TYPES, STATUSES
from vaultmem.core.notes.timestamps import parse_datetime
from vaultmem.errors import InputError
from vaultmem.services.index.note_filters import (
    checked_choice,
    checked_tag,
    folder_condition,
    folder_parts,
    tag_condition,
    vault_folder,
)
from vaultmem.services.index.template_folders import OWN_TEMPLATES

__all__ = ["DASHBOARD", "DEFAULT_TEMPLATES", "KINDS", "SCAFFOLDING_WORDS", "RecallFilters"]

_MANAGED_SQL = "COALESCE(n.type, '') IN (" + ", ".join(f"'{t}'" for t in MANAGED_TYPES) + ")"
KINDS = ("memory", "note", "box", "trace", "template")
"""``kind`` filter values: vaultmem's memories, a person's own notes, boxes, traces, and the
scaffolding notes (templates and the dashboard)."""
DASHBOARD = "Memory dashboard.md"
"""vaultmem's dashboard note (vault-relative path), scaffolding rather than knowledge."""
DEFAULT_TEMPLATES = OWN_TEMPLATES
"""vaultmem's own template folder; Obsidian's (``.obsidian/templates.json``) counts too."""


@dataclass(frozen=True, slots=True)
class RecallFilters:
    """Which notes recall may return ("Recall"). ``status``/``layer`` select managed notes only.

    ``tag`` matches the tag or a nested one (``project`` matches ``project/alpha``), case-
    insensitively; ``folder`` a folder of the vault (its notes at any depth); ``since`` notes
    used or created at or after it. Archived memories are left out unless ``include_archived``
    (or ``status="archived"``), superseded ones unless ``include_superseded`` (or
    ``status="superseded"``). Scaffolding — box and trace notes, templates (``templates``
    folders) and the dashboard — never takes a slot unless ``include_notes`` or a ``kind`` (one
    of :data:`KINDS`) asks for it; templates and the dashboard also compete when the query names
    them (``asks_for_scaffolding``: a word of :data:`SCAFFOLDING_WORDS`). A person's own notes
    are always searchable.
    """

    status: str | None = None
    layer: str | None = None
    tag: str | None = None
    folder: str | None = None
    since: dt.datetime | None = None
    include_archived: bool = False
    include_superseded: bool = False
    include_notes: bool = False
    kind: str | None = None
    templates: tuple[str, ...] = (DEFAULT_TEMPLATES,)
    asks_for_scaffolding: bool = False

    @classmethod
    def from_options(
        cls, options: Mapping[str, Any], templates: tuple[str, ...] = (DEFAULT_TEMPLATES,),
        *, asks_for_scaffolding: bool = False, root: Path | None = None,
    ) -> RecallFilters:
        """Validate ``recall``'s filter options; raises :class:`InputError` for a value it cannot
        honour: a status, layer or kind not among the choices, a ``since`` that is not a
        datetime, an empty tag or folder, a folder not in the vault at ``root`` (see
        :func:`~vaultmem.services.index.note_filters.vault_folder`; without ``root`` only its
        form is checked), ``include_notes`` with a ``kind`` (which already chooses the notes).
        A filter given as ``None`` is not asked for."""
        status = checked_choice("status", options.get("status"), STATUSES)
        layer = checked_choice("layer", options.get("layer"), LAYERS)
        kind = checked_choice("kind", options.get("kind"), KINDS)
        include_notes = bool(options.get("include_notes", False))
        if kind is not None and include_notes:
            raise InputError(
                f"include_notes has no effect with kind {kind!r}: the kind already chooses the "
                "notes; give one of them"
            )
        since = options.get("since")
        if isinstance(since, str) and not since.strip():
            raise InputError(f"since {since!r} is empty: give an ISO 8601 date, e.g. 2026-11-01")
        if since is not None:
            try:
                since = parse_datetime(since)
            except (TypeError, ValueError):
                raise InputError(f"since is not a datetime: {since!r}") from None
        tag = options.get("tag")
        tag = None if tag is None else checked_tag(tag)
        folder = options.get("folder")
        if folder is not None:
            folder = (vault_folder(root, folder) if root is not None
                      else "/".join(folder_parts(folder)))
        return cls(status=status, layer=layer, tag=tag, folder=folder, since=since,
                   include_archived=bool(options.get("include_archived", False)),
                   include_superseded=bool(options.get("include_superseded", False)),
                   include_notes=include_notes, kind=kind,
                   templates=templates, asks_for_scaffolding=asks_for_scaffolding)

    @property
    def narrows(self) -> bool:
        """True when a filter besides the archive and scaffolding rules is set."""
        return any(v is not None for v in (self.status, self.layer, self.tag, self.folder,
                                           self.since, self.kind))

    def _template_sql(self) -> tuple[str, list[object]]:
        """Condition over ``notes n``: a template or the dashboard."""
        clauses = ["n.path = ?"]
        params: list[object] = [DASHBOARD]
        for folder in self.templates:
            prefix = folder + "/"
            clauses.append("substr(n.path, 1, ?) = ?")
            params += [len(prefix), prefix]
        return " OR ".join(clauses), params

    def sql(self) -> tuple[str, list[object]]:
        """A condition over ``notes n`` and its parameters."""
        clauses: list[str] = []
        params: list[object] = []
        if not self.include_archived and self.status != "archived":
            clauses.append(f"NOT ({_MANAGED_SQL} AND n.status = 'archived')")
        if not self.include_superseded and self.status != "superseded":
            clauses.append(f"NOT ({_MANAGED_SQL} AND n.status = 'superseded')")
        template, template_params = self._template_sql()
        if self.kind == "template":
            clauses.append(template)
            params += template_params
        elif self.kind is not None:
            clauses.append(f"NOT ({template})")
            params += template_params
            clauses.append("COALESCE(n.type, '') = ?")
            params.append("" if self.kind == "note" else self.kind)
        elif not self.include_notes:
            clauses.append("COALESCE(n.type, '') NOT IN ('box', 'trace')")
            if not self.asks_for_scaffolding:
                clauses.append(f"NOT ({template})")
                params += template_params
        for column in ("status", "layer"):
            value = getattr(self, column)
            if value is not None:
                clauses.append(f"{_MANAGED_SQL} AND n.{column} = ?")
                params.append(value)
        for value, condition in ((self.tag, tag_condition), (self.folder, folder_condition)):
            if value is not None:
                clause, more = condition(value)
                clauses.append(clause)
                params += more
        if self.since is not None:
            clauses.append("(n.last_used >= ? OR n.created >= ?)")
            params += [self.since.timestamp()] * 2
        return " AND ".join(f"({c})" for c in clauses) or "1", params


SCAFFOLDING_WORDS = frozenset({"template", "templates", "dashboard"})
"""A query with one of these words asks for scaffolding: templates and the dashboard compete."""
