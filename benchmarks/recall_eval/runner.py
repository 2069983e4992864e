"""Set up the evaluation vaults and run every question through recall in each configuration.

Each real vault of ``tests/vaults/`` is copied to a temporary folder and made a vaultmem vault
(:meth:`Vault.init`); the SRD copy also gets the memories of ``memories.jsonl`` imported at
:data:`NOW`. Then every question is asked with ``k`` = 10 at :data:`NOW`, once per configuration
(keyword-only, the settings' full fusion, optionally custom weights), and the rank of the first
expected answer is recorded. The shared vaults themselves are only read.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.recall_eval.metrics import Scores, first_rank, reciprocal, score
from vaultmem import Vault
from vaultmem.core.notes.naming import safe_title
from vaultmem.core.settings import EmbeddingSettings, RecallSettings
from vaultmem.services.semantic.embeddings import embed_notes, vector_store

NOW = dt.datetime(2026, 11, 20, 12, 0, 0, tzinfo=dt.UTC)
"""The fixed evaluation time; the memories' decay histories are written relative to it."""

K = 10
"""Results asked of recall per question."""

DATA_DIR = Path(__file__).resolve().parent
QUESTIONS_FILE = DATA_DIR / "questions.jsonl"
PARAPHRASE_FILE = DATA_DIR / "paraphrase_questions.jsonl"
"""Questions whose answer shares no word with them (after FTS stemming): only meaning finds it."""
MEMORIES_FILE = DATA_DIR / "memories.jsonl"
MEMORY_VAULT = "13th-age-srd"
"""The vault the memories are imported into (they link to its notes)."""
VAULT_NAMES = ("13th-age-srd", "kepano-obsidian")
KINDS = ("srd", "kepano", "memory", "paraphrase")
ASPECTS = ("current", "history", "old", "lookup", "linked")
"""What a memory question checks: the fresh memory of a superseded pair (``current``), the old one
asked for on purpose (``history``), a long-unused memory (``old``), a plain fact (``lookup``), or
the rules note a campaign memory links to (``linked``)."""

WEIGHT_KEYS = ("relevance", "decay", "graph", "review_blend", "episode", "vector")
KEYWORD_ONLY: Mapping[str, float] = {"decay": 0.0, "graph": 0.0, "review_blend": 0.0,
                                     "episode": 0.0}


class RecallNotReady(RuntimeError):
    """``vaultmem.services.recall.recall`` still raises NotImplementedError."""


def default_vaults_dir() -> Path:
    """``tests/vaults`` of the repository (the real vaults ship with the tests)."""
    return Path(__file__).resolve().parents[2] / "tests" / "vaults"


# ---------------------------------------------------------------------------- data files
@dataclass(frozen=True, slots=True)
class Question:
    """One line of ``questions.jsonl``: a query and the vault-relative paths that answer it."""

    vault: str
    query: str
    answers: tuple[str, ...]
    kind: str
    aspect: str | None = None

    @property
    def scopes(self) -> tuple[str, ...]:
        """The report rows this question counts in: ``all``, its kind, kind/aspect, its vault."""
        vault = f"vault:{self.vault}"
        if self.aspect:
            return ("all", self.kind, f"{self.kind}/{self.aspect}", vault)
        return ("all", self.kind, vault)

    @classmethod
    def from_json(cls, record: Mapping[str, object]) -> Question:
        answers = record["answers"]
        if not isinstance(answers, list) or not answers:
            raise ValueError(f"answers must be a non-empty list: {record!r}")
        aspect = record.get("aspect")
        return cls(vault=str(record["vault"]), query=str(record["query"]),
                   answers=tuple(str(a) for a in answers), kind=str(record["kind"]),
                   aspect=None if aspect is None else str(aspect))


def load_questions(path: Path = QUESTIONS_FILE) -> list[Question]:
    """Every question of a JSONL file, in file order."""
    with path.open(encoding="utf-8") as lines:
        return [Question.from_json(json.loads(line)) for line in lines if line.strip()]


def load_memory_lines(path: Path = MEMORIES_FILE) -> list[str]:
    """The non-empty lines of ``memories.jsonl`` (what ``Vault.import_jsonl`` reads)."""
    with path.open(encoding="utf-8") as lines:
        return [line for line in lines if line.strip()]


def memory_path(title: str, folder: str = "STM") -> str:
    """Where ``import`` writes a memory titled ``title``: ``STM/<safe_title(title)>.md``."""
    return f"{folder}/{safe_title(title)}.md"


