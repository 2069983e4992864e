"""``python -m benchmarks.locomo_eval [--json] [--no-embeddings] [--no-tuning]``: recall on real
long-term conversations (LoCoMo, the dev split of ``../shared/data/locomo-dev/``).

Each conversation is imported once into its own vault (:mod:`benchmarks.locomo_eval.data`, the
protocol of the data's README) and, with ``vaultmem[embeddings]``, embedded once; every question
is asked at the last session's date + 1 day with k = 50 in each configuration: keyword-only
(BM25), the default without vectors, vectors only, and the default hybrid. R@k is the share of a
question's evidence turns in the top k (a question without evidence counts 1), averaged over
questions, at k = 5, 10, 25, 50, overall and per category.

Cross-validation: leave one conversation out. The fusion weights (a small grid, :data:`GRID`:
vector weight, vector floor, episode share of the turn before a hit) are chosen on four
conversations by mean R@{5,10,25,50} and reported on the fifth; both the tuned (training) and
held-out figures are printed. The date lift is cross-validated the same way over the questions
that name a date (:data:`DATE_LIFTS`). Also printed: recall latency (ms per query,
p50/p95, the query embedded on first use) and the cost of storing vectors at lower precision.

Skips with a message (exit 0) when the data folder is absent.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks.locomo_eval.data import (
    CATEGORIES,
    Conversation,
    Question,
    build_vault,
    data_folder,
    load,
)
from vaultmem import Vault

CUTOFFS = (5, 10, 25, 50)
K = max(CUTOFFS)
OFF = {"decay": 0.0, "graph": 0.0, "review_blend": 0.0, "episode": 0.0}
CONFIGS: dict[str, dict[str, float] | None] = {
    "default hybrid": None,
    "keyword-only": {**OFF, "vector": 0.0},
    "default, no vectors": {"vector": 0.0},
    "vectors only": {**OFF, "relevance": 0.0, "vector": 1.0},
}
"""Configuration name → recall weight overrides (``None``: the settings' defaults). The hybrid
runs first: its latency includes embedding each query (later configurations reuse it)."""

GRID: list[dict[str, float]] = [
    {"vector": v, "vector_floor": f, "previous_share": p}
    for v in (0.5, 0.75, 1.0) for f in (0.15, 0.25) for p in (0.0, 0.5)
]
"""The points cross-validation chooses from (with the extra): the vector weight, ``[embeddings]
vector_floor`` and the episode share lent to the turn before a hit
(:data:`vaultmem.core.recall.recall_context.PREVIOUS_SHARE`)."""
GRID_NO_VECTORS: list[dict[str, float]] = [
    {"vector": 0.0, "episode": e, "previous_share": p} for e in (0.25, 0.5, 1.0) for p in (0.0, 0.5)
]
"""Without the extra."""
DATE_LIFTS = (0.0, 0.3, 0.5, 1.0, 1.5)
"""The date lifts (:data:`vaultmem.services.recall.recall.DATE_LIFT`) cross-validated over the
questions naming a date (the others do not change with it)."""
KNOBS = ("vector_floor", "previous_share", "date_lift")
"""Grid keys that are not recall weights."""

Scores = list[tuple[float, ...]]
"""Per question: R@k for each of :data:`CUTOFFS`."""


def embeddings_available() -> bool:
    """Whether the packaged local model can run (``vaultmem[embeddings]``)."""
    from vaultmem.services.semantic.embedding_providers import (
        EmbeddingUnavailableError,
        LocalOnnxProvider,
    )

    try:
        LocalOnnxProvider().check()
    except EmbeddingUnavailableError:
        return False
    return True


class CachedProvider:
    """A provider remembering the vectors of the texts it embedded (queries are asked once per
    configuration; the first ask pays the model)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.memo: dict[str, Any] = {}

    def check(self) -> None:
        self.inner.check()

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            for text, vector in zip(missing, self.inner.embed(missing), strict=True):
                self.memo[text] = vector
        return np.stack([self.memo[t] for t in texts])


def _share(hits: Sequence[str], evidence: Sequence[str], path_of: Mapping[str, str]) -> (
        tuple[float, ...]):
    if not evidence:
        return tuple(1.0 for _ in CUTOFFS)
    wanted = [path_of.get(e) for e in evidence]
    rank = {p: i for i, p in enumerate(hits, 1)}
    return tuple(
        sum(1 for w in wanted if w is not None and rank.get(w, K + 1) <= k) / len(wanted)
        for k in CUTOFFS
    )


@contextmanager
def _knobs(vault: Vault, point: Mapping[str, float]) -> Iterator[None]:
    """The grid point's settings that are not weights, in force for the block."""
    import vaultmem.core.recall.recall_context as context
    import vaultmem.services.recall.recall as recall

    shipped = vault.settings
    previous, lift = context.PREVIOUS_SHARE, recall.DATE_LIFT
    if "vector_floor" in point:
        vault.settings = replace(shipped, embeddings=shipped.embeddings._replace(
            vector_floor=point["vector_floor"]))
    context.PREVIOUS_SHARE = point.get("previous_share", previous)
    recall.DATE_LIFT = point.get("date_lift", lift)
    try:
        yield
    finally:
        vault.settings = shipped
        context.PREVIOUS_SHARE, recall.DATE_LIFT = previous, lift


def _ask(vault: Vault, conversation: Conversation, path_of: Mapping[str, str],
         point: Mapping[str, float] | None, timings: list[float] | None = None,
         questions: Sequence[Question] | None = None) -> Scores:
    out: Scores = []
    weights = None if point is None else {k: v for k, v in point.items() if k not in KNOBS}
    with _knobs(vault, point or {}):
        for q in conversation.questions if questions is None else questions:
            start = time.perf_counter()
            hits = vault.recall(q.question, k=K, now=conversation.now, sync=False,
                                weights=weights)
            if timings is not None:
                timings.append(time.perf_counter() - start)
            out.append(_share([h.path for h in hits], q.evidence, path_of))
    return out


def _names_a_date(question: Question, now: dt.datetime) -> bool:
    from vaultmem.core.recall.recall_dates import dates_asked

    return bool(dates_asked(question.question, now))


_QUERIES: dict[str, CachedProvider] = {}


def _reopened(vault_or_root: Vault | Path) -> Vault:
    """The vault (closed first when open) opened again, its provider remembering the vectors
    of the queries (one cache per provider and run)."""
    from vaultmem.services.semantic import embeddings as emb

    if isinstance(vault_or_root, Vault):
        root = vault_or_root.root
        vault_or_root.close()
    else:
        root = vault_or_root
    vault = Vault.open(root)
    state = emb._state(vault)  # noqa: SLF001 - the run's query cache
    if state.provider is not None:
        cached = _QUERIES.setdefault(state.provider.name, CachedProvider(state.provider))
        state.provider = cached
    return vault


def _requantised(vault: Vault, tier: str | None, now: dt.datetime | None = None) -> None:
    """Store every vector of the vault at ``tier``'s precision (``None``: each at the tier of
    its memory's retention at ``now``, as ``embed`` does)."""
    from vaultmem.services.semantic.embeddings import _tiers, provider, vector_store

    chosen = provider(vault)
    assert chosen is not None
    store = vector_store(vault)
    current = store.assignments(chosen.name)
    if tier is None:
        assert now is not None
        wanted = {current[p].key: t for p, t in _tiers(vault, now).items() if p in current}
    else:
        wanted = {a.key: tier for a in current.values()}
    store.retier(chosen.name, wanted)


def run(*, embeddings: bool, tuning: bool, precision: bool,
        vector_cache: Path | None = None) -> dict[str, Any]:
    """Every configuration (and the tuning grid) over every conversation; results as a dict.

    ``vector_cache``: a folder (outside the repository: the vectors derive from the data) that
    keeps each conversation's vectors between runs."""
    from vaultmem.services.semantic import embeddings as emb

    conversations = load()
    configs = dict(CONFIGS) if embeddings else {
        k: v for k, v in CONFIGS.items() if k in ("keyword-only", "default, no vectors")}
    grid = (GRID if embeddings else GRID_NO_VECTORS) if tuning else []
    scores: dict[str, Scores] = {name: [] for name in configs}
    grid_scores: list[Scores] = [[] for _ in grid]
    date_grid = [{"date_lift": lift} for lift in DATE_LIFTS] if tuning else []
    date_scores: list[Scores] = [[] for _ in date_grid]
    dated: list[Question] = []
    tiers = ("int8", "int4", "int2") if embeddings and precision else ()
    tier_scores: dict[str, Scores] = {
        t: [] for t in ("float32", *tiers, "tiers as shipped")}
    timings: dict[str, list[float]] = {name: [] for name in configs}
    questions: list[Question] = []
    started = time.perf_counter()
    embed_seconds = 0.0
    with tempfile.TemporaryDirectory(prefix="locomo-eval-") as tmp:
        for conversation in conversations:
            root = Path(tmp) / conversation.sample_id
            cached = (vector_cache / f"{conversation.sample_id}.vectors.db"
                      if vector_cache is not None else None)
            t0 = time.perf_counter()
            vault, path_of = build_vault(root, conversation, embeddings=embeddings,
                                         vectors=cached)  # import embeds (float32: all new)
            embed_seconds += time.perf_counter() - t0 if embeddings else 0.0
            try:
                if embeddings:
                    t0 = time.perf_counter()
                    shipped = vault.settings
                    vault.settings = replace(  # float32 first: every precision derives from it
                        shipped, embeddings=shipped.embeddings._replace(quantise=False))
                    report = emb.embed_notes(vault, now=conversation.now, sync=False)
                    vault.settings = shipped
                    embed_seconds += time.perf_counter() - t0
                    if cached is not None and report.embedded:
                        vault.close()  # checkpoints the WAL into the file
                        cached.parent.mkdir(parents=True, exist_ok=True)
                        shutil.copyfile(root / ".vaultmem" / "vectors.db", cached)
                        vault = Vault.open(root)
                    vault = _reopened(vault)
                questions += conversation.questions
                kept = root / ".vaultmem" / "float32.vectors.db"
                if tiers:
                    vault.close()
                    shutil.copyfile(root / ".vaultmem" / "vectors.db", kept)
                    vault = _reopened(root)
                if embeddings:  # as shipped: each vector at its tier's precision
                    _requantised(vault, None, conversation.now)
                for name, weights in configs.items():
                    scores[name] += _ask(vault, conversation, path_of, weights, timings[name])
                for i, weights in enumerate(grid):
                    grid_scores[i] += _ask(vault, conversation, path_of, weights)
                asked = [q for q in conversation.questions
                         if _names_a_date(q, conversation.now)]
                dated += asked
                for i, point in enumerate(date_grid):
                    date_scores[i] += _ask(vault, conversation, path_of, point, None, asked)
                if tiers:
                    tier_scores["tiers as shipped"] += scores["default hybrid"][-len(
                        conversation.questions):]
                    vault.close()
                    shutil.copyfile(kept, root / ".vaultmem" / "vectors.db")
                    vault = _reopened(root)
                    tier_scores["float32"] += _ask(vault, conversation, path_of, None)
                    for tier, stored in zip(tiers, ("warm", "cold", "archive"), strict=True):
                        _requantised(vault, stored)
                        tier_scores[tier] += _ask(vault, conversation, path_of, None)
            finally:
                vault.close()
    return {
        "conversations": [c.sample_id for c in conversations],
        "turns": sum(len(c.turns) for c in conversations),
        "questions": len(questions),
        "embeddings": embeddings,
        "seconds": time.perf_counter() - started,
        "embed_seconds": embed_seconds,
        "recall": {name: _table(s, questions) for name, s in scores.items()},
        "latency_ms": {name: _latency(t) for name, t in timings.items()},
        "cross_validation": _cross_validate(grid, grid_scores, questions) if grid else None,
        "date_lift": (_cross_validate(date_grid, date_scores, dated)
                      if date_grid and dated else None),
        "dated_questions": len(dated),
        "precision": {t: _mean(s) for t, s in tier_scores.items() if s} or None,
    }


def _mean(scores: Scores) -> list[float]:
    n = max(1, len(scores))
    return [100 * sum(s[j] for s in scores) / n for j in range(len(CUTOFFS))]


def _table(scores: Scores, questions: Sequence[Question]) -> dict[str, Any]:
    out: dict[str, Any] = {"all": _mean(scores)}
    for cat, name in CATEGORIES.items():
        out[name] = _mean([s for s, q in zip(scores, questions, strict=True) if q.category == cat])
    return out


def _latency(seconds: Sequence[float]) -> dict[str, float]:
    if not seconds:
        return {}
    ms = sorted(1000 * s for s in seconds)
    return {"p50": statistics.median(ms), "p95": ms[int(0.95 * (len(ms) - 1))]}


def _objective(scores: Scores) -> float:
    return sum(_mean(scores)) / len(CUTOFFS)


def _cross_validate(grid: Sequence[Mapping[str, float]], grid_scores: Sequence[Scores],
                    questions: Sequence[Question]) -> dict[str, Any]:
    """Leave one conversation out: choose the grid point on the others, report on it."""
    folds: list[dict[str, Any]] = []
    held_all: Scores = []
    tuned_all: list[list[float]] = []
    for held in sorted({q.conversation for q in questions}):
        train = [i for i, q in enumerate(questions) if q.conversation != held]
        test = [i for i, q in enumerate(questions) if q.conversation == held]
        best = max(range(len(grid)),
                   key=lambda g: (_objective([grid_scores[g][i] for i in train]), -g))
        held_scores = [grid_scores[best][i] for i in test]
        held_all += held_scores
        tuned = _mean([grid_scores[best][i] for i in train])
        tuned_all.append(tuned)
        folds.append({"held_out": held, "weights": dict(grid[best]), "tuned": tuned,
                      "held_out_recall": _mean(held_scores)})
    by_point = [{"weights": dict(w), "all": _mean(s)} for w, s in zip(grid, grid_scores,
                                                                       strict=True)]
    return {"folds": folds, "held_out": _mean(held_all),
            "tuned": [sum(t[j] for t in tuned_all) / len(tuned_all) for j in range(len(CUTOFFS))],
            "grid": by_point}


def _row(label: str, values: Sequence[float], width: int = 22) -> str:
    return f"{label:<{width}} " + " ".join(f"{v:>6.1f}" for v in values)


def format_report(result: Mapping[str, Any]) -> str:
    head = " ".join(f"{'R@' + str(k):>6}" for k in CUTOFFS)
    lines = [
        f"LoCoMo dev: {len(result['conversations'])} conversations "
        f"({', '.join(result['conversations'])}), {result['turns']} turns, "
        f"{result['questions']} questions; k = {K}; embeddings "
        f"{'on (packaged model)' if result['embeddings'] else 'not installed'}",
        "",
    ]
    for scope in ["all", *CATEGORIES.values()]:
        lines.append(f"{scope:<22} {head}")
        for name, table in result["recall"].items():
            lines.append(_row("  " + name, table[scope]))
        lines.append("")
    cv = result["cross_validation"]
    if cv:
        lines.append(f"cross-validation (leave one conversation out), grid of {len(cv['grid'])}:")
        lines.append(f"{'  held out':<22} {head}   weights chosen on the other four")
        for fold in cv["folds"]:
            w = ", ".join(f"{k} {v:g}" for k, v in fold["weights"].items())
            lines.append(_row(f"  {fold['held_out']} tuned", fold["tuned"]) + f"   {w}")
            lines.append(_row(f"  {fold['held_out']} held-out", fold["held_out_recall"]))
        lines.append(_row("  mean tuned", cv["tuned"]))
        lines.append(_row("  HELD-OUT (all)", cv["held_out"]))
        lines.append("")
        lines.append("grid (all questions):")
        for point in cv["grid"]:
            w = ", ".join(f"{k} {v:g}" for k, v in point["weights"].items())
            lines.append(_row(f"  {w}", point["all"], 30))
        lines.append("")
    dates = result.get("date_lift")
    if dates:
        lines.append(f"date lift over the {result['dated_questions']} questions naming a date "
                     "(leave one conversation out):")
        lines.append(f"{'  held out':<22} {head}   lift chosen on the other four")
        for fold in dates["folds"]:
            lift = fold["weights"]["date_lift"]
            lines.append(_row(f"  {fold['held_out']} held-out", fold["held_out_recall"])
                         + f"   date_lift {lift:g}")
        lines.append(_row("  HELD-OUT (dated)", dates["held_out"]))
        for point in dates["grid"]:
            lines.append(_row(f"  date_lift {point['weights']['date_lift']:g}", point["all"]))
        lines.append("")
    if result["precision"]:
        lines.append(f"vector precision, default hybrid {'':<3} {head}")
        for tier, values in result["precision"].items():
            lines.append(_row(f"  all {tier}", values))
        lines.append("")
    lines.append("recall latency (ms per query, in process, ~600 memories per vault):")
    for name, lat in result["latency_ms"].items():
        if lat:
            lines.append(f"  {name:<20} p50 {lat['p50']:6.1f}  p95 {lat['p95']:6.1f}")
    if result["embeddings"]:
        lines.append(f"importing and embedding {result['turns']} turns: "
                     f"{result['embed_seconds']:.1f} s (vectors reused from a cache are not "
                     "embedded again)")
    lines.append(f"total run: {result['seconds']:.0f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.locomo_eval", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--no-embeddings", action="store_true",
                        help="keywords only, even when vaultmem[embeddings] is installed")
    parser.add_argument("--no-tuning", action="store_true",
                        help="skip the cross-validated grid (a quicker run)")
    parser.add_argument("--no-precision", action="store_true",
                        help="skip measuring int8/int4/int2 vectors")
    parser.add_argument("--vector-cache", type=Path, metavar="DIR",
                        help="keep the turns' vectors in DIR between runs (outside the "
                        "repository: they derive from the data)")
    args = parser.parse_args(argv)
    folder = data_folder()
    if not (folder / "locomo-dev.json").is_file():
        print(f"locomo_eval: skipped: no LoCoMo dev data at {folder} "
              "(set VAULTMEM_LOCOMO to its folder)")
        return 0
    embeddings = not args.no_embeddings and embeddings_available()
    result = run(embeddings=embeddings, tuning=not args.no_tuning,
                 precision=not args.no_precision, vector_cache=args.vector_cache)
    print(json.dumps(result, indent=2) if args.json else format_report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
