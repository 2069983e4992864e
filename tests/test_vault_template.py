"""The ready vault in ``vault-template/`` (spec section 1) stays in step with the code and the spec.

- ``vaultmem.toml`` holds every setting, commented, at its default (a new setting without a
  template line fails here);
- ``.obsidian/types.json`` declares the property types of the spec section 2 table;
- ``Templates/Memory.md`` becomes a valid memory note once Obsidian fills in its placeholders;
- ``Memories.base`` computes the decay score; its formulas are evaluated here by a small
  translator and checked against the exact spec 3.1 formula;
- the dataviewjs block of the dashboard is run under Node with a stand-in for Dataview's ``dv``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import math
import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import CodeType
from typing import Any

import pytest
import yaml

from vaultmem.core.notes.fields import read_fields
from vaultmem.core.notes.timestamps import parse_datetime
from vaultmem.core.settings import Settings, parse_settings, section_keys

TEMPLATE = Path(__file__).resolve().parents[1] / "vault-template"
DASHBOARD = TEMPLATE / "Memory dashboard.md"
BASE = TEMPLATE / "Memories.base"

# The keys of the spec section 2 table (plus `trace`, the link a box's members get in section 4),
# with the Obsidian property type each must be declared as.
SECTION_2_TYPES = {
    "id": "text",
    "type": "text",
    "status": "text",
    "layer": "text",
    "category": "text",
    "created": "datetime",
    "last_used": "datetime",
    "use_count": "number",
    "strength": "number",
    "importance": "number",
    "confidence": "number",
    "source": "text",
    "pinned": "checkbox",
    "tags": "tags",
    "box": "text",
    "trace": "text",
    "related": "multitext",
    "review_count": "number",
    "last_review_at": "datetime",
    "cross_domain_count": "number",
    "promoted_at": "datetime",
    "archived_at": "datetime",
    "resolved_at": "datetime",
    "valid_until": "datetime",
}
OBSIDIAN_TYPES = {"text", "multitext", "number", "checkbox", "date", "datetime", "tags", "aliases"}
STATUSES = ("active", "promoted", "archived", "superseded")

# Spec 3.1 defaults, written out independently of the code under test.
BETA, ALPHA, KAPPA = 0.6, 1.1, 2.0
HALF_LIFE_DAYS = {"working": 3.0, "episodic": 30.0, "semantic": math.inf, "procedural": math.inf}
TRUST = {"human": 1.0, "agent": 0.7, "conversation": 0.6, "import": 0.5, "consolidation": 0.4}
NOW = dt.datetime(2026, 11, 21, 12, 0, 0, tzinfo=dt.UTC)


def exact_score(note: Mapping[str, Any], now: dt.datetime = NOW) -> float:
    """score = use_count^β · (1 + Δt/t0)^(−α) · strength with the section 2 defaults."""
    uses = note.get("use_count")
    uses = uses if isinstance(uses, int) and uses >= 1 else 1
    strength = note.get("strength")
    strength = strength if isinstance(strength, int | float) and 0 <= strength <= 2 else 1.0
    half_life = HALF_LIFE_DAYS.get(note.get("layer") or "working", HALF_LIFE_DAYS["working"])
    retention = 1.0
    if math.isfinite(half_life):
        trust = TRUST.get(note.get("source") or "", 1.0)
        t0 = half_life / (1 + KAPPA * (1 - trust)) / (2 ** (1 / ALPHA) - 1)
        last = note.get("last_used") or note.get("created")
        assert isinstance(last, dt.datetime)
        age_days = max(0.0, (now - last).total_seconds() / 86400)
        retention = (1 + age_days / t0) ** -ALPHA
    return float(uses**BETA * retention * strength)


# --- folders and git ----------------------------------------------------------------------------


def test_the_vault_folders_exist_and_hold_no_notes() -> None:
    for name in ("STM", "Boxes", "LTM", "Archive"):
        folder = TEMPLATE / name
        assert folder.is_dir(), f"vault-template/{name}/ is missing"
        assert (folder / ".gitkeep").is_file(), f"vault-template/{name}/.gitkeep keeps it in git"
        assert not list(folder.rglob("*.md")), f"vault-template/{name}/ should start empty"
    assert (TEMPLATE / "Templates" / "Memory.md").is_file()
    assert DASHBOARD.is_file()
    assert BASE.is_file()


def test_gitignore_keeps_the_sidecar_and_obsidian_state_out() -> None:
    lines = {line.strip() for line in (TEMPLATE / ".gitignore").read_text().splitlines()}
    assert ".vaultmem/" in lines
    assert ".obsidian/workspace*.json" in lines
    assert ".trash/" in lines


# --- vaultmem.toml ------------------------------------------------------------------------------


def _load_toml() -> dict[str, Any]:
    with (TEMPLATE / "vaultmem.toml").open("rb") as f:
        return tomllib.load(f)


def test_toml_parses_to_the_defaults() -> None:
    assert parse_settings(_load_toml()) == Settings()


def test_toml_writes_out_every_setting() -> None:
    raw = _load_toml()
    defaults = Settings()
    expected_sections = set()
    for field in dataclasses.fields(Settings):
        value = getattr(defaults, field.name)
        if isinstance(value, tuple) or dataclasses.is_dataclass(value):  # a section
            expected_sections.add(field.name)
            assert field.name in raw, f"vaultmem.toml lacks the [{field.name}] section"
            wanted = set(section_keys(value))
            missing = sorted(wanted - set(raw[field.name]))
            assert not missing, f"vaultmem.toml [{field.name}] lacks {', '.join(missing)}"
            for key in wanted:
                written = raw[field.name][key]
                default = getattr(value, key)
                if isinstance(default, tuple):
                    written = tuple(written)
                assert written == default, (
                    f"[{field.name}] {key} = {written!r}, default {default!r}"
                )
        elif field.name == "layer_half_life_days":
            expected_sections.add("layers")
            layers = raw["layers"]
            assert set(layers) == set(value), "vaultmem.toml needs a [layers.<name>] per layer"
            for layer, half_life in value.items():
                assert layers[layer] == {"half_life_days": half_life}
        else:
            pytest.fail(f"Settings.{field.name} is new: write it into vault-template/vaultmem.toml")
    assert set(raw) == expected_sections


def test_toml_comments_every_key() -> None:
    previous = ""
    for number, line in enumerate((TEMPLATE / "vaultmem.toml").read_text().splitlines(), 1):
        stripped = line.strip()
        if re.match(r"^\w+\s*=", stripped):
            assert previous.startswith("#") or "#" in stripped, (
                f"vaultmem.toml line {number} ({stripped}) has no comment above it"
            )
        if stripped:
            previous = stripped


# --- .obsidian ----------------------------------------------------------------------------------


def test_types_json_declares_the_section_2_property_types() -> None:
    types = json.loads((TEMPLATE / ".obsidian" / "types.json").read_text())["types"]
    for key, expected in SECTION_2_TYPES.items():
        assert types.get(key) == expected, f"types.json: {key} should be {expected!r}"
    assert set(types.values()) <= OBSIDIAN_TYPES


def test_obsidian_uses_the_templates_folder_and_enables_templates_and_bases() -> None:
    settings = json.loads((TEMPLATE / ".obsidian" / "templates.json").read_text())
    assert (TEMPLATE / settings["folder"]).is_dir()
    plugins = json.loads((TEMPLATE / ".obsidian" / "core-plugins.json").read_text())
    assert plugins["templates"] is True
    assert plugins["bases"] is True
    assert plugins["properties"] is True


# --- the note template --------------------------------------------------------------------------

_MOMENT_TO_STRFTIME = {"YYYY": "%Y", "MM": "%m", "DD": "%d", "HH": "%H", "mm": "%M", "ss": "%S"}


def _fill_placeholders(text: str, when: dt.datetime, title: str) -> str:
    """What Obsidian's Templates plugin does with ``{{date:FORMAT}}`` and ``{{title}}``."""

    def date(match: re.Match[str]) -> str:
        fmt = re.sub(r"YYYY|MM|DD|HH|mm|ss", lambda m: _MOMENT_TO_STRFTIME[m.group()], match[1])
        return when.strftime(fmt)

    text = re.sub(r"\{\{date:([^}]*)\}\}", date, text)
    text = text.replace("{{title}}", title)
    assert "{{" not in text, "the template uses a placeholder this test does not know"
    return text


