"""``python -m benchmarks.conversation_eval [--json] [--seed N]``: recall over conversations.

Generates the conversations of :mod:`benchmarks.conversation_eval.generate` (deterministic),
imports them turn by turn into a new vault (``vaultmem import`` with a ``session`` key, so
consecutive turns link with ``previous``), and asks every question at the time of the last turn
in three configurations: keyword-only (BM25), today's fusion (decay, graph, review blend; no
episode context) and fusion with episode context (the settings' defaults). Prints recall@5/10/25
(share of questions with an evidence turn in the top k), overall and by how the fact was told.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchmarks.conversation_eval.generate import Question, generate, jsonl_records
from vaultmem import Vault

CUTOFFS = (5, 10, 25)
CONFIGS: dict[str, Mapping[str, float] | None] = {
    "keyword": {"decay": 0.0, "graph": 0.0, "review_blend": 0.0, "episode": 0.0},
    "fusion": {"episode": 0.0},
    "fusion+episode": None,
}
"""Configuration name → recall weight overrides (``None`` = the settings' defaults)."""


def run(seed: int = 11) -> dict[str, object]:
    """Build the vault, ask every question in every configuration; results as a dict."""
    turns, questions = generate(seed)
    now = max(t.time for t in turns)
    ranks: dict[str, list[int | None]] = {name: [] for name in CONFIGS}
    seconds: dict[str, float] = dict.fromkeys(CONFIGS, 0.0)
    with tempfile.TemporaryDirectory(prefix="conversation-eval-") as tmp:
        vault, _ = Vault.init(Path(tmp) / "vault")
        with vault:
            lines = [json.dumps(r) for r in jsonl_records(turns)]
            report = vault.import_jsonl(lines, now=now)
            if report.errors or len(report.imported) != len(turns):
                raise RuntimeError(f"import failed: {report.errors[:3]}")
            path_of = {t.id: p for t, p in zip(turns, report.imported, strict=True)}
            vault.sync()
            for question in questions:
                answers = {path_of[e] for e in question.evidence}
                for name, weights in CONFIGS.items():
                    start = time.perf_counter()
                    hits = vault.recall(
                        question.query,
                        k=max(CUTOFFS),
                        now=now,
                        sync=False,
                        weights=None if weights is None else dict(weights),
                    )
                    seconds[name] += time.perf_counter() - start
                    rank = next((h.rank for h in hits if h.path in answers), None)
                    ranks[name].append(rank)
    return {
        "seed": seed,
        "conversations": len({t.conversation for t in turns}),
        "sessions": len({t.session for t in turns}),
        "turns": len(turns),
        "questions": len(questions),
        "kinds": {k: sum(1 for q in questions if q.kind == k) for k in _kinds(questions)},
        "ms_per_query": {n: 1000 * s / max(1, len(questions)) for n, s in seconds.items()},
        "recall": {
            scope: {
                name: _recall(
                    [
                        r
                        for r, q in zip(rs, questions, strict=True)
                        if scope == "all" or q.kind == scope
                    ]
                )
                for name, rs in ranks.items()
            }
            for scope in ["all", *_kinds(questions)]
        },
    }


def _kinds(questions: Sequence[Question]) -> list[str]:
    return sorted({q.kind for q in questions})


def _recall(ranks: Sequence[int | None]) -> dict[str, float]:
    n = max(1, len(ranks))
    return {f"R@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in CUTOFFS}


def format_report(result: Mapping[str, object]) -> str:
    """The results as a table: one row per scope and configuration."""
    kinds = result["kinds"]
    assert isinstance(kinds, dict)
    lines = [
        f"conversation eval (seed {result['seed']}): {result['conversations']} conversations, "
        f"{result['sessions']} sessions, {result['turns']} turns, {result['questions']} questions "
        f"({', '.join(f'{k} {v}' for k, v in kinds.items())})",
        "",
        f"{'scope':<9} {'config':<15} {'n':>4} " + " ".join(f"{f'R@{k}':>6}" for k in CUTOFFS),
        f"{'-' * 9} {'-' * 15} {'-' * 4} " + " ".join("-" * 6 for _ in CUTOFFS),
    ]
    recall = result["recall"]
    assert isinstance(recall, dict)
    for scope, by_config in recall.items():
        n = result["questions"] if scope == "all" else kinds[scope]
        for name, values in by_config.items():
            cells = " ".join(f"{values[f'R@{k}']:>6.3f}" for k in CUTOFFS)
            lines.append(f"{scope:<9} {name:<15} {n:>4} {cells}")
        lines.append("")
    ms = result["ms_per_query"]
    assert isinstance(ms, dict)
    lines.append("ms/query: " + ", ".join(f"{k} {v:.1f}" for k, v in ms.items()))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.conversation_eval",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--seed", type=int, default=11, help="data seed (default 11)")
    args = parser.parse_args(argv)
    result = run(args.seed)
    print(json.dumps(result, indent=2) if args.json else format_report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
