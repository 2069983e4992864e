"""The retrieval evaluation (benchmarks/recall_eval): its data files, its metrics, its runner.

The data checks need no recall: every question parses and names notes that exist in its real vault
(or the path ``vaultmem import`` gives a memory), every memory line is accepted by ``import``, every
``[[link]]`` of a memory resolves. The metrics are checked on hand-made rankings with exact numbers.
The runner itself is run on a 20-question subset only once recall is implemented.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # `pytest` does not put the repository root on sys.path
    sys.path.insert(0, str(REPO))

from conftest import SHARED_VAULTS  # noqa: E402

from benchmarks.recall_eval import metrics, runner  # noqa: E402
from benchmarks.recall_eval.report import format_report, format_table  # noqa: E402
from benchmarks.recall_eval.runner import (  # noqa: E402
    NOW,
    Config,
    Evaluation,
    Outcome,
    Question,
)
from vaultmem import Vault  # noqa: E402
from vaultmem.core.notes.naming import safe_title  # noqa: E402
from vaultmem.core.notes.timestamps import parse_datetime  # noqa: E402
from vaultmem.core.recall.text_tokens import fts_string, query_terms  # noqa: E402
from vaultmem.services.memories.remembering import draft_from_json  # noqa: E402

WIKILINK = re.compile(r"\[\[([^\]|#]+)")


def _records(path: Path) -> list[dict[str, object]]:
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def questions() -> list[Question]:
    return runner.load_questions()


@pytest.fixture(scope="module")
def memories() -> list[dict[str, object]]:
    return _records(runner.MEMORIES_FILE)


@pytest.fixture(scope="module")
def srd_names() -> Counter[str]:
    """Lower-cased base names of the SRD vault's notes, with how many notes carry each."""
    root = SHARED_VAULTS / runner.MEMORY_VAULT
    if not root.is_dir():
        pytest.fail(f"real vault {root} is missing from tests/vaults")
    return Counter(p.stem.lower() for p in root.rglob("*.md"))


# ------------------------------------------------------------------------------------- data files
def test_question_lines_parse_with_known_fields() -> None:
    records = _records(runner.QUESTIONS_FILE)
    for record in records:
        assert set(record) <= {"vault", "query", "answers", "kind", "aspect"}, record
        assert record["vault"] in runner.VAULT_NAMES, record
        assert record["kind"] in runner.KINDS, record
        assert isinstance(record["query"], str) and record["query"].strip(), record
        answers = record["answers"]
        assert isinstance(answers, list) and answers, record
        assert all(isinstance(a, str) and a.endswith(".md") for a in answers), record
        if record["kind"] == "memory":
            assert record["vault"] == runner.MEMORY_VAULT
            assert record.get("aspect") in runner.ASPECTS, record
        else:
            assert "aspect" not in record, record
        home = {"srd": "13th-age-srd", "kepano": "kepano-obsidian"}
        expected_vault = home.get(str(record["kind"]))
        assert expected_vault in (None, record["vault"]), record
    queries = [str(r["query"]).lower() for r in records]
    assert len(set(queries)) == len(queries), "a query is asked twice"


def test_question_counts(questions: list[Question]) -> None:
    kinds = Counter(q.kind for q in questions)
    assert len(questions) >= 150
    assert kinds["memory"] >= 50
    assert kinds["srd"] >= 50 and kinds["kepano"] >= 20
    aspects = Counter(q.aspect for q in questions if q.kind == "memory")
    assert aspects["current"] >= 20, "decay needs fresh-versus-stale questions to show"
    assert aspects["linked"] >= 10, "graph needs questions answered by a linked note"


def test_every_answer_exists_in_its_vault(questions: list[Question],
                                          memories: list[dict[str, object]]) -> None:
    memory_paths = set(runner.expected_memory_paths(json.dumps(m) for m in memories))
    missing = []
    for question in questions:
        for answer in question.answers:
            if answer.startswith("STM/"):
                if question.vault != runner.MEMORY_VAULT or answer not in memory_paths:
                    missing.append((question.query, answer))
            elif not (SHARED_VAULTS / question.vault / answer).is_file():
                missing.append((question.query, answer))
    assert not missing


