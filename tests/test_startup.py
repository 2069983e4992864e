"""Start-up stays light: ``vaultmem --version`` imports no heavy module; a command imports only
what it uses (timings are in ``python -m benchmarks.run``, scenario ``startup``)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest

from vaultmem.cli import COMMANDS, main
from vaultmem.store.index_db import IndexDB

PROBE = """
import json, sys
from vaultmem.cli import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in
      ("numpy", "markdown_it", "sqlite3", "yaml", "watchdog", "vaultmem", "ulid",
       "multiprocessing", "filelock", "urllib", "http", "socket", "difflib", "shutil",
       "hashlib"))),
      file=sys.stderr)
"""


def _modules(argv: list[str], cwd: Path) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_version_imports_nothing_heavy(tmp_path: Path) -> None:
    loaded = _modules(["--version"], tmp_path)
    assert not {m.split(".")[0] for m in loaded} & {"numpy", "markdown_it", "sqlite3", "yaml"}
    assert {m for m in loaded if m.startswith("vaultmem")} <= {
        "vaultmem",
        "vaultmem.cli",
        "vaultmem.errors",
    }


KEYWORD_RECALL_NEVER_LOADS = (
    "hashlib",  # OpenSSL, ~2 ms: an index in step with the vault hashes no note
    "markdown_it",
    "vaultmem.services.lifecycle.lifecycle",
    "vaultmem.services.lifecycle.undo",
    "vaultmem.services.memories.remembering",
    "vaultmem.services.index.watcher",
    "watchdog",
    "ulid",
    "multiprocessing",
    # keyword recall scores its candidates in Python floats (float_scores.row_scores)
    "numpy",
    "vaultmem.core.scoring.scoring",
    "vaultmem.core.scoring.decay",
    "vaultmem.core.lifecycle.lifecycle_plan",
    "vaultmem.services.memories.memory_view",
    # embeddings load only when a provider is configured
    "vaultmem.services.semantic.embeddings",
    "vaultmem.services.semantic.embedding_providers",
    "vaultmem.store.vectors",
    "urllib.request",
    "http",
    # writing: the YAML editor, conflict merging, the note writer, the vault lock
    "vaultmem.core.notes.note_text",
    "vaultmem.core.notes.note_merge",
    "yaml",
    "vaultmem.store.note_files",
    "vaultmem.store.note_batch",
    "filelock",
    # setting a vault up, naming notes that were not found, the watcher's host name
    "vaultmem.services.obsidian_types",
    "shutil",
    "difflib",
    "socket",
)
PARSER = ("vaultmem.core.links.links", "vaultmem.core.notes.note_reading")
"""The note parser's modules: the sync walk loads them only when a note changed (and YAML only
for frontmatter outside the fast path); the frontmatter editor, ``note_text``, never."""


def _indexed_vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    assert _modules(["init", str(root)], tmp_path)
    (root / "STM" / "Coffee.md").write_text("---\ntype: memory\n---\nbrew coffee at 93 C\n")
    (root / "Tea.md").write_text("# Tea\n\nsteep green tea at 80 C, see [[Coffee]]\n")
    index = f"from vaultmem import Vault; Vault.open({str(root)!r}).sync()"
    subprocess.run([sys.executable, "-c", index], check=True, timeout=60)
    return root


def _recall(root: Path, cwd: Path, *words: str) -> tuple[set[str], list[dict[str, object]]]:
    """Modules loaded by ``vaultmem recall --json`` in a fresh process, and its hits."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE.format(argv=["recall", "--json", "--vault", str(root), *words]),
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stderr.strip().splitlines()[-1])), json.loads(proc.stdout)["hits"]


def test_keyword_recall_imports_neither_numpy_nor_the_write_path(tmp_path: Path) -> None:
    root = _indexed_vault(tmp_path)
    loaded, hits = _recall(root, tmp_path, "coffee")
    assert [hit["path"] for hit in hits] == ["STM/Coffee.md", "Tea.md"]  # Tea: linked
    assert hits[0]["signals"]["decay_score"] == pytest.approx(1.0, rel=1e-3)  # type: ignore[index]
    assert "vaultmem.services.recall.recall" in loaded
    assert sorted(set(KEYWORD_RECALL_NEVER_LOADS) & loaded) == []
    assert not {m for m in loaded if m.startswith("numpy.")}
    assert not {*PARSER, "yaml"} & loaded  # nothing changed: the walk parsed no note