def expected_memory_paths(lines: Iterable[str], folder: str = "STM") -> list[str]:
    """The note path of each memory line, in order."""
    return [memory_path(str(json.loads(line)["title"]), folder) for line in lines]


def subset(questions: Sequence[Question], n: int) -> list[Question]:
    """``n`` questions taken round-robin across kinds, each kind in file order."""
    queues = {kind: [q for q in questions if q.kind == kind] for kind in dict.fromkeys(
        q.kind for q in questions)}
    picked: list[Question] = []
    while len(picked) < n and any(queues.values()):
        for queue in queues.values():
            if queue and len(picked) < n:
                picked.append(queue.pop(0))
    return picked


# ---------------------------------------------------------------------------- configurations
@dataclass(frozen=True, slots=True)
class Config:
    """A named set of fusion weights; ``weights=None`` means the vault's settings."""

    name: str
    weights: Mapping[str, float] | None

    def effective_weights(self) -> dict[str, float]:
        """The weights given, or the built-in settings defaults when ``weights`` is None."""
        if self.weights is not None:
            return dict(self.weights)
        defaults = RecallSettings()
        return {"relevance": defaults.weight_relevance, "decay": defaults.weight_decay,
                "graph": defaults.weight_graph, "review_blend": defaults.review_blend,
                "episode": defaults.weight_episode, "vector": EmbeddingSettings().weight_vector}

    def describe(self) -> str:
        text = ",".join(f"{key}={value:g}" for key, value in self.effective_weights().items())
        return f"settings defaults ({text})" if self.weights is None else text


KEYWORD = Config("keyword", KEYWORD_ONLY)
FUSION = Config("fusion", None)
# with embeddings (``--embeddings``): the same two without vectors, vectors alone, and hybrid
KEYWORD_NO_VECTOR = Config("keyword", {**KEYWORD_ONLY, "vector": 0.0})
FUSION_NO_VECTOR = Config("fusion", {"vector": 0.0})
VECTORS_ONLY = Config("vectors", {"relevance": 0.0, "decay": 0.0, "graph": 0.0,
                                  "review_blend": 0.0, "episode": 0.0, "vector": 1.0})
HYBRID = Config("hybrid", None)


def parse_weights(text: str) -> dict[str, float]:
    """``"relevance=1,decay=0.3"`` → ``{"relevance": 1.0, "decay": 0.3}``; raises ValueError."""
    weights: dict[str, float] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in WEIGHT_KEYS:
            raise ValueError(f"{part.strip()!r}: expected NAME=NUMBER with NAME one of "
                             f"{', '.join(WEIGHT_KEYS)}")
        try:
            weights[key] = float(value)
        except ValueError:
            raise ValueError(f"{part.strip()!r}: {value.strip()!r} is not a number") from None
    if not weights:
        raise ValueError("no weights given")
    return weights


def configurations(
    custom: Mapping[str, float] | None = None, *, embeddings: bool = False
) -> list[Config]:
    """keyword-only, full fusion, and (when given) ``custom`` weights; with ``embeddings`` also
    vectors-only and hybrid (keyword and fusion then have the vector weight 0)."""
    configs = [KEYWORD_NO_VECTOR, FUSION_NO_VECTOR, VECTORS_ONLY, HYBRID] if embeddings else [
        KEYWORD, FUSION]
    if custom is not None:
        configs.append(Config("custom", dict(custom)))
    return configs


