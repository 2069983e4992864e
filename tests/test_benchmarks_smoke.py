"""The benchmark still runs: the generator writes what spec section 11 describes, and
``python -m benchmarks.run`` names every figure. No timing is asserted here (style: speed is
measured in the benchmark, not asserted in a test)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vaultmem.core.notes.note_text import parse_frontmatter, split_note
from vaultmem.services.vault import Vault
from vaultmem.store.settings_file import load_settings

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # benchmarks/ is not installed; plain `pytest` lacks the repo
    sys.path.insert(0, str(REPO))

from benchmarks.generate_vault import (  # noqa: E402
    FRONTMATTER_KEYS,
    MEMORY_LINKS,
    REFERENCE_TIME,
    generate_hub_vault,
    generate_vault,
)
from benchmarks.run import FIGURES, profile_figure  # noqa: E402
from benchmarks.scenarios import (  # noqa: E402
    CREATE_PROBE_FILES,
    SCRATCH_ENV,
    apply,
    cold_profile,
    scratch_folder,
)

MEMORY_FOLDERS = ("STM/", "Boxes/", "LTM/", "Archive/")
WIKILINK = re.compile(r"\[\[[^\]\n]+\]\]")


def _notes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*.md"))
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


def test_generated_vault_matches_spec_section_11(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    generate_vault(root, 200, seed=3)
    notes = _notes(root)
    memories = {rel: text for rel, text in notes.items() if rel.startswith(MEMORY_FOLDERS)}
    assert len(memories) == 200
    assert len(notes) - len(memories) == 20  # ordinary notes default to N/10
    assert {rel.split("/", 1)[0] for rel in memories} == {"STM", "Boxes", "LTM", "Archive"}
    assert any(re.match(r"Boxes/\d{4}-\d\d-\d\d/box-[^/]+/[^/]+\.md$", rel) for rel in memories)
    titles = {rel.rsplit("/", 1)[-1].lower() for rel in notes}
    assert len(titles) == len(notes)  # base names are unique, case-insensitively
    for rel, text in memories.items():
        parts = split_note(text)
        frontmatter = parse_frontmatter(parts.yaml)
        assert tuple(frontmatter) == FRONTMATTER_KEYS, rel
        assert frontmatter["type"] == "memory"
        assert 700 <= len(parts.body.encode()) <= 1500, rel
        assert len(WIKILINK.findall(parts.body)) == MEMORY_LINKS, rel
    assert load_settings(root).folders.stm == "STM"
    assert (root / ".obsidian").is_dir()


def test_generator_is_deterministic(tmp_path: Path) -> None:
    generate_vault(tmp_path / "a", 50, 7, seed=1)
    generate_vault(tmp_path / "b", 50, 7, seed=1)
    generate_vault(tmp_path / "c", 50, 7, seed=2)
    assert _notes(tmp_path / "a") == _notes(tmp_path / "b")
    assert _notes(tmp_path / "a") != _notes(tmp_path / "c")


def test_hub_shaped_vault_and_the_cold_index_profile(tmp_path: Path) -> None:
    """The hub-shaped generator writes plugin notes with inline code in list items, nested
    lists and HTML, deterministically; the profile scenario indexes them all in one process
    and names its three costliest functions."""
    generate_hub_vault(tmp_path / "a", 40, seed=1)
    generate_hub_vault(tmp_path / "b", 40, seed=1)
    notes = _notes(tmp_path / "a")
    assert notes == _notes(tmp_path / "b")
    plugins = [text for rel, text in notes.items() if rel.startswith("01 - Community/01 - Plug")]
    assert len(plugins) == 40 and len(notes) == 140
    assert all("- Plugin ID: `" in text and '<span class="git-footer">' in text for text in plugins)
    assert any("\n    - " in text for text in plugins)  # nested list items
    result = cold_profile(tmp_path / "a")
    assert len(result["top"]) == 3 and result["seconds"] > 0
    assert all(0 < row["share"] <= 1 and row["function"] for row in result["top"])
    from vaultmem.services.index import index_sync
    from vaultmem.store.index_db import IndexDB

    assert index_sync.worker_start(10**6) is not None or os.cpu_count() == 1  # put back
    db = IndexDB.open(tmp_path / "a" / ".vaultmem")
    assert db.conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 140
    db.close()
    figure = profile_figure(result)
    assert figure.value.count(" %") == 3 and figure.value.startswith(result["top"][0]["function"])


@pytest.mark.slow
def test_quick_run_names_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "out"
    temp = tmp_path / "temp"  # the run's scratch copies go here and are gone after it
    temp.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.run", "--sizes", "300", "--quick", "--out", str(out),
         "--settle-seconds", "0"],  # probes file creation, never waits for it to recover
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    assert proc.returncode == 0, proc.stderr
    assert list(temp.iterdir()) == []
    for figure in FIGURES:
        assert figure in proc.stdout, figure
    assert "ERROR" not in proc.stdout, proc.stdout
    assert "sqlite" in proc.stdout and "cores" in proc.stdout
    for figure, target in (("lifecycle apply", "≥ 2,000 moves/s"),
                           ("import (new vault, keywords only)", "≥ 3,000 memories/s")):
        row = next(line for line in proc.stdout.splitlines() if line.startswith(figure))
        assert target in row, row
    # beside it, the import with the embeddings extra: measured where a provider is installed
    row = next(line for line in proc.stdout.splitlines()
               if line.startswith("import, embeddings extra installed"))
    assert "embedded in batches" in row or "no embedding provider installed" in row, row
    document = json.loads((out / "last-run.json").read_text(encoding="utf-8"))
    assert document["import"]["raw"]["import"]["imported"] == 1_000
    imported = document["import"]["raw"]["import"]  # the kernel's share of the CPU, shown too
    assert 0 <= imported["kernel_seconds"] <= imported["cpu_seconds"]
    assert re.search(r"memories/s \(1,000 in [0-9.]+ s, [0-9.]+ s cpu \([0-9.]+ s kernel\)\)",
                     proc.stdout), proc.stdout
    (corpus,) = document["corpora"]
    applied = corpus["raw"]["apply"]  # beside it, the cost of a file creation as it started
    assert applied["creates_per_second"] > 0
    assert applied["all_seconds"] == [applied["seconds"]]  # --quick: one run, not a median
    assert applied["in_order"] == [{
        "seconds": applied["seconds"], "creates_per_second": applied["creates_per_second"],
        "settle_waited_seconds": 0.0, "settle_first_rate": applied["settle_first_rate"],
    }]
    assert applied["settle_first_rate"] > 0 and imported["settle_waited_seconds"] == 0.0
    assert applied["undone"] > 0 and applied["undo_seconds"] > 0  # its undo, timed beside it
    undo_row = next(line for line in proc.stdout.splitlines() if line.startswith("lifecycle undo"))
    assert "to put back" in undo_row and "the apply it reverts" in undo_row, undo_row
    # apply runs last: its thousands of created and freed files would slow what follows
    log = proc.stderr.splitlines()
    assert log.index("[synthetic N=300] lifecycle apply") > max(
        i for i, line in enumerate(log) if line.startswith(("[import]", "[start-up]"))
    )
    names = [f["name"] for f in corpus["figures"]]  # its rows keep their place in the table
    assert names.index("lifecycle plan, live watcher") < names.index(
        "lifecycle --dry-run, every pass"
    ) < names.index("lifecycle apply (journaled)") < names.index("recall p50")
    dry = corpus["raw"]["dry_run"]  # what `vaultmem lifecycle --dry-run` does, every pass
    assert dry["seconds"] > 0 and list(dry["planned"])[:2] == ["seal", "promote"]
    assert re.search(r"creating an empty file [0-9,]+/s just before", proc.stdout), proc.stdout
    read = corpus["raw"]["raw_read"]  # the baseline reads and decodes every note
    assert read["notes"] == 330 and 0 < read["read_seconds"] <= read["seconds"]
    assert {f["name"] for f in corpus["figures"]} >= set(FIGURES)
    # the cached vault is left as generated: no probe notes, no edited note, no dirty mark
    vault = Path(corpus["path"])
    assert not (vault / ".bench-dirty").exists()
    assert not list(vault.rglob("Watcher probe *.md"))
    assert not any("Edited by the benchmark" in text for text in _notes(vault).values())


def test_scratch_folders_outlive_their_scenario_inside_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run keeps its scenarios' copies until the end (mass deletion slows later file
    creation on a journal-less ext4); a scenario run alone cleans up after itself."""
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path))
    with scratch_folder("kept-") as kept:
        (kept / "note.md").write_text("x")
    assert kept.parent == tmp_path and (kept / "note.md").is_file()
    monkeypatch.delenv(SCRATCH_ENV)
    with scratch_folder("gone-") as gone:
        (gone / "note.md").write_text("x")
    assert not gone.exists()