def test_recall_parses_a_changed_note_and_finds_its_new_words(tmp_path: Path) -> None:
    root = _indexed_vault(tmp_path)
    (root / "Tea.md").write_text("# Tea\n\nsteep oolong at 90 C\n")
    loaded, hits = _recall(root, tmp_path, "oolong")
    assert hits[0]["path"] == "Tea.md" and "oolong" in str(hits[0]["text"])
    assert set(PARSER) <= loaded  # the changed note was parsed
    assert "numpy" not in loaded and "filelock" not in loaded and "yaml" not in loaded
    assert "vaultmem.core.notes.note_text" not in loaded  # parsing needs only the reading half


def test_every_lazy_command_is_registered_under_its_own_name() -> None:
    commands = main.all_commands()
    assert set(commands) == set(COMMANDS)
    assert all(isinstance(c, click.Command) and c.name == n for n, c in commands.items())


def test_import_loads_no_numpy(tmp_path: Path) -> None:
    root = tmp_path / "v"
    assert _modules(["init", str(root)], tmp_path)
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text('{"content": "brew coffee at 93 C", "tags": ["drinks"]}\n'
                     '{"content": "steep green tea at 80 C", "importance": 0.8}\n')  # fmt: skip
    loaded = _modules(["import", "--vault", str(root), str(jsonl)], tmp_path)
    assert "vaultmem.services.memories.remembering" in loaded
    assert not {m for m in loaded if m.split(".")[0] == "numpy"}
    assert len(list((root / "STM").glob("*.md"))) == 2


def test_a_cold_index_loads_no_numpy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The edge recount of a bulk load is plain Python: numpy's
    import would cost a 10,000-note cold index more than the recount itself."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1]))  # benchmarks/
    from benchmarks.generate_vault import generate_vault
    from vaultmem.store.index_links import BULK_RECOUNT

    root = tmp_path / "v"
    generate_vault(root, 2_000, 200, 0)
    assert sum(1 for _ in root.rglob("*.md")) > BULK_RECOUNT
    loaded = _modules(["index", "--rebuild", "--vault", str(root)], tmp_path)
    assert "vaultmem.services.index.index_bulk" in loaded
    assert "numpy" not in loaded


def test_indexing_templates_and_urls_loads_no_yaml(
    tmp_path: Path, copy_vault: Callable[[str], Path]
) -> None:
    """kepano-obsidian's templates (``created: {{date}}``) and URL properties are read without
    PyYAML: its import alone costs several times the raw read of a 100-note vault."""
    root = copy_vault("kepano-obsidian")
    loaded = _modules(["index", "--rebuild", "--vault", str(root)], tmp_path)
    assert "vaultmem.services.index.index_sync" in loaded
    assert "yaml" not in loaded
    db = IndexDB.open(root / ".vaultmem")  # YAML's own message, all the same
    (problems,) = db.conn.execute(
        "SELECT problems FROM notes WHERE path = 'Templates/Book Template.md'"
    ).fetchone()
    db.close()
    assert "found unhashable key (while constructing a mapping) (line 13, column 11)" in problems


def test_remember_without_embeddings_loads_neither_them_nor_yaml(tmp_path: Path) -> None:
    """Saving a memory (the assistant's most frequent write) with ``provider = "none"`` imports
    no embedding code and no PyYAML: the note it writes is read back by the fast path."""
    root = _indexed_vault(tmp_path)
    loaded = _modules(
        ["remember", "steep oolong at 90 C", "--tags", "tea_notes,drinks", "--vault", str(root)],
        tmp_path,
    )
    assert "vaultmem.services.memories.memory_saving" in loaded  # the command ran
    assert any(p.name.startswith("steep oolong") for p in (root / "STM").iterdir())
    assert "yaml" not in loaded
    assert "vaultmem.services.semantic.embeddings" not in loaded


RECORD_DATACLASSES = """
import dataclasses
made = []
process_class = dataclasses._process_class
def recording(cls, *args, **kwargs):
    made.append(cls.__qualname__)
    return process_class(cls, *args, **kwargs)
dataclasses._process_class = recording
"""
"""Lines of a probe: from them on, ``made`` names each dataclass made (~0.5 ms each)."""

COLD_INDEX = (
    """
import json, sys
from pathlib import Path
from vaultmem.services.index.index_sync import sync_index
from vaultmem.store.index_db import IndexDB
from vaultmem.store.settings_file import load_settings

root = Path({root!r})
db, settings = IndexDB.open(root / ".vaultmem"), load_settings(root)
"""
    + RECORD_DATACLASSES
    + """
before = set(sys.modules)
report = sync_index(root, db, settings, rebuild=True)
from vaultmem.core.links import indented_code, links
from vaultmem.core.lazy_patterns import LazyPattern
print(json.dumps({{
    "added": report.added,
    "loaded": sorted(set(sys.modules) - before),
    "dataclasses": made,
    "uncompiled": sorted(
        k
        for module in (links, indented_code)
        for k, v in vars(module).items()
        if isinstance(v, LazyPattern)
    ),
}}))
"""
)
COLD_INDEX_LOADS = {
    "vaultmem.core.notes.frontmatter_fast_path",
    "vaultmem.core.lazy_patterns",
    "vaultmem.core.links.indented_code",
    "vaultmem.core.links.links",
    "vaultmem.core.notes.note_reading",
    "vaultmem.services.index.index_bulk",
    "vaultmem.store.index_load",
}
"""What a cold index of a small vault imports besides what opening the index did: the note
parser and the bulk load, and nothing else (each further module costs every cold index; the
code-span scanner only loads for a note that may hold code, and kepano's notes hold none)."""


