"""``python -m benchmarks.conversation_eval [--json] [--seed N] [--embeddings]``: recall over
conversations.

Generates the conversations of :mod:`benchmarks.conversation_eval.generate` (deterministic),
imports them turn by turn into a new vault (``vaultmem import`` with a ``session`` key, so
consecutive turns link with ``previous``), and asks every question at the time of the last turn
in three configurations: keyword-only (BM25), today's fusion (decay, graph, review blend; no
episode context) and fusion with episode context (the settings' defaults). With ``--embeddings``
every turn is also embedded with the packaged local model (``vaultmem[embeddings]``), the three
run with the vector weight 0, and two more are added: vectors only, and hybrid (the settings'
defaults: fusion, episode context and vectors, as shipped). Prints recall@1/5/10/25 (share of
questions with an evidence turn in the top k) and MRR, overall and by how the fact was told.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchmarks.conversation_eval.generate import Question, Turn, generate, jsonl_records
from vaultmem import Vault
from vaultmem.services.semantic.embeddings import embed_notes

CUTOFFS = (1, 5, 10, 25)
CONFIGS: dict[str, Mapping[str, float] | None] = {
    "keyword": {"decay": 0.0, "graph": 0.0, "review_blend": 0.0, "episode": 0.0},
    "fusion": {"episode": 0.0},
    "fusion+episode": None,
}
"""Configuration name → recall weight overrides (``None`` = the settings' defaults)."""

EMBEDDING_CONFIGS: dict[str, Mapping[str, float] | None] = {
    "keyword": {"decay": 0.0, "graph": 0.0, "review_blend": 0.0, "episode": 0.0, "vector": 0.0},
    "fusion": {"episode": 0.0, "vector": 0.0},
    "fusion+episode": {"vector": 0.0},
    "vectors": {
        "relevance": 0.0,
        "decay": 0.0,
        "graph": 0.0,
        "review_blend": 0.0,
        "episode": 0.0,
        "vector": 1.0,
    },
    "hybrid": None,
}
"""With ``--embeddings``: the three above without vectors, vectors only, and hybrid (defaults)."""


def _use_local_model(root: Path) -> None:
    """Switch the vault at ``root`` (closed) to the packaged local model."""
    settings = root / "vaultmem.toml"
    text = settings.read_text(encoding="utf-8")
    settings.write_text(
        text.replace('provider = "auto"', 'provider = "local"', 1), encoding="utf-8"
    )


def _embed(
    vault: Vault, root: Path, *, now: dt.datetime, cache: Path | None
) -> tuple[Vault, float]:
    """Embed every turn (reusing the vectors kept in ``cache``); the reopened vault and the
    seconds spent embedding. Vectors are keyed by the text embedded, so a cache is only a
    shortcut: a turn whose text changed is embedded again."""
    vault.close()
    _use_local_model(root)
    cached = cache / "conversations.vectors.db" if cache is not None else None
    if cached is not None and cached.is_file():
        shutil.copyfile(cached, root / ".vaultmem" / "vectors.db")
    vault = Vault.open(root)
    start = time.perf_counter()
    report = embed_notes(vault, now=now)
    seconds = time.perf_counter() - start
    if cached is not None and report.embedded:
        vault.close()  # checkpoints the WAL into the file
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / ".vaultmem" / "vectors.db", cached)
        vault = Vault.open(root)
    return vault, seconds


def _select(
    turns: list[Turn], questions: list[Question], conversations: int | None
) -> tuple[list[Turn], list[Question]]:
    """Only the first ``conversations`` conversations (all when ``None``)."""
    if conversations is None:
        return turns, questions
    keep = sorted({t.conversation for t in turns})[:conversations]
    return (
        [t for t in turns if t.conversation in keep],
        [q for q in questions if q.conversation in keep],
    )


def _import(vault: Vault, turns: Sequence[Turn], now: dt.datetime) -> dict[str, str]:
    """Import the turns; turn id → path of the memory holding it.

    A turn whose text a speaker already said ("Talk soon!") is not written again (import's
    content dedup): it maps to the memory it repeats, which says the same. Raises RuntimeError
    when a line is refused or a memory does not hold its turn's text.
    """
    lines = [json.dumps(r) for r in jsonl_records(list(turns))]
    report = vault.import_jsonl(lines, now=now)
    repeats = dict(report.duplicates)  # line number (from 1) → the memory it repeats
    if report.errors or len(report.imported) + len(repeats) != len(turns):
        raise RuntimeError(f"import failed: {report.errors[:3]}")
    written = iter(report.imported)  # the turns are in time order: import keeps their order
    path_of = {t.id: repeats.get(n) or next(written) for n, t in enumerate(turns, 1)}
    for turn in turns:
        text = (vault.root / path_of[turn.id]).read_text(encoding="utf-8")
        if f"{turn.speaker}: {turn.text}".casefold() not in text.casefold():
            raise RuntimeError(f"turn {turn.id} is not in {path_of[turn.id]}")
    return path_of


