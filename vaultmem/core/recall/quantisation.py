"""Quantised storage of embedding vectors by retention tier (engram, "embedding compression").

Pure numpy, no I/O. A vector of ``d`` float32 components is stored as one of:

=========  ===============================  =====================  ========================
tier       when (decay retention ``R``)     precision              bytes for d = 384
=========  ===============================  =====================  ========================
active     ``R > 0.8`` (and every note      float32                1536
           without decay fields)
warm       ``0.3 < R ≤ 0.8``                int8, 256 levels       384 + 8
cold       ``R ≤ 0.3`` or archived          int4, 16 levels        192 + 8
archive    never written now; still read    int2, 4 levels         96 + 8
=========  ===============================  =====================  ========================

Why int4 is the coarsest tier written: on the LoCoMo dev conversations (``python -m
benchmarks.locomo_eval``, hybrid recall, docs/user-guide.md "Semantic recall") every vector at
int8 or int4 costs nothing measurable in R@10 against float32 (±0.3), at int2 0.5–0.6 points
(vectors alone: 0.4 at int4, 3.0 at int2): int2 costs the half point of R@10 a storage tier may
cost. Vectors an earlier version stored at int2 (tier ``archive``) are still read; a tier never
regains bits.

Quantisation is uniform per vector: ``q = round((x − lo) / step)`` with ``lo = min(x)``,
``step = (max(x) − lo) / (levels − 1)``; the 8 extra bytes hold ``lo`` and ``step`` as float32.
Codes are packed little-endian, several per byte for int4 (2) and int2 (4). Dequantised vectors
are renormalised to unit length before cosine comparisons, so mixed precisions compare on one
scale (a simpler stand-in for engram's FRQAD distance). The tier thresholds on retention follow
engram's table (active R > 0.8); the lower cut-offs are vaultmem's and live in
:data:`TIER_FLOORS`.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]

TIERS: Final = ("active", "warm", "cold", "archive")
BITS: Final = {"active": 32, "warm": 8, "cold": 4, "archive": 2}
TIER_FLOORS: Final = (("active", 0.8), ("warm", 0.3))
"""A vector is in the first tier whose floor its retention exceeds; else :data:`COARSEST`."""
COARSEST: Final = "cold"
"""The coarsest tier written (int4): int2 loses more than half a point of R@10 (above)."""


def tier_for(retention: float | None, *, archived: bool = False) -> str:
    """The storage tier of a note with decay ``retention`` (``None``: no decay → ``active``)."""
    if archived:
        return COARSEST
    if retention is None:
        return "active"
    for tier, floor in TIER_FLOORS:
        if retention > floor:
            return tier
    return COARSEST


def encode(vector: npt.ArrayLike, tier: str) -> bytes:
    """``vector`` (d floats) stored at ``tier``'s precision; ``ValueError`` for a bad tier."""
    x = np.asarray(vector, dtype=np.float32).ravel()
    bits = BITS.get(tier)
    if bits is None:
        raise ValueError(f"unknown tier {tier!r}; known: {', '.join(TIERS)}")
    if bits == 32:
        return bytes(x.astype("<f4").tobytes())
    levels = (1 << bits) - 1
    lo = float(x.min()) if x.size else 0.0
    hi = float(x.max()) if x.size else 0.0
    step = (hi - lo) / levels if hi > lo else 1.0
    codes = np.clip(np.rint((x - lo) / step), 0, levels).astype(np.uint8)
    per_byte = 8 // bits
    pad = (-len(codes)) % per_byte
    codes = np.concatenate([codes, np.zeros(pad, dtype=np.uint8)]).reshape(-1, per_byte)
    shifts = np.arange(per_byte, dtype=np.uint8) * bits
    packed = np.bitwise_or.reduce(codes << shifts, axis=1).astype(np.uint8)
    header = np.array([lo, step], dtype="<f4").tobytes()
    return bytes(header + packed.tobytes())


def decode(blob: bytes, tier: str, dim: int) -> FloatArray:
    """The float32 vector (shape ``(dim,)``) stored by :func:`encode` at ``tier``."""
    bits = BITS.get(tier)
    if bits is None:
        raise ValueError(f"unknown tier {tier!r}; known: {', '.join(TIERS)}")
    if bits == 32:
        out: FloatArray = np.frombuffer(blob, dtype="<f4", count=dim).astype(np.float32)
        return out
    lo, step = np.frombuffer(blob[:8], dtype="<f4")
    packed = np.frombuffer(blob[8:], dtype=np.uint8)
    per_byte = 8 // bits
    shifts = np.arange(per_byte, dtype=np.uint8) * bits
    mask = np.uint8((1 << bits) - 1)
    codes = ((packed[:, None] >> shifts) & mask).reshape(-1)[:dim]
    values: FloatArray = (lo + codes.astype(np.float32) * step).astype(np.float32)
    return values


def stored_bytes(dim: int, tier: str) -> int:
    """Bytes :func:`encode` writes for a ``dim``-vector at ``tier`` (the blob, no row overhead)."""
    bits = BITS[tier]
    if bits == 32:
        return 4 * dim
    per_byte = 8 // bits
    return 8 + -(-dim // per_byte)


def unit(matrix: npt.ArrayLike) -> FloatArray:
    """Rows of ``matrix`` scaled to unit length (zero rows stay zero), float32."""
    m = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    scaled: FloatArray = np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)
    return scaled.astype(np.float32)