def _probe(script: str, root: Path) -> dict[str, Any]:
    """The JSON ``script`` (formatted with ``root``) prints last, run in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-c", script.format(root=str(root))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_a_cold_index_imports_only_the_parser_and_makes_no_dataclass(
    copy_vault: Callable[[str], Path],
) -> None:
    """kepano-obsidian (100 notes) indexes in ~15 ms, of which importing the parser was a third:
    the frontmatter editor (note_text, with numbers), dataclasses (~0.4 ms each to make) and
    the expressions for code and nested lists (kepano holds none) are left out."""
    result = _probe(COLD_INDEX, copy_vault("kepano-obsidian"))
    assert result["added"] > 100
    assert set(result["loaded"]) == COLD_INDEX_LOADS
    assert result["dataclasses"] == []
    assert {"_LIST_ITEM_RE", "_THEMATIC_RE", "_COMMENT_RE"} <= set(result["uncompiled"])


SETTINGS_CLASSES = (
    RECORD_DATACLASSES
    + """
import json
from vaultmem.core.settings import parse_settings
settings = parse_settings({{"recall": {{"k": 3}}, "decay": {{"beta": 0.5}}}})
print(json.dumps({{"made": sorted(made), "k": settings.recall.k, "beta": settings.decay.beta}}))
"""
)


def test_the_settings_sections_are_made_without_dataclasses(tmp_path: Path) -> None:
    """Every command loads the settings: as frozen dataclasses its seven sections cost each
    start-up 3.5 ms. Only the whole and ``[decay]`` (which checks its ranges) are dataclasses."""
    result = _probe(SETTINGS_CLASSES, tmp_path)
    assert result == {"made": ["DecayParams", "Settings"], "k": 3, "beta": 0.5}


CODE_SCANNER = """
import json, sys
from vaultmem.core.links import links
before = "vaultmem.core.links.code_spans" in sys.modules
result = links.ENTRY("`[[in code]]` and [[Out]]\\n")
print(json.dumps({{"before": before, "after": "vaultmem.core.links.code_spans" in sys.modules,
                   "found": [link.target for link in result]}}))
"""


@pytest.mark.parametrize("entry", ["extract_links", "_parsed_links"])
def test_the_code_span_scanner_loads_when_a_note_first_may_hold_code(
    entry: str, tmp_path: Path
) -> None:
    """Each way into the code-aware link paths binds the scanner first, in a fresh process."""
    result = _probe(CODE_SCANNER.replace("ENTRY", entry), tmp_path)
    assert result == {"before": False, "after": True, "found": ["Out"]}


FORKED_COLD_INDEX = """
import json, sys
from pathlib import Path
from vaultmem.services.index import forked_workers
from vaultmem.services.index.index_sync import sync_index
from vaultmem.store.index_db import IndexDB
from vaultmem.store.settings_file import load_settings

maps = []
real = forked_workers.forked_map
def counting(work, batches, workers):
    maps.append((len(batches), workers))
    return real(work, batches, workers)
forked_workers.forked_map = counting
root = Path({root!r})
db, settings = IndexDB.open(root / ".vaultmem"), load_settings(root)
report = sync_index(root, db, settings, rebuild=True)
print(json.dumps({{
    "added": report.added,
    "maps": maps,
    "loaded": sorted(
        m for m in sys.modules
        if m.split(".")[0] in ("multiprocessing", "concurrent", "pickle", "socket")
    ),
}}))
"""


def test_a_cold_index_forks_its_workers_without_importing_multiprocessing(
    copy_vault: Callable[[str], Path],
) -> None:
    """13th-age-srd (1,184 notes) is read and parsed by two forked workers; importing
    ``concurrent.futures`` and ``multiprocessing`` for them took a tenth of its cold index."""
    result = _probe(FORKED_COLD_INDEX, copy_vault("13th-age-srd"))
    assert result["added"] > 1000
    assert len(result["maps"]) == 1 and result["maps"][0][0] > 2 and result["maps"][0][1] == 2
    assert result["loaded"] == []
