"""Vectors never make recall worse, on real text (issue: hybrid recall below keyword-only).

With the packaged model (``vaultmem[embeddings]``) the default hybrid recall must find at least
as many answers as keyword-only recall at every k, on:

- the shipped kepano-obsidian vault with its questions of ``benchmarks/recall_eval`` (always);
- a small sample of real conversations built at test time from the LoCoMo dev split when
  ``../shared/data/locomo-dev/`` is there (its first sessions and the questions they answer),
  imported as ``benchmarks.locomo_eval`` does. The data is read, never kept.

The full figures come from ``python -m benchmarks.locomo_eval`` and ``benchmarks.recall_eval``.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(REPO))

from conftest import SHARED_VAULTS  # noqa: E402

from benchmarks.locomo_eval import data as locomo  # noqa: E402
from benchmarks.recall_eval import runner  # noqa: E402
from vaultmem import Vault  # noqa: E402
from vaultmem.services.semantic.embedding_providers import (  # noqa: E402
    EmbeddingUnavailableError,
    LocalOnnxProvider,
)
from vaultmem.services.semantic.embeddings import embed_notes  # noqa: E402

OFF = {"decay": 0.0, "graph": 0.0, "review_blend": 0.0, "episode": 0.0}
KEYWORD = {**OFF, "vector": 0.0}
NO_VECTORS = {"vector": 0.0}


def _model_or_skip() -> None:
    try:
        LocalOnnxProvider().check()
    except EmbeddingUnavailableError as err:
        pytest.skip(f"needs vaultmem[embeddings]: {err}")


def _found(vault: Vault, questions: list[tuple[str, set[str]]], weights: Mapping[str, float]
           | None, ks: tuple[int, ...], now: object) -> dict[int, float]:
    """Per k of ``ks``: the share of each question's answers in the top k, summed."""
    total = dict.fromkeys(ks, 0.0)
    for query, answers in questions:
        hits = vault.recall(query, k=max(ks), now=now, sync=False,
                            weights=None if weights is None else dict(weights))
        for k in ks:
            total[k] += len(answers & {h.path for h in hits[:k]}) / len(answers)
    return total


def test_vectors_never_hurt_on_the_shipped_kepano_vault(tmp_path: Path) -> None:
    _model_or_skip()
    questions = [q for q in runner.load_questions() if q.vault == "kepano-obsidian"]
    assert len(questions) >= 30
    vault = runner.prepare_vault(SHARED_VAULTS / "kepano-obsidian", tmp_path / "v",
                                 embeddings=True)
    try:
        asked = [(q.query, set(q.answers)) for q in questions]
        keyword = _found(vault, asked, KEYWORD, (1, 5, 10), runner.NOW)
        hybrid = _found(vault, asked, None, (1, 5, 10), runner.NOW)
        assert all(hybrid[k] >= keyword[k] for k in keyword), (hybrid, keyword)
        assert hybrid != keyword  # the vectors did change something
    finally:
        vault.close()


SESSIONS = 4
"""Sessions of the sample conversation: enough turns (~75) for BM25 and vectors to differ."""


def test_vectors_never_hurt_on_a_sample_of_real_conversations(tmp_path: Path) -> None:
    folder = locomo.data_folder()
    if not (folder / locomo.DATA_FILE).is_file():
        pytest.skip(f"no LoCoMo dev data at {folder}: the sample is built from it at test time")
    _model_or_skip()
    conversation = locomo.load(folder)[0]
    kept = {f"session_{n}" for n in range(1, SESSIONS + 1)}
    turns = tuple(t for t in conversation.turns if t.session in kept)
    ids = {t.dia_id for t in turns}
    questions = tuple(q for q in conversation.questions
                      if q.evidence and set(q.evidence) <= ids)
    assert len(questions) >= 20 and len(turns) >= 60
    sample = locomo.Conversation(conversation.sample_id, turns, questions,
                                 max(t.created for t in turns))
    vault, path_of = locomo.build_vault(tmp_path / "v", sample, embeddings=True)
    try:
        embed_notes(vault, now=sample.now, sync=False)  # import embedded the turns: tiers now
        asked = [(q.question, {path_of[e] for e in q.evidence}) for q in questions]
        ks = (5, 10, 25)
        keyword = _found(vault, asked, KEYWORD, ks, sample.now)
        fused = _found(vault, asked, NO_VECTORS, ks, sample.now)
        hybrid = _found(vault, asked, None, ks, sample.now)
        for k in ks:
            assert hybrid[k] >= keyword[k] and hybrid[k] >= fused[k], (k, hybrid, fused, keyword)
    finally:
        vault.close()
        shutil.rmtree(tmp_path / "v", ignore_errors=True)