def test_apply_probes_file_creation_where_the_run_writes_and_the_pass_ignores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe's empty files sit hidden in the fullest folder (STM here): the pass neither
    indexes nor moves them, and they are kept until the run's scratch folder goes."""
    source = tmp_path / "vault"
    generate_vault(source, 120, seed=5)
    monkeypatch.setenv(SCRATCH_ENV, str(tmp_path / "scratch"))
    (tmp_path / "scratch").mkdir()
    result = apply(source)
    assert result["moves"] > 0 and result["creates_per_second"] > 0
    (copy,) = (tmp_path / "scratch").glob("vaultmem-apply-*/vault")
    probes = sorted(copy.rglob(".bench-create-*"))
    assert len(probes) == CREATE_PROBE_FILES
    assert {p.parent.name for p in probes} == {"STM"}
    assert all(p.stat().st_size == 0 for p in probes)
    applied_alone = tmp_path / "alone"  # the same pass without probes: as many notes indexed
    shutil.copytree(source, applied_alone, ignore=shutil.ignore_patterns(".vaultmem"))
    with Vault.open(applied_alone) as vault:
        vault.lifecycle(now=REFERENCE_TIME)
    assert result["indexed_notes"] == len(_notes(applied_alone))  # probes are not notes


def test_apply_row_gives_the_median_and_the_spread_of_its_runs() -> None:
    from benchmarks.run import apply_figures

    result = {
        "seconds": 3.0, "all_seconds": [2.5, 3.0, 4.0], "moves": 6000,
        "moves_per_second": 2000.0, "cpu_seconds": 4.0, "kernel_seconds": 1.0,
        "applied": {"seal": 6000}, "renames_per_second": 40000.0, "creates_per_second": 80000.0,
        "reindexed_paths": 12000, "reindex_seconds": 0.3, "indexed_notes": 12000,
    }
    row = apply_figures(result)[0]
    assert row.value.startswith("2,000 moves/s (median of 3 runs, 1,500–2,400; 6,000 in 3.0")
    assert "creating an empty file 80,000/s just before" in row.baseline
    assert row.ok is True
    slow = apply_figures({**result, "moves_per_second": 1999.0, "all_seconds": [3.0]})[0]
    assert "median" not in slow.value and slow.ok is False
    ordered = apply_figures({**result, "in_order": [
        {"seconds": 4.0, "creates_per_second": 3000.0},
        {"seconds": 2.5, "creates_per_second": 90000.0},
        {"seconds": 3.0, "creates_per_second": 80000.0},
    ]})[0]
    assert (
        "creating an empty file 80,000/s (runs in order: 1,500 moves/s after 3,000/s, "
        "2,400 moves/s after 90,000/s, 2,000 moves/s after 80,000/s) just before"
    ) in ordered.baseline