def test_memory_questions_cover_memories_and_linked_notes(questions: list[Question]) -> None:
    for question in questions:
        if question.kind != "memory":
            continue
        to_memories = [a for a in question.answers if a.startswith("STM/")]
        if question.aspect == "linked":  # the answer is the rules note a memory links to
            assert not to_memories, question
        else:
            assert to_memories == list(question.answers), question


# ------------------------------------------------------------------------------------- memories
def test_every_memory_line_is_accepted_by_import(memories: list[dict[str, object]]) -> None:
    lines = runner.load_memory_lines()
    assert 150 <= len(lines) <= 300
    for line in lines:
        record = json.loads(line)
        assert {"content", "title", "tags", "category", "importance", "created", "last_used",
                "use_count", "strength", "source"} <= set(record), record
        draft = draft_from_json(record)
        assert draft.title == record["title"]
        assert draft.created is not None and draft.last_used is not None
        assert draft.created <= draft.last_used <= NOW, record["title"]


def test_memory_paths_follow_the_naming_rule(memories: list[dict[str, object]],
                                             srd_names: Counter[str]) -> None:
    """Import writes ``STM/<safe_title(title)>.md``; a name clash would add " 2" to it."""
    titles = [str(m["title"]) for m in memories]
    names = [safe_title(t) for t in titles]
    assert all(names)
    assert len({n.lower() for n in names}) == len(names), "two memories would share a file name"
    assert not [n for n in names if n.lower() in srd_names], "a memory would clash with an SRD note"
    assert runner.memory_path("Lore bottle answers: where the last shard is") == (
        "STM/Lore bottle answers where the last shard is.md")
    assert "Lore bottle answers: where the last shard is" in titles
    assert runner.expected_memory_paths([json.dumps(memories[0])]) == [
        f"STM/{safe_title(titles[0])}.md"]


def test_memory_links_resolve(memories: list[dict[str, object]],
                              srd_names: Counter[str]) -> None:
    """Links name a memory or exactly one SRD note: the graph edges the questions rely on."""
    memory_names = {safe_title(str(m["title"])).lower() for m in memories}
    unresolved = []
    srd_links = 0
    for memory in memories:
        for target in WIKILINK.findall(str(memory["content"])):
            key = target.strip().lower()
            if key in memory_names:
                continue
            if srd_names[key] == 1:
                srd_links += 1
                continue
            unresolved.append((memory["title"], target))
    assert not unresolved
    assert srd_links >= 100


def test_memories_have_stale_and_fresh_histories(memories: list[dict[str, object]]) -> None:
    by_name = {safe_title(str(m["title"])).lower(): m for m in memories}
    ages = [(NOW - parse_datetime(m["last_used"])).days for m in memories]
    assert sum(a <= 7 for a in ages) >= 40
    assert sum(a >= 30 for a in ages) >= 40
    pairs = 0
    for memory in memories:
        for target in re.findall(r"Replaces \[\[([^\]]+)\]\]", str(memory["content"])):
            old = by_name[target.lower()]
            assert parse_datetime(old["created"]) < parse_datetime(memory["created"]), target
            assert parse_datetime(old["last_used"]) < parse_datetime(memory["last_used"]), target
            pairs += 1
    assert pairs >= 20