def run(
    seed: int = 11,
    *,
    embeddings: bool = False,
    vector_cache: Path | None = None,
    conversations: int | None = None,
) -> dict[str, object]:
    """Build the vault, ask every question in every configuration; results as a dict.

    ``embeddings``: embed the turns with the packaged model and add the vector configurations
    (raises :class:`~vaultmem.errors.EmbeddingUnavailableError` without ``vaultmem[embeddings]``);
    ``vector_cache``: a folder keeping the turns' vectors between runs; ``conversations``: only
    the first N conversations (a quick run).
    """
    turns, questions = _select(*generate(seed), conversations)
    configs = EMBEDDING_CONFIGS if embeddings else CONFIGS
    now = max(t.time for t in turns)
    ranks: dict[str, list[int | None]] = {name: [] for name in configs}
    seconds: dict[str, float] = dict.fromkeys(configs, 0.0)
    embed_seconds = None
    with tempfile.TemporaryDirectory(prefix="conversation-eval-") as tmp:
        root = Path(tmp) / "vault"
        vault, _ = Vault.init(root)
        try:
            path_of = _import(vault, turns, now)
            vault.sync()
            if embeddings:
                vault, embed_seconds = _embed(vault, root, now=now, cache=vector_cache)
            for question in questions:
                answers = {path_of[e] for e in question.evidence}
                for name, weights in configs.items():
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
        finally:
            vault.close()
    return {
        "seed": seed,
        "embeddings": embeddings,
        "embed_seconds": embed_seconds,
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
    """recall@k for each of :data:`CUTOFFS` and the mean reciprocal rank (a miss counts 0)."""
    n = max(1, len(ranks))
    out = {f"R@{k}": sum(1 for r in ranks if r is not None and r <= k) / n for k in CUTOFFS}
    out["MRR"] = sum(1.0 / r for r in ranks if r is not None) / n
    return out


def format_report(result: Mapping[str, object]) -> str:
    """The results as a table: one row per scope and configuration."""
    kinds = result["kinds"]
    assert isinstance(kinds, dict)
    lines = [
        f"conversation eval (seed {result['seed']}): {result['conversations']} conversations, "
        f"{result['sessions']} sessions, {result['turns']} turns, {result['questions']} questions "
        f"({', '.join(f'{k} {v}' for k, v in kinds.items())})",
        "",
        f"{'scope':<9} {'config':<15} {'n':>4} "
        + " ".join(f"{c:>6}" for c in [*(f"R@{k}" for k in CUTOFFS), "MRR"]),
        f"{'-' * 9} {'-' * 15} {'-' * 4} " + " ".join("-" * 6 for _ in range(len(CUTOFFS) + 1)),
    ]
    recall = result["recall"]
    assert isinstance(recall, dict)
    for scope, by_config in recall.items():
        n = result["questions"] if scope == "all" else kinds[scope]
        for name, values in by_config.items():
            cells = " ".join(f"{values[c]:>6.3f}" for c in [*(f"R@{k}" for k in CUTOFFS), "MRR"])
            lines.append(f"{scope:<9} {name:<15} {n:>4} {cells}")
        lines.append("")
    ms = result["ms_per_query"]
    assert isinstance(ms, dict)
    lines.append("ms/query: " + ", ".join(f"{k} {v:.1f}" for k, v in ms.items()))
    if result.get("embed_seconds") is not None:
        lines.append(f"embedding {result['turns']} turns: {result['embed_seconds']:.1f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.conversation_eval",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--seed", type=int, default=11, help="data seed (default 11)")
    parser.add_argument(
        "--embeddings",
        action="store_true",
        help="embed every turn with the packaged local model (vaultmem"
        "[embeddings]) and add the vectors-only and hybrid configurations",
    )
    parser.add_argument(
        "--vector-cache",
        type=Path,
        metavar="DIR",
        help="with --embeddings: reuse (and update) the vectors of earlier runs kept in DIR",
    )
    parser.add_argument(
        "--conversations",
        type=int,
        metavar="N",
        help="only the first N conversations (a quick run)",
    )
    args = parser.parse_args(argv)
    result = run(
        args.seed,
        embeddings=args.embeddings,
        vector_cache=args.vector_cache,
        conversations=args.conversations,
    )
    print(json.dumps(result, indent=2) if args.json else format_report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
