"""What ships in the wheel never cites the specification or the seed design documents.

Everything under ``vaultmem/`` ships; the project specification and the seed documents (the
public designs of Mnemon, Mnemex, Engram and engram the specification folds together) do not.
Shipped text cites ``docs/user-guide.md`` instead, and names a formula's origin by the system.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from vaultmem.cli.reference import cli_reference

PACKAGE = Path(__file__).resolve().parent.parent / "vaultmem"
SHIPPED_SUFFIXES = {".py", ".toml", ".md", ".json", ".base"}

CITATION = re.compile(
    r"""
      \bspec(?:ification)?(?:'s)?
        (?: \s+ sections?\b                # spec section 4, spec sections 1 and 4
          | \s* §                          # spec §3.1
          | \s+ \d                         # spec 4, Spec 3.1, spec 4 rule 2
          | \s* \)                         # (… spec)
          | \s+ \( \s* sections?\b         # the spec (sections 1, 3)
          | \s+ rules?\b                   # the spec rule
        )
    | \( \s* spec(?:ification)?\b          # (spec 6), (spec)
    | \bthe\s+spec(?:ification)?\b         # as the spec writes it, of the spec
    | \bspec(?:ification)?'s\b             # the spec's defaults
    | \bseeds?\s+0\d\d\b                   # seed 000, seeds 001/002, Seed 004's
    | \bthe\s+seeds?'                      # the seed's numbers, the seeds' access_count
    | \bdesign\s+doc(?:ument)?s?\b         # the design documents
    """,
    re.IGNORECASE | re.VERBOSE,
)


def _shipped_files() -> list[Path]:
    """Every text file of the package; follows ``template/`` (a symlink to ``vault-template/``)."""
    return sorted(
        Path(folder, name)
        for folder, _dirs, names in os.walk(PACKAGE, followlinks=True)
        for name in names
        if Path(name).suffix in SHIPPED_SUFFIXES
    )


def _citations(text: str) -> list[tuple[int, str]]:
    return [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if CITATION.search(line)
    ]


@pytest.mark.parametrize(
    "line",
    [
        '"""Recall (spec section 7): notes ranked for a query."""',
        "Checks (spec sections 1, 2, 5, 6): the index",
        "the decay score (spec §3.1)",
        "reinforce the returned memories, spec 3.4",
        "Spec 4, rule 2 (seeds 001, 003, 004): STM",
        "memories from the index as columns (spec 3, style rule 5)",
        "a frontmatter link (spec 6), so",
        "the rule of the specification)",
        "Rate of l2 retention, as the spec writes it",
        "``Settings()`` is the spec's defaults.",
        "``rule`` names the spec rule;",
        "the defaults are the numbers of the spec (sections 1, 3, 4)",
        "Mnemon's graph traversal (seed 000).",
        "Seed 001's example, blend 0.3",
        "(seeds 001/002)",
        "the seed's λ were set for a 3-day half-life",
        "The seeds' ``access_count``",
        "the design documents say so",
    ],
)
def test_the_pattern_finds_citations(line: str) -> None:
    assert CITATION.search(line), line


@pytest.mark.parametrize(
    "line",
    [
        "spec = importlib.util.find_spec(name)",
        "if spec is None or spec.loader is None:",
        "    seeds = strong_hits(relevance, paths)",
        "def graph_signal(relevance, seeds, sources, targets):",
        '"""Mask of the graph seeds: the GRAPH_SEEDS most relevant."""',
        "rng = np.random.default_rng(seed)",
        "vectors, dims: int = PREFILTER_DIMS, sample: int = 4096, seed: int = 0",
        "Only seeds (strong hits) lend; the seed that gave the maximum",
        "a random projection with seed 0 is reproducible",
        "# Expire: below this `confidence` (0–1) a memory is speculative.",
        "the speculative memories and their specific tags",
        'power law decay (after Mnemex, docs/user-guide.md, "Scores")',
    ],
)
def test_the_pattern_leaves_ordinary_words(line: str) -> None:
    assert not CITATION.search(line), line


def test_the_walk_covers_code_template_and_help_texts() -> None:
    files = {p.relative_to(PACKAGE).as_posix() for p in _shipped_files()}
    assert "cli/lifecycle_commands.py" in files
    assert "template/vaultmem.toml" in files
    assert "template/.obsidian/types.json" in files
    assert "template/Memories.base" in files
    assert "template/Memory dashboard.md" in files
    assert "core/scoring/decay.py" in files


def test_nothing_shipped_cites_the_spec_or_the_seeds() -> None:
    found = [
        f"vaultmem/{path.relative_to(PACKAGE).as_posix()}:{number}: {line}"
        for path in _shipped_files()
        for number, line in _citations(path.read_text(encoding="utf-8"))
    ]
    assert not found, (
        "shipped files cite documents that do not ship (cite docs/user-guide.md or the "
        "published system instead):\n" + "\n".join(found)
    )


def test_no_help_text_cites_the_spec_or_the_seeds() -> None:
    """The rendered ``--help`` of every command (as ``docs/cli.md`` shows it)."""
    found = _citations(cli_reference())
    assert not found, "\n".join(f"--help line {number}: {line}" for number, line in found)