# ------------------------------------------------------------------------------------- metrics
def test_metrics_on_a_hand_made_ranking() -> None:
    rankings = [
        (["a.md", "b.md", "c.md"], {"a.md"}),                             # rank 1
        (["x.md", "y.md", "z.md", "w.md", "b2.md", "q.md"], {"q.md", "b2.md"}),  # rank 5
        ([f"n{i}.md" for i in range(7)] + ["c.md", "d.md"], {"c.md"}),     # rank 8
        (["p.md", "q.md"], {"missing.md"}),                               # not found
    ]
    ranks = [metrics.first_rank(r, answers) for r, answers in rankings]
    assert ranks == [1, 5, 8, None]
    assert metrics.recall_at(ranks, 1) == 0.25
    assert metrics.recall_at(ranks, 5) == 0.5
    assert metrics.recall_at(ranks, 10) == 0.75
    assert metrics.mean_reciprocal_rank(ranks) == pytest.approx((1 + 1 / 5 + 1 / 8) / 4)
    assert metrics.mean_reciprocal_rank(ranks) == pytest.approx(0.33125)
    scores = metrics.score(ranks)
    assert scores.as_dict() == {"n": 4, "recall@1": 0.25, "recall@5": 0.5, "recall@10": 0.75,
                                "mrr": pytest.approx(0.33125)}
    assert metrics.first_rank(["x.md", "a2.md", "a1.md"], ["a1.md", "a2.md"]) == 2
    assert metrics.score([]) == metrics.Scores(0, 0.0, 0.0, 0.0, 0.0)


def _hand_made_evaluation() -> Evaluation:
    questions = [
        Question("13th-age-srd", "crit rule", ("STM/New.md",), "memory", "current"),
        Question("13th-age-srd", "escalation die", ("E.md",), "srd"),
        Question("kepano-obsidian", "tart", ("T.md",), "kepano"),
    ]
    configs = [runner.KEYWORD, Config("fusion", None)]
    evaluation = Evaluation(questions, configs, NOW, 10)
    evaluation.outcomes = {
        "keyword": [Outcome(("STM/Old.md", "STM/New.md"), 2, 0.001),
                    Outcome(("E.md",), 1, 0.001),
                    Outcome(("X.md",), None, 0.001)],
        "fusion": [Outcome(("STM/New.md", "STM/Old.md"), 1, 0.002),
                   Outcome(("A.md", "B.md", "C.md", "E.md"), 4, 0.002),
                   Outcome(("X.md",), None, 0.002, "InputError: boom")],
    }
    return evaluation


def test_scores_disagreements_and_report_of_a_hand_made_evaluation() -> None:
    evaluation = _hand_made_evaluation()
    assert evaluation.scopes() == ["all", "srd", "kepano", "memory", "memory/current",
                                   "vault:13th-age-srd", "vault:kepano-obsidian"]
    table = evaluation.scores()
    assert table["keyword"]["all"].mrr == pytest.approx((1 / 2 + 1) / 3)
    assert table["fusion"]["all"].mrr == pytest.approx((1 + 1 / 4) / 3)
    assert table["fusion"]["memory"].recall_1 == 1.0
    assert table["keyword"]["memory"].recall_1 == 0.0
    assert table["fusion"]["srd"].recall_5 == 1.0 and table["fusion"]["srd"].recall_1 == 0.0
    moved = evaluation.disagreements("keyword", "fusion")
    assert [row["query"] for row in moved] == ["escalation die", "crit rule"]
    assert moved[0]["rank_keyword"] == 1 and moved[0]["rank_fusion"] == 4
    assert moved[0]["delta_rr"] == pytest.approx(-0.75)
    assert evaluation.errors("fusion")[0][1] == "InputError: boom"
    text = format_table(evaluation)
    lines = text.splitlines()
    assert lines[0].split() == ["scope", "config", "n", "R@1", "R@5", "R@10", "MRR", "ΔMRR"]
    widths = {len(line) for line in lines[:2]}
    assert len(widths) == 1, "header and rule line up"
    assert ["memory/current", "fusion", "1", "1.000", "1.000", "1.000", "1.000", "+0.500"] in [
        line.split() for line in lines]
    assert ["vault:13th-age-srd", "fusion", "2", "0.500", "1.000", "1.000", "0.625",
            "-0.125"] in [line.split() for line in lines]
    report = format_report(evaluation)
    assert "Largest rank changes, keyword → fusion" in report
    assert "InputError: boom" in report
    data = json.loads(json.dumps(evaluation.as_json()))
    assert data["scores"]["fusion"]["memory"]["recall@1"] == 1.0
    assert data["questions"][1]["ranks"] == {"keyword": 1, "fusion": 4}


