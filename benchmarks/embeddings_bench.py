"""Embedding benchmark: throughput, vector storage by tier, hybrid recall latency.

    python -m benchmarks.embeddings_bench [--sizes 10000,100000] [--queries 200] [--notes 512]

Needs ``vaultmem[embeddings]`` (the packaged all-MiniLM-L6-v2 int8 ONNX model). Prints:

1. **Throughput** of the local provider in notes/s on this machine: generated memory notes
   (about 1 KB of body, cut at 256 word pieces) and one-line memories (``recall_eval``'s
   ``memories.jsonl``), batches of 32 sorted by length — beside the same run's tokenizer-only
   rate (the part of the work that is not the model).
2. **Storage** of vectors per 100,000 memories by tier (float32 / int8 / int4 / int2), measured
   as the growth of ``vectors.db`` when 10,000 random 384-d vectors are stored, × 10; and the
   blob size for 768-d (Ollama's nomic-embed-text).
3. **Hybrid recall latency** p50/p95 at each size: a generated vault (``benchmarks.
   generate_vault``), indexed, every note given a *random* unit vector (embedding 100,000 real
   notes takes far longer than the benchmark should; latency does not depend on the values),
   queries embedded for real by the model. Keyword-only recall on the same vault and queries is
   the baseline. The vectors are in memory (loaded once, as ``vaultmem watch`` or an assistant's
   long-running process keeps them).
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.generate_vault import REFERENCE_TIME, generate_vault
from benchmarks.scenarios import percentile
from vaultmem.core.notes.content_hash import embedding_key
from vaultmem.core.recall.quantisation import TIERS, stored_bytes, unit
from vaultmem.services.semantic.embedding_providers import MAX_TOKENS, LocalOnnxProvider
from vaultmem.store.vectors import Assignment, VectorStore

MEMORIES = Path(__file__).resolve().parent / "recall_eval" / "memories.jsonl"


def _batches(texts: Sequence[str], size: int = 32) -> list[list[str]]:
    ordered = sorted(texts, key=len)
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


def throughput(notes: int) -> dict[str, float]:
    """notes/s of the local model on generated notes and on one-line memories."""
    provider = LocalOnnxProvider("bundled")
    provider.embed(["warm up"])
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="embed-bench-") as tmp:
        generate_vault(Path(tmp), notes, 0, seed=3)
        long_texts = [
            p.read_text(encoding="utf-8").split("---\n", 2)[-1]
            for p in sorted(Path(tmp).rglob("*.md"))
        ][:notes]
    short_texts = [json.loads(line)["content"] for line in MEMORIES.read_text().splitlines()]
    for name, texts in (("notes_1kb", long_texts), ("one_line", short_texts)):
        tokenizer = provider._tokenizer  # noqa: SLF001 - the baseline is the tokenizer alone
        started = time.perf_counter()
        for batch in _batches(texts):
            tokenizer.encode_batch(batch)
        out[f"{name}_tokenize_per_s"] = len(texts) / (time.perf_counter() - started)
        raw = functools.partial(_raw_embed, _raw_session(provider), tokenizer)
        for key, embed in (("", provider.embed), ("_raw", raw)):
            embed(["warm up"])
            started = time.perf_counter()
            for batch in _batches(texts):
                embed(batch)
            out[f"{name}{key}_per_s"] = len(texts) / (time.perf_counter() - started)
        out[f"{name}_count"] = len(texts)
    return out


def _raw_session(provider: LocalOnnxProvider) -> Any:
    """The same model file in a plain ``onnxruntime.InferenceSession`` (default options): the
    baseline ``vaultmem embed`` is held to (≥ 0.95 of its rate)."""
    import onnxruntime

    onnx_path, _ = provider._files()  # noqa: SLF001 - the very file vaultmem loads
    return onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])


def _raw_embed(session: Any, tokenizer: Any, texts: Sequence[str]) -> Any:
    """Tokenise, run, mean-pool and normalise as anyone would with onnxruntime directly."""
    import numpy as np

    encodings = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    names = {i.name for i in session.get_inputs()}
    feed = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in names:
        feed["token_type_ids"] = np.zeros_like(ids)
    states = session.run(None, feed)[0]
    weights = mask[..., None].astype(np.float32)
    pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def storage() -> dict[str, dict[str, float]]:
    """Bytes per 100,000 vectors by tier: measured file growth (384-d) and blob sizes."""
    rng = np.random.default_rng(5)
    out: dict[str, dict[str, float]] = {}
    for tier in TIERS:
        with tempfile.TemporaryDirectory(prefix="vector-store-") as tmp:
            store = VectorStore.open(Path(tmp))
            empty = store.path.stat().st_size
            vectors = unit(rng.normal(size=(10_000, 384)).astype(np.float32))
            items = [(f"{tier}-{i}", v) for i, v in enumerate(vectors)]
            store.put("bench", items, tier=tier)
            store.assign(
                [Assignment(f"n{i}.md", "h", key, "bench") for i, (key, _) in enumerate(items)]
            )
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size = store.path.stat().st_size - empty
            store.close()
        out[tier] = {
            "file_mb_per_100k": size * 10 / 1e6,
            "blob_mb_per_100k_384d": stored_bytes(384, tier) * 1e5 / 1e6,
            "blob_mb_per_100k_768d": stored_bytes(768, tier) * 1e5 / 1e6,
        }
    return out


def _enable_local(root: Path) -> None:
    settings = root / "vaultmem.toml"
    text = settings.read_text(encoding="utf-8")
    if "[embeddings]" in text:
        text = text.replace('provider = "auto"', 'provider = "local"', 1)
    else:
        text += '\n[embeddings]\nprovider = "local"\n'
    settings.write_text(text, encoding="utf-8")


def latency(size: int, queries: int, workdir: Path) -> dict[str, float]:
    """Keyword-only and hybrid recall p50/p95 (ms) on a generated vault of ``size`` memories."""
    from vaultmem.services.semantic.embeddings import vector_store
    from vaultmem.services.vault import Vault

    root = workdir / f"vault-{size}"
    if not root.exists():
        generate_vault(root, size)
    _enable_local(root)
    vault = Vault.open(root)
    started = time.perf_counter()
    vault.sync()
    index_seconds = time.perf_counter() - started
    store = vector_store(vault)
    provider = LocalOnnxProvider("bundled")
    paths = vault.index.all_paths()
    if len(store.assignments(provider.name)) != len(paths):
        rng = np.random.default_rng(7)
        for start in range(0, len(paths), 10_000):
            chunk = paths[start : start + 10_000]
            vectors = unit(rng.normal(size=(len(chunk), 384)).astype(np.float32))
            keys = [embedding_key(provider.name, p) for p in chunk]
            store.put(provider.name, list(zip(keys, vectors, strict=True)))
            store.assign(
                [
                    Assignment(p, "synthetic", k, provider.name)
                    for p, k in zip(chunk, keys, strict=True)
                ]
            )
    started = time.perf_counter()
    store.matrix(provider.name)
    load_seconds = time.perf_counter() - started
    rng2 = random.Random(11)
    rows = vault.index.conn.execute(
        "SELECT title, substr(body, 1, 400) FROM notes_fts WHERE rowid IN "
        "(SELECT nid FROM notes ORDER BY nid LIMIT 2000)"
    ).fetchall()
    words = [w for title, body in rows for w in f"{title} {body}".split() if w.isalpha()]
    texts = [" ".join(rng2.sample(words, rng2.choice((1, 2, 3)))) for _ in range(queries)]
    out: dict[str, float] = {
        "notes": len(paths),
        "index_s": index_seconds,
        "vectors_load_s": load_seconds,
    }
    configs = {"keyword": {"vector": 0.0}, "hybrid": None}
    for name, weights in configs.items():
        for text in texts[:10]:
            vault.recall(text, k=10, now=REFERENCE_TIME, sync=False, weights=weights)
        times = []
        for text in texts:
            started = time.perf_counter()
            vault.recall(text, k=10, now=REFERENCE_TIME, sync=False, weights=weights)
            times.append((time.perf_counter() - started) * 1000)
        out[f"{name}_p50_ms"] = statistics.median(times)
        out[f"{name}_p95_ms"] = percentile(times, 95)
    embed_times = []
    for text in texts:
        started = time.perf_counter()
        provider.embed([text])
        embed_times.append((time.perf_counter() - started) * 1000)
    out["query_embed_p50_ms"] = statistics.median(embed_times)
    matrix = store.matrix(provider.name).vectors
    query = matrix[0]
    dot_times = []
    for _ in range(50):
        started = time.perf_counter()
        matrix @ query
        dot_times.append((time.perf_counter() - started) * 1000)
    out["cosines_all_p50_ms"] = statistics.median(dot_times)
    vault.close()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.embeddings_bench", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--sizes",
        default="10000,100000",
        help="memory counts of the generated vaults (default 10000,100000)",
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--notes", type=int, default=512, help="notes for the throughput run")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=None,
        help="keep the generated vaults here (default: a temporary folder)",
    )
    args = parser.parse_args(argv)
    print(f"local model: all-MiniLM-L6-v2 int8 ONNX, {MAX_TOKENS} word pieces max, batch 32")
    rates = throughput(args.notes)
    print("\nembedding throughput (notes/s; baselines: raw onnxruntime on the same model file "
          "and texts, and the tokenizer alone)")
    for name in ("notes_1kb", "one_line"):
        print(
            f"  {name:<10} vaultmem {rates[name + '_per_s']:8.1f}   raw onnxruntime "
            f"{rates[name + '_raw_per_s']:8.1f}   ratio "
            f"{rates[name + '_per_s'] / rates[name + '_raw_per_s']:5.2f}   "
            f"(tokenizer alone {rates[name + '_tokenize_per_s']:9.0f}, "
            f"{int(rates[name + '_count'])} notes)"
        )
    print("\nvector storage per 100,000 memories")
    print(
        f"  {'tier':<8} {'bits':>4} {'vectors.db MB':>14} {'blobs 384-d MB':>15} "
        f"{'blobs 768-d MB':>15}"
    )
    bits = {"active": 32, "warm": 8, "cold": 4, "archive": 2}
    for tier, row in storage().items():
        print(
            f"  {tier:<8} {bits[tier]:>4} {row['file_mb_per_100k']:14.1f} "
            f"{row['blob_mb_per_100k_384d']:15.1f} {row['blob_mb_per_100k_768d']:15.1f}"
        )
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="embed-bench-"))
    try:
        print("\nrecall latency (ms), vectors in memory; random vectors, real query embedding")
        for size in (int(s) for s in args.sizes.split(",") if s.strip()):
            row = latency(size, args.queries, workdir)
            print(
                f"  {int(row['notes']):>7} notes: keyword p50 {row['keyword_p50_ms']:6.1f} "
                f"p95 {row['keyword_p95_ms']:6.1f} | hybrid p50 {row['hybrid_p50_ms']:6.1f} "
                f"p95 {row['hybrid_p95_ms']:6.1f} | query embedding p50 "
                f"{row['query_embed_p50_ms']:5.1f}, all cosines p50 "
                f"{row['cosines_all_p50_ms']:5.1f}, vectors loaded in "
                f"{row['vectors_load_s']:.1f} s"
            )
            sys.stdout.flush()
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