def _frontmatter(text: str) -> tuple[dict[str, Any], str]:
    match = re.match(r"---\n(.*?)\n---\n?(.*)", text, re.DOTALL)
    assert match, "no frontmatter"
    data = yaml.safe_load(match[1])
    assert isinstance(data, dict)
    return data, match[2]


def test_memory_template_fills_in_to_a_memory_note_with_the_defaults() -> None:
    when = dt.datetime(2026, 11, 20, 9, 14, 3)
    raw = (TEMPLATE / "Templates" / "Memory.md").read_text()
    data, body = _frontmatter(_fill_placeholders(raw, when, "Prefers dark themes"))
    assert data["type"] == "memory"
    assert set(SECTION_2_TYPES) <= set(data)
    # quoted in the template so it parses before Obsidian fills it in; read as a datetime
    created, last_used = parse_datetime(data["created"]), parse_datetime(data["last_used"])
    assert created == last_used == parse_datetime(when)
    expected: dict[str, Any] = {
        "id": None,
        "status": "active",
        "layer": "working",
        "category": "fact",
        "use_count": 1,
        "strength": 1.0,
        "importance": 0.5,
        "confidence": 1.0,
        "source": "human",
        "pinned": False,
        "tags": [],
        "related": [],
        "review_count": 0,
        "cross_domain_count": 0,
    }
    assert {key: data[key] for key in expected} == expected
    fields, warnings = read_fields(data)
    assert warnings == []
    assert fields.managed
    assert body.strip() == "Prefers dark themes"