def test_parse_weights_and_subset(questions: list[Question]) -> None:
    assert runner.parse_weights("relevance=1,decay=0.3, graph=0") == {
        "relevance": 1.0, "decay": 0.3, "graph": 0.0}
    for bad in ("", "speed=1", "decay", "decay=fast"):
        with pytest.raises(ValueError):
            runner.parse_weights(bad)
    configs = runner.configurations({"decay": 0.5})
    assert [c.name for c in configs] == ["keyword", "fusion", "custom"]
    assert configs[0].weights == {"decay": 0.0, "graph": 0.0, "review_blend": 0.0,
                                  "episode": 0.0}
    assert configs[1].weights is None
    picked = runner.subset(questions, 20)
    assert len(picked) == 20
    assert Counter(q.kind for q in picked) == {"srd": 7, "kepano": 7, "memory": 6}


# ------------------------------------------------------------------------------------- runner
def _recall_is_implemented(tmp_path: Path) -> bool:
    vault, _ = Vault.init(tmp_path / "probe")
    try:
        vault.recall("probe", k=1, now=NOW)
    except NotImplementedError:
        return False
    finally:
        vault.close()
    return True


@pytest.mark.slow
def test_runner_completes_on_a_subset(tmp_path: Path, questions: list[Question]) -> None:
    if not _recall_is_implemented(tmp_path):
        pytest.skip("vaultmem.services.recall.recall is not implemented yet")
    picked = runner.subset(questions, 20)
    evaluation = runner.evaluate(picked, vaults_dir=SHARED_VAULTS)
    for config in evaluation.configs:
        outcomes = evaluation.outcomes[config.name]
        assert len(outcomes) == 20
        assert not evaluation.errors(config.name)
        assert all(len(o.ranking) <= runner.K for o in outcomes)
    table = evaluation.scores()
    for rows in table.values():
        assert rows["all"].n == 20
        for s in rows.values():
            assert 0.0 <= s.recall_1 <= s.recall_5 <= s.recall_10 <= 1.0
            assert s.recall_1 <= s.mrr <= s.recall_10
    assert table["keyword"]["all"].recall_10 > 0.3, "keyword recall finds the easy answers"
    assert "scope" in format_report(evaluation)
    assert evaluation.now == dt.datetime(2026, 11, 20, 12, tzinfo=dt.UTC)


# ------------------------------------------------------------------------------------- paraphrases
def test_paraphrase_questions_share_no_word_with_their_answers(tmp_path: Path) -> None:
    """Each paraphrase question: no query term (FTS-stemmed) occurs in any of its answer notes."""
    paraphrases = runner.load_questions(runner.PARAPHRASE_FILE)
    assert len(paraphrases) >= 50
    assert {q.kind for q in paraphrases} == {"paraphrase"}
    assert not {q.query.lower() for q in paraphrases} & {
        q.query.lower() for q in runner.load_questions()}
    vault = runner.prepare_vault(SHARED_VAULTS / runner.MEMORY_VAULT, tmp_path / "srd",
                                 memory_lines=runner.load_memory_lines())
    try:
        conn = vault.index.conn
        shared = []
        for question in paraphrases:
            assert question.vault == runner.MEMORY_VAULT
            for answer in question.answers:
                row = conn.execute("SELECT nid FROM notes WHERE path = ?", (answer,)).fetchone()
                assert row is not None, answer
                for term in query_terms(question.query):
                    if conn.execute("SELECT 1 FROM notes_fts WHERE rowid = ? AND notes_fts "
                                    "MATCH ?", (row[0], fts_string(term))).fetchone():
                        shared.append((question.query, answer, term))
        assert shared == []
    finally:
        vault.close()