# ---------------------------------------------------------------------------- vaults
def _make_writable(root: Path) -> None:
    for folder, _dirs, files in os.walk(root):
        os.chmod(folder, os.stat(folder).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        for name in files:
            path = os.path.join(folder, name)
            os.chmod(path, os.stat(path).st_mode | stat.S_IWUSR)


def prepare_vault(source: Path, target: Path, *, memory_lines: Sequence[str] = (),
                  now: dt.datetime = NOW, embeddings: bool = False,
                  vector_cache: Path | None = None) -> Vault:
    """Copy ``source`` to ``target``, make it a vaultmem vault, import ``memory_lines``, sync.

    With ``embeddings`` the vault uses the packaged local model (``[embeddings] provider =
    "local"``) and every note is embedded; with ``vector_cache`` (a folder) the vectors of an
    earlier run are reused from ``<cache>/<vault>.vectors.db`` (vectors are keyed by the text
    embedded, so a changed note is embedded again) and the cache is updated.

    Raises RuntimeError if a memory line is refused or lands at another path than
    :func:`expected_memory_paths` says (the questions name those paths).
    """
    if not source.is_dir():
        raise FileNotFoundError(f"{source}: real vault missing (tests/vaults of the repository)")
    shutil.copytree(source, target)
    _make_writable(target)
    vault, _created = Vault.init(target)
    if embeddings:
        vault.close()
        settings = target / "vaultmem.toml"
        text = settings.read_text(encoding="utf-8")
        settings.write_text(text.replace('provider = "auto"', 'provider = "local"', 1),
                            encoding="utf-8")
        vault = Vault.open(target)
    if memory_lines:
        report = vault.import_jsonl(memory_lines, now=now)
        if report.errors:
            raise RuntimeError(f"memories.jsonl: {len(report.errors)} lines refused, first: "
                               f"line {report.errors[0][0]}: {report.errors[0][1]}")
        expected = expected_memory_paths(memory_lines, vault.settings.folders.stm)
        if report.imported != expected:
            wrong = [(e, i) for e, i in zip(expected, report.imported, strict=False) if e != i]
            raise RuntimeError(f"memories landed at other paths than expected: {wrong[:3]}")
    vault.sync()
    if embeddings:
        cached = vector_cache / f"{source.name}.vectors.db" if vector_cache else None
        if cached is not None and cached.is_file():
            vault.close()
            shutil.copyfile(cached, target / ".vaultmem" / "vectors.db")
            vault = Vault.open(target)
        embedded = embed_notes(vault, now=now)
        if cached is not None and embedded.embedded:
            vault.close()  # checkpoints the WAL into the file
            cached.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(target / ".vaultmem" / "vectors.db", cached)
            vault = Vault.open(target)
    return vault


def requantise(vault: Vault, tier: str) -> None:
    """Store every vector of ``vault`` at ``tier`` (coarser only), to measure what it costs."""
    store = vector_store(vault)
    for model in {a.model for a in store.assignments().values()}:
        store.retier(model, {a.key: tier for a in store.assignments(model).values()})


# ---------------------------------------------------------------------------- running
@dataclass(frozen=True, slots=True)
class Outcome:
    """One question asked in one configuration: the returned paths and the answer's rank."""

    ranking: tuple[str, ...]
    rank: int | None
    seconds: float
    error: str | None = None


@dataclass(slots=True)
class Evaluation:
    """All outcomes: ``outcomes[config.name][i]`` belongs to ``questions[i]``."""

    questions: list[Question]
    configs: list[Config]
    now: dt.datetime
    k: int
    outcomes: dict[str, list[Outcome]] = field(default_factory=dict)

    def scopes(self) -> list[str]:
        """Report rows in a stable order: all, each kind, each kind/aspect present."""
        present = {s for q in self.questions for s in q.scopes}
        order = ["all", *KINDS, *(f"memory/{a}" for a in ASPECTS),
                 *(f"vault:{v}" for v in VAULT_NAMES)]
        extra = sorted(present - set(order))
        return [s for s in order if s in present] + extra

    def scores(self) -> dict[str, dict[str, Scores]]:
        """``scores()[config][scope]``."""
        table: dict[str, dict[str, Scores]] = {}
        for config in self.configs:
            outcomes = self.outcomes[config.name]
            table[config.name] = {
                scope: score([o.rank for q, o in zip(self.questions, outcomes, strict=True)
                              if scope in q.scopes])
                for scope in self.scopes()
            }
        return table

    def mean_ms(self, config: str) -> float:
        outcomes = self.outcomes[config]
        return 1000 * sum(o.seconds for o in outcomes) / max(1, len(outcomes))

    def errors(self, config: str) -> list[tuple[Question, str]]:
        return [(q, o.error) for q, o in zip(self.questions, self.outcomes[config], strict=True)
                if o.error is not None]

    def disagreements(self, base: str, other: str, top: int = 10) -> list[dict[str, object]]:
        """The ``top`` questions whose reciprocal rank differs most between two configurations."""
        ranked: list[tuple[float, int, dict[str, object]]] = []
        for index, question in enumerate(self.questions):
            a, b = self.outcomes[base][index], self.outcomes[other][index]
            delta = reciprocal(b.rank) - reciprocal(a.rank)
            if delta == 0:
                continue
            ranked.append((-abs(delta), index, {
                "query": question.query, "kind": question.kind, "aspect": question.aspect,
                "answers": list(question.answers), "delta_rr": delta,
                f"rank_{base}": a.rank, f"rank_{other}": b.rank,
                f"top_{base}": a.ranking[0] if a.ranking else None,
                f"top_{other}": b.ranking[0] if b.ranking else None,
            }))
        ranked.sort(key=lambda item: (item[0], item[1]))
        return [row for _key, _index, row in ranked[:top]]

    def as_json(self, top: int = 10) -> dict[str, object]:
        table = self.scores()
        base = self.configs[0].name
        return {
            "now": self.now.isoformat(),
            "k": self.k,
            "configs": {
                c.name: {"weights": None if c.weights is None else dict(c.weights),
                         "effective": c.effective_weights()}
                for c in self.configs
            },
            "scores": {name: {scope: s.as_dict() for scope, s in rows.items()}
                       for name, rows in table.items()},
            "mean_ms": {c.name: self.mean_ms(c.name) for c in self.configs},
            "errors": {c.name: [{"query": q.query, "error": e} for q, e in self.errors(c.name)]
                       for c in self.configs},
            "disagreements": {c.name: self.disagreements(base, c.name, top)
                              for c in self.configs[1:]},
            "questions": [
                {"vault": q.vault, "query": q.query, "kind": q.kind, "aspect": q.aspect,
                 "answers": list(q.answers),
                 "ranks": {c.name: self.outcomes[c.name][i].rank for c in self.configs}}
                for i, q in enumerate(self.questions)
            ],
        }


def ask(vault: Vault, question: Question, config: Config, *, now: dt.datetime, k: int) -> Outcome:
    """Run one question in one configuration. A recall error is recorded, not raised, except
    NotImplementedError (recall not written yet), which raises :class:`RecallNotReady`."""
    start = time.perf_counter()
    try:
        hits = vault.recall(question.query, k=k, now=now,
                            weights=None if config.weights is None else dict(config.weights),
                            include_archived=False)
    except NotImplementedError as err:
        raise RecallNotReady("vaultmem.services.recall.recall is not implemented yet") from err
    except Exception as err:  # noqa: BLE001 - a benchmark reports a failing query and goes on
        return Outcome((), None, time.perf_counter() - start, f"{type(err).__name__}: {err}")
    seconds = time.perf_counter() - start
    ranking = tuple(hit.path for hit in hits[:k])
    return Outcome(ranking, first_rank(ranking, question.answers), seconds)


Progress = Callable[[int, int], None]


def evaluate(
    questions: Sequence[Question] | None = None, *, configs: Sequence[Config] | None = None,
    vaults_dir: Path | None = None, memory_lines: Sequence[str] | None = None,
    now: dt.datetime = NOW, k: int = K, progress: Progress | None = None,
    embeddings: bool = False, tiers: Sequence[str] = (), vector_cache: Path | None = None,
) -> Evaluation:
    """Copy and prepare the vaults the questions need, ask every question in every configuration.

    Defaults: all of ``questions.jsonl``, keyword-only and full fusion, ``tests/vaults``, the
    memories of ``memories.jsonl``. Raises :class:`RecallNotReady` while recall is a placeholder.
    """
    questions = list(load_questions() if questions is None else questions)
    configs = list(configurations() if configs is None else configs)
    source_dir = default_vaults_dir() if vaults_dir is None else vaults_dir
    lines = load_memory_lines() if memory_lines is None else list(memory_lines)
    evaluation = Evaluation(questions, configs, now, k, {c.name: [] for c in configs})
    needed = list(dict.fromkeys(q.vault for q in questions))
    with tempfile.TemporaryDirectory(prefix="recall-eval-") as tmp:
        vaults = {
            name: prepare_vault(source_dir / name, Path(tmp) / name,
                                memory_lines=lines if name == MEMORY_VAULT else (), now=now,
                                embeddings=embeddings, vector_cache=vector_cache)
            for name in needed
        }
        try:
            total = len(questions) * len(configs)
            for i, question in enumerate(questions):
                for j, config in enumerate(configs):
                    evaluation.outcomes[config.name].append(
                        ask(vaults[question.vault], question, config, now=now, k=k))
                    if progress is not None:
                        progress(i * len(configs) + j + 1, total)
            # the vector configurations again with every vector quantised to each tier
            vector_configs = [c for c in configs if c.name in ("vectors", "hybrid")]
            for tier in tiers:
                for vault in vaults.values():
                    requantise(vault, tier)
                for config in vector_configs:
                    tiered = Config(f"{config.name}@{tier}", config.weights)
                    evaluation.configs.append(tiered)
                    evaluation.outcomes[tiered.name] = [
                        ask(vaults[q.vault], q, config, now=now, k=k) for q in questions]
        finally:
            for vault in vaults.values():
                vault.close()
    return evaluation
