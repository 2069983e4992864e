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
from vaultmem.services.embedding_providers import (  # noqa: E402
    EmbeddingUnavailableError,
    LocalOnnxProvider,
)
from vaultmem.services.embeddings import embed_notes  # noqa: E402

OFF = {"decay": 0.0, "graph": 0.0, "review_blend": 0.0, "episode": 0.0}
KEYWORD = {**OFF, "vector": 0.0}
NO_VECTORS = {"vector": 0.0}


def _model_or_skip() -> None:
    try:
        LocalOnnxProvider().check()
    except EmbeddingUnavailableError as err:
        pytest.skip(f"needs vaultmem[embeddings]: {err}")


def _found(vault: Vault, questions: list[tuple[str, set[str]]], weights: Mapping[str, float]
           | None, k: int, now: object) -> float:
    """Share of the answers found in the top ``k``, summed over questions."""
    total = 0.0
    for query, answers in questions:
        hits = vault.recall(query, k=k, now=now, sync=False,
                            weights=None if weights is None else dict(weights))
        total += len(answers & {h.path for h in hits}) / len(answers)
    return total


def test_vectors_never_hurt_on_the_shipped_kepano_vault(tmp_path: Path) -> None:
    _model_or_skip()
    questions = [q for q in runner.load_questions() if q.vault == "kepano-obsidian"]
    assert len(questions) >= 30
    vault = runner.prepare_vault(SHARED_VAULTS / "kepano-obsidian", tmp_path / "v",
                                 embeddings=True)
    try:
        asked = [(q.query, set(q.answers)) for q in questions]
        for k in (1, 5, 10):
            keyword = _found(vault, asked, KEYWORD, k, runner.NOW)
            hybrid = _found(vault, asked, None, k, runner.NOW)
            assert hybrid >= keyword, (k, hybrid, keyword)
        # the vectors are doing something: a paraphrase only meaning finds is found
        assert _found(vault, asked, None, 10, runner.NOW) > _found(
            vault, asked, KEYWORD, 10, runner.NOW) or _found(
            vault, asked, None, 1, runner.NOW) > _found(vault, asked, KEYWORD, 1, runner.NOW)
    finally:
        vault.close()


SESSIONS = 6
"""Sessions of the sample conversation: enough turns (~130) for BM25 and vectors to differ."""


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
    assert len(questions) >= 20 and len(turns) >= 80
    sample = locomo.Conversation(conversation.sample_id, turns, questions,
                                 max(t.created for t in turns))
    vault, path_of = locomo.build_vault(tmp_path / "v", sample, embeddings=True)
    try:
        embed_notes(vault, now=sample.now, sync=False)
        asked = [(q.question, {path_of[e] for e in q.evidence}) for q in questions]
        for k in (5, 10, 25):
            keyword = _found(vault, asked, KEYWORD, k, sample.now)
            fused = _found(vault, asked, NO_VECTORS, k, sample.now)
            hybrid = _found(vault, asked, None, k, sample.now)
            assert hybrid >= keyword and hybrid >= fused, (k, hybrid, fused, keyword)
    finally:
        vault.close()
        shutil.rmtree(tmp_path / "v", ignore_errors=True)