def test_import_rows_give_the_keyword_target_and_the_embedding_rate_beside_it() -> None:
    from benchmarks.run import import_figures

    keywords = {
        "seconds": 2.0, "cpu_seconds": 2.5, "kernel_seconds": 0.5, "imported": 5_000,
        "per_second": 2_500.0, "fsync_writes_per_second": 4_000.0,
        "plain_writes_per_second": 36_000.0, "embeddings": False, "provider": None,
    }
    embedded = {**keywords, "seconds": 10.0, "imported": 500, "per_second": 50.0,
                "embeddings": True, "provider": "local:model"}
    plain, vectors = import_figures(keywords, embedded)
    assert plain.name == "import (new vault, keywords only)" and plain.ok is False
    assert plain.target == "≥ 3,000 memories/s"
    assert vectors.name == "import, embeddings extra installed (local:model)"
    assert vectors.value.startswith("50 memories/s (500 embedded in batches, in 10.0 s")
    assert vectors.baseline == "keywords only 2,500 memories/s (50.0x as fast)"
    assert vectors.ok is None  # no target: the default install has no embedding provider
    (_, missing) = import_figures(keywords, {**embedded, "provider": None})
    assert missing.value == "no embedding provider installed: not measured"
    assert len(import_figures(keywords)) == 1


def test_index_identity_digests_the_same_index_alike_and_sees_a_changed_note(
    tmp_path: Path,
) -> None:
    from benchmarks.index_identity import cold_index

    source = REPO / "tests" / "vaults" / "kepano-obsidian"
    first = cold_index(source, in_process=True)
    assert first == cold_index(source, in_process=False)  # (103 notes: read here either way)
    assert first["notes"][0] == 103 and first["fts_vocab_instance"][0] > 0
    copy = tmp_path / "kepano-obsidian"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns(".vaultmem"))
    note = next(copy.rglob("*.md"))
    note.write_text(note.read_text(encoding="utf-8") + "\nanother word\n", encoding="utf-8")
    changed = cold_index(copy, in_process=True)
    assert changed["notes"][1] != first["notes"][1]
    assert changed["fts_vocab_instance"][1] != first["fts_vocab_instance"][1]
    assert changed["schema"] == first["schema"] and changed["links"] == first["links"]


def test_cold_floor_measures_each_part_without_writing_the_vault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from benchmarks.cold_floor import floor, main

    source = REPO / "tests" / "vaults" / "kepano-obsidian"
    before = sorted(p.relative_to(source).as_posix() for p in source.rglob("*"))
    result = floor(source, repeat=1, cores=2)
    assert result["notes"] == 103
    assert result["raw_read_s"] > 0 and result["parse_s"] > 0 and result["fts_s"] > 0
    assert result["floor_s"] == max(
        result["writer_s"], (result["parse_s"] + result["writer_s"]) / 2
    )
    assert result["floor_ratio"] == result["floor_s"] / result["raw_read_s"]
    assert sorted(p.relative_to(source).as_posix() for p in source.rglob("*")) == before
    assert main([str(source), "--repeat", "1", "--cores", "1"]) == 0
    assert "kepano-obsidian: 103 notes | raw read" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty"), "--repeat", "1"]) == 1
    assert "no notes" in capsys.readouterr().err