def test_template_note_parses_but_is_never_a_memory(tmp_path: Path) -> None:
    # The placeholders are quoted, so the unfilled template is valid YAML (doctor stays quiet);
    # notes in Obsidian's templates folder are indexed as ordinary notes, never as memories.
    from vaultmem import Vault

    vault, _ = Vault.init(tmp_path / "v")
    with vault:
        vault.sync()
        row = vault.index.note_row("Templates/Memory.md")
        assert row is not None
        assert row["type"] is None
        assert row["problems"] == "[]"
        assert vault.memories() == []


# --- Memories.base ------------------------------------------------------------------------------


def _base() -> dict[str, Any]:
    data = yaml.safe_load(BASE.read_text())
    assert isinstance(data, dict)
    return data


def test_base_parses_and_defines_every_formula_it_uses() -> None:
    base = _base()
    formulas = base["formulas"]
    assert "score" in formulas
    used = set(re.findall(r"formula\.(\w+)", BASE.read_text()))
    assert used <= set(formulas), f"undefined formulas: {sorted(used - set(formulas))}"
    assert 'note.type == "memory"' in base["filters"]["and"]
    names = {view["name"] for view in base["views"]}
    for status in STATUSES:
        assert status.title() in names, f"no view for status {status}"


def _to_python(expr: str) -> str:
    """Translate the subset of Bases formula syntax the base uses into a Python expression."""
    py = re.sub(r"formula\.(\w+)", r'F("\1")', expr)
    py = re.sub(r"(\w+)\.isEmpty\(\)", r"_empty(\1)", py)
    py = py.replace(".round(", ".__round__(")
    py = py.replace("&&", " and ").replace("||", " or ")
    py = re.sub(r"!(?!=)", " not ", py)
    py = re.sub(r"\bif\(", "_if(", py)
    return py.replace("file.mtime", "file_mtime")


@functools.cache
def _compiled_formulas() -> dict[str, CodeType]:
    return {
        name: compile(_to_python(expr), f"formula.{name}", "eval")
        for name, expr in _base()["formulas"].items()
    }


