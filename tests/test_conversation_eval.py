"""The conversational evaluation's data (benchmarks/conversation_eval): shape and determinism.

The evaluation itself (import + 3 × 336 recalls, 5 × with ``--embeddings``) runs with ``python -m
benchmarks.conversation_eval``; here its generated data is checked against what it claims, and
one conversation is evaluated with the packaged embedding model.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(REPO))

from benchmarks.conversation_eval.generate import generate, jsonl_records  # noqa: E402


def test_conversations_sessions_questions_and_evidence() -> None:
    turns, questions = generate()
    by_id = {t.id: t for t in turns}
    conversations = {t.conversation for t in turns}
    assert len(conversations) >= 5
    sessions = Counter(
        t.conversation for t in {(t.conversation, t.session): t for t in turns}.values()
    )
    assert all(sessions[c] >= 15 for c in conversations)
    assert all(len({t.speaker for t in turns if t.conversation == c}) == 2 for c in conversations)
    assert len(questions) >= 300
    assert all(e in by_id for q in questions for e in q.evidence)
    asked = [q for q in questions if q.kind == "asked"]
    assert len(asked) >= 0.4 * len(questions)
    for q in asked:  # the evidence is a reply: the turn before it is the other speaker asking
        (evidence,) = q.evidence
        before = turns[turns.index(by_id[evidence]) - 1]
        assert before.session == by_id[evidence].session
        assert before.speaker != by_id[evidence].speaker and before.text.endswith("?")
    assert len({t.text for t in turns}) > 0.6 * len(turns)  # varied, not one line repeated


def test_generation_is_deterministic_and_imports_in_time_order() -> None:
    assert generate(3) == generate(3) and generate(3) != generate(4)
    turns, _ = generate()
    records = jsonl_records(turns)
    assert len(records) == len(turns)
    for a, b in zip(turns, turns[1:], strict=False):
        if a.session == b.session:
            assert a.time < b.time


@pytest.mark.slow
def test_evaluation_with_embeddings_reports_keyword_vectors_and_hybrid(tmp_path: Path) -> None:
    """One conversation, embedded with the packaged model: every configuration gets numbers."""
    from benchmarks.conversation_eval.__main__ import EMBEDDING_CONFIGS, format_report, run

    result = run(embeddings=True, conversations=1, vector_cache=tmp_path / "cache")
    assert result["conversations"] == 1 and result["embeddings"] is True
    assert (tmp_path / "cache" / "conversations.vectors.db").is_file()
    recall = result["recall"]
    assert isinstance(recall, dict) and set(recall) >= {"all", "asked", "told"}
    for by_config in recall.values():
        assert list(by_config) == list(EMBEDDING_CONFIGS)
        assert {"keyword", "vectors", "hybrid"} <= set(by_config)
        for values in by_config.values():
            assert set(values) == {"R@1", "R@5", "R@10", "R@25", "MRR"}
            assert all(0.0 <= v <= 1.0 for v in values.values())
            assert values["R@1"] <= values["R@5"] <= values["R@10"] <= values["R@25"]
            assert values["R@1"] <= values["MRR"] <= values["R@25"]
    # vectors alone find answers keyword recall cannot (replies share no word with questions)
    assert recall["all"]["vectors"]["R@25"] > recall["all"]["keyword"]["R@25"]
    report = format_report(result)
    assert all(f"all       {name}" in report for name in ("keyword", "vectors", "hybrid"))
    again = run(embeddings=True, conversations=1, vector_cache=tmp_path / "cache")
    assert again["recall"] == recall, "vectors reused from the cache rank the same"
