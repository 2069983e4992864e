"""``vaultmem consolidate``: clusters of near-duplicate memories, dry run, apply, undo.

Vectors come from the real packaged model; the vault is built in tmp_path.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_embeddings import make_vault, snapshot

from vaultmem.cli import main
from vaultmem.core.lifecycle.clusters import Band, cohesion, fact_tokens, same_facts, single_linkage
from vaultmem.core.recall.quantisation import unit
from vaultmem.services.semantic.embeddings import embed_notes

NOW = dt.datetime(2026, 11, 20, 12, 0, 0, tzinfo=dt.UTC)
DUPLICATES = {
    "VPN before deploy": "The deploy script needs the VPN to be connected first.",
    "Deploy needs VPN": "The deploy script needs the VPN connected first!",
    "VPN first for deploys": "The deploy script needs a connected VPN first.",
}
OTHERS = (
    "Allergic to peanuts",
    "Drinks green tea every morning",
    "Prefers dark themes in every editor",
)


def test_single_linkage_chains_and_cohesion_bands() -> None:
    e = np.eye(4, dtype=np.float32)
    a, b = e[0], unit(e[0] + 0.5 * e[1])
    c = unit(e[0] + 1.2 * e[1])
    vectors = np.stack([a, b, c, e[3]])
    # a~b and b~c link, a and c alone would not: single linkage chains them; d stays alone
    assert float(a @ c) < 0.83 < min(float(a @ b), float(b @ c))
    assert single_linkage(vectors, 0.83) == [[0, 1, 2]]
    assert cohesion(vectors[:3]) == pytest.approx((a @ b + a @ c + b @ c) / 3)
    assert cohesion(vectors[:1]) == 1.0
    band = Band(0.9, 0.75)
    assert (band.action(0.95), band.action(0.8), band.action(0.5)) == ("merge", "review", "keep")


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    vault = make_vault(root)
    for title, text in DUPLICATES.items():
        vault.remember(text, title=title, now=NOW, link=False)
    for text in OTHERS:
        vault.remember(text, now=NOW, link=False)
    embed_notes(vault, now=NOW)
    vault.close()
    return root


def test_dry_run_lists_clusters_and_changes_no_byte(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    before = {p: b for p, b in snapshot(root).items()}
    before_all = sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if ".vaultmem" not in p.parts
    )
    result = CliRunner().invoke(
        main,
        [
            "consolidate",
            "--dry-run",
            "--json",
            "--vault",
            str(root),
            "--now",
            "2026-11-20T12:00:00",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["dry_run"] is True
    merges = [c for c in report["clusters"] if c["action"] == "merge"]
    assert len(merges) == 1
    assert sorted(merges[0]["members"]) == sorted(f"STM/{t}.md" for t in DUPLICATES)
    assert merges[0]["cohesion"] >= 0.9
    assert snapshot(root) == before
    assert (
        sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".vaultmem" not in p.parts)
        == before_all
    )
    assert not list((root / ".vaultmem").glob("journal/*.jsonl"))


def test_apply_merges_without_deleting_and_undo_restores_every_byte(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    before = snapshot(root)
    runner = CliRunner()
    result = runner.invoke(
        main, ["consolidate", "--vault", str(root), "--now", "2026-11-20T12:00:00"]
    )
    assert result.exit_code == 0, result.output
    assert "merged 1 cluster" in result.output
    after = snapshot(root)
    new = sorted(set(after) - set(before))
    assert len(new) == 1 and new[0].startswith("STM/") and "(consolidated)" in new[0]
    assert set(before) <= set(after)  # nothing deleted or moved
    merged = after[new[0]].decode()
    assert "source: consolidation" in merged and "consolidated_from:" in merged
    for title in DUPLICATES:
        assert f'"[[{title}]]"' in merged
        member = after[f"STM/{title}.md"].decode()
        assert "status: superseded" in member
        assert f'superseded_by: "[[{Path(new[0]).stem}]]"' in member
    for text in OTHERS:  # untouched
        assert after[f"STM/{text}.md"] == before[f"STM/{text}.md"]
    # a second run finds nothing left to merge (superseded memories are not candidates)
    again = json.loads(
        runner.invoke(main, ["consolidate", "--dry-run", "--json", "--vault", str(root)]).output
    )
    assert all(c["action"] != "merge" for c in again["clusters"])
    undo = runner.invoke(main, ["undo", "--vault", str(root)])
    assert undo.exit_code == 0, undo.output
    assert snapshot(root) == before


def test_consolidate_needs_vectors(tmp_path: Path) -> None:
    root = tmp_path / "v"
    vault = make_vault(root)
    vault.remember("Allergic to peanuts", now=NOW, link=False)
    vault.close()
    result = CliRunner().invoke(main, ["consolidate", "--dry-run", "--vault", str(root)])
    assert result.exit_code == 1
    assert "vaultmem embed --all" in result.output
    none = tmp_path / "none"
    make_vault(none, "none").close()
    result = CliRunner().invoke(main, ["consolidate", "--dry-run", "--vault", str(none)])
    assert result.exit_code == 1 and "pip install 'vaultmem[embeddings]'" in result.output


def test_fact_tokens_tell_dated_events_apart() -> None:
    assert fact_tokens("Meeting notes day 12: sprint board") == {"12"}
    assert fact_tokens("Paid 40.50 on Monday, 3 March") == {"40.50", "3", "monday", "march"}
    assert fact_tokens("The deploy script needs the VPN; you may go") == frozenset()
    assert fact_tokens("day 07") == fact_tokens("day 7")
    vectors = np.stack([unit(np.ones(4, dtype=np.float32))] * 3)
    facts = [fact_tokens("day 12"), fact_tokens("day 16"), fact_tokens("day 12 again")]
    # identical vectors, but day 16 is another event: it links to neither
    assert single_linkage(vectors, 0.83, same_facts(facts)) == [[0, 2]]


def test_distinct_dated_events_are_not_merged_and_a_merge_keeps_time_order(
    tmp_path: Path,
) -> None:
    vault = make_vault(tmp_path / "v")
    days = (12, 16, 20, 24, 28, 4, 8)  # written out of order, as the issue saw them merged
    for n in days:
        vault.remember(
            f"Meeting notes day {n}: the team went through the sprint board, open tickets and "
            "the release checklist.", title=f"Meeting notes day {n}", now=NOW, link=False,
            created=f"2026-10-{n:02d}T10:00:00")
    told = {"Deploy needs VPN": "2026-11-03T09:00:00", "VPN first for deploys":
            "2026-11-01T09:00:00", "VPN before deploy": "2026-11-02T09:00:00"}
    for title, created in told.items():
        vault.remember(DUPLICATES[title], title=title, now=NOW, link=False, created=created)
    embed_notes(vault, now=NOW)
    vault.close()
    result = CliRunner().invoke(main, ["consolidate", "--dry-run", "--json", "--vault",
                                       str(tmp_path / "v"), "--now", "2026-11-20T12:00:00"])
    assert result.exit_code == 0, result.output
    clusters = json.loads(result.output)["clusters"]
    for cluster in clusters:  # no cluster holds two different meetings
        assert sum("Meeting notes" in p for p in cluster["members"]) <= 1, cluster
    merges = [c for c in clusters if c["action"] == "merge"]
    assert len(merges) == 1 and len(merges[0]["members"]) == 3
    applied = CliRunner().invoke(main, ["consolidate", "--vault", str(tmp_path / "v"),
                                        "--now", "2026-11-20T12:00:00"])
    assert applied.exit_code == 0, applied.output
    merged = next((tmp_path / "v" / "STM").glob("*(consolidated).md")).read_text("utf-8")
    body = merged.split("---\n", 2)[2]
    # the members' bodies in the order they were told (created), not by length or title
    order = sorted(told, key=told.__getitem__)
    positions = [body.index(DUPLICATES[title].rstrip("!.")) for title in order]
    assert positions == sorted(positions), body