def _evaluate_base(note: Mapping[str, Any], now: dt.datetime = NOW) -> Callable[[str], Any]:
    """``formula(name)`` -> the value of ``formula.name`` of Memories.base for ``note``."""
    formulas = _compiled_formulas()
    scope: dict[str, Any] = {key: note.get(key) for key in SECTION_2_TYPES}
    scope.update(
        _if=lambda cond, yes, no=None: yes if cond else no,
        _empty=lambda value: value is None,
        now=lambda: now,
        number=lambda value: value.timestamp() * 1000,
        file_mtime=now,
        max=max,
        min=min,
    )
    cache: dict[str, Any] = {}

    def formula(name: str) -> Any:
        if name not in cache:
            cache[name] = eval(formulas[name], {"__builtins__": {}, "F": formula}, scope)
        return cache[name]

    return formula


def _cases() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for layer in ("working", "episodic", "semantic", "procedural", None, "custom"):
        for source in ("human", "agent", "conversation", "import", "consolidation", None, "x"):
            half_life = HALF_LIFE_DAYS.get(layer or "working", 3.0)
            if not math.isfinite(half_life):
                half_life = 3.0
            effective = half_life / (1 + KAPPA * (1 - TRUST.get(source or "", 1.0)))
            for half_lives in (0, 0.01, 0.3, 1, 2.5, 9.99, 10, 47, 333, 1000, 9999, 10000):
                age = dt.timedelta(days=effective * half_lives)
                cases.append({"layer": layer, "source": source, "last_used": NOW - age})
    for uses in (*range(1, 25), 99, 100, 101, 999, 1000, 5432, 10000, 99999, 100000):
        for strength in (1.0, 0.5, 2.0, 0.0, None, 3.0, -1.0):
            cases.append({"use_count": uses, "strength": strength, "last_used": NOW})
    cases.append({"created": NOW - dt.timedelta(days=2)})  # no last_used: Δt from created
    cases.append({"use_count": 0, "last_used": NOW})  # invalid count: the default 1 is used
    return cases


def test_base_score_matches_the_spec_formula_within_its_stated_accuracy() -> None:
    worst = 0.0
    for note in _cases():
        formula = _evaluate_base(note)
        exact = exact_score(note)
        approx = formula("score_raw")
        if exact == 0:
            assert approx == 0
            continue
        error = abs(approx / exact - 1)
        worst = max(worst, error)
        # The dashboard promises < 0.03 % for use_count^0.6 and < 0.01 % for the retention.
        assert error < 4e-4, f"{note}: base {approx!r}, exact {exact!r}"
        assert formula("score") == round(approx, 4)
    assert worst > 0  # the base really is an approximation, as the dashboard says


def test_base_bands_and_review_priority_follow_the_default_thresholds() -> None:
    for age_days, band in ((0, "strong"), (4, "steady"), (12, "review"), (30, "fading")):
        formula = _evaluate_base({"last_used": NOW - dt.timedelta(days=age_days)})
        assert formula("band") == band, (age_days, formula("score_raw"))
    formula = _evaluate_base({"last_used": NOW - dt.timedelta(days=12)})
    x = (formula("score_raw") - 0.15) / 0.2
    assert formula("review_priority") == round(1 - 4 * (x - 0.5) ** 2, 3)
    assert _evaluate_base({"last_used": NOW - dt.timedelta(days=400)})("band") == "below forget"
    assert _evaluate_base({"layer": "semantic", "last_used": NOW})("half_life") == "none"


# --- the dashboard ------------------------------------------------------------------------------


def test_dashboard_embeds_the_base_and_says_what_needs_dataview() -> None:
    text = DASHBOARD.read_text()
    assert "![[Memories.base]]" in text
    assert "```dataviewjs" in text
    assert "Dataview" in text and "community plugin" in text
    assert "no power" in text  # the approximation is disclosed


def _dataviewjs_block() -> str:
    match = re.search(r"```dataviewjs\n(.*?)\n```\n", DASHBOARD.read_text(), re.DOTALL)
    assert match, "no dataviewjs block"
    return match[1]


_HARNESS = r"""
const fs = require("fs");
const code = fs.readFileSync(process.argv[2], "utf8");
const input = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const out = { paragraphs: [], headers: [], tables: [] };
class DataArray {
  constructor(items) { this.items = items; }
  where(test) { return new DataArray(this.items.filter(test)); }
  array() { return this.items.slice(); }
}
const pages = input.pages.map(p => ({ file: {
  path: p.path, folder: p.path.includes("/") ? p.path.slice(0, p.path.lastIndexOf("/")) : "",
  link: p.path, frontmatter: p.frontmatter, mtime: { toMillis: () => input.now_ms },
} }));
const dv = {
  pages: () => new DataArray(pages),
  paragraph: text => out.paragraphs.push(text),
  header: (level, text) => out.headers.push(text),
  table: (head, rows) => out.tables.push({ head, rows }),
};
Date.now = () => input.now_ms;
new Function("dv", code)(dv);
process.stdout.write(JSON.stringify(out));
"""


@pytest.mark.skipif(
    shutil.which("node") is None, reason="needs Node.js to run the dataviewjs block"
)
def test_dataviewjs_block_scores_exactly_and_charts_the_statuses(tmp_path: Path) -> None:
    # Frontmatter as Obsidian hands it to Dataview: datetimes are strings, naive ones are UTC.
    notes: dict[str, dict[str, Any]] = {
        "STM/Fresh.md": {"type": "memory", "last_used": "2026-11-21T12:00:00"},
        "STM/Agent.md": {
            "type": "memory",
            "source": "agent",
            "use_count": 3,
            "last_used": "2026-11-20T12:00:00Z",
        },
        "STM/Offset.md": {
            "type": "memory",
            "strength": 1.5,
            "last_used": "2026-11-19T14:00:00+02:00",
        },
        "Boxes/2026-11-01/b/Old.md": {
            "type": "memory",
            "layer": "episodic",
            "last_used": "2026-10-01",
        },
        "Boxes/2026-11-01/b/Bad.md": {
            "type": "memory",
            "use_count": -3,
            "strength": "high",
            "created": "2026-11-10T00:00:00",
        },
        "LTM/Fact.md": {
            "type": "memory",
            "status": "promoted",
            "layer": "semantic",
            "last_used": "2020-01-01T00:00:00",
        },
        "Archive/Gone.md": {"type": "memory", "status": "archived", "last_used": "2026-01-01"},
        "Templates/Memory.md": {"type": "memory"},
        "Editor setup.md": {"tags": ["editor"]},
    }
    expected: dict[str, float] = {}
    for path, fm in notes.items():
        if fm.get("type") != "memory" or path.startswith("Templates/"):
            continue
        note = dict(fm)
        for key in ("last_used", "created"):
            if key in note:
                parsed = dt.datetime.fromisoformat(note[key].replace("Z", "+00:00"))
                note[key] = parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
        expected[path] = exact_score(note)

    (tmp_path / "block.js").write_text(_dataviewjs_block())
    (tmp_path / "harness.js").write_text(_HARNESS)
    pages = [{"path": path, "frontmatter": fm} for path, fm in notes.items()]
    payload = {"now_ms": NOW.timestamp() * 1000, "pages": pages}
    (tmp_path / "input.json").write_text(json.dumps(payload))
    run = subprocess.run(
        ["node", "harness.js", "block.js", "input.json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)

    chart = out["paragraphs"][0]
    assert chart.startswith("```mermaid\npie title Memories by status\n") and chart.endswith("```")
    assert '"active" : 5' in chart
    assert '"promoted" : 1' in chart
    assert '"archived" : 1' in chart

    (table,) = out["tables"]
    assert table["head"][:2] == ["Memory", "Score"]
    shown = {row[0]: float(row[1]) for row in table["rows"]}
    active = {p for p, fm in notes.items() if p in expected and "status" not in fm}
    assert set(shown) == active
    for path in active:
        assert shown[path] == pytest.approx(expected[path], abs=5e-4), path
    scores = [float(row[1]) for row in table["rows"]]
    assert scores == sorted(scores, reverse=True)
