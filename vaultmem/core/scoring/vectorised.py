"""One definition for one memory and for columns of n: the input and output rules of core maths.

The scores of docs/user-guide.md, "Scores": every score function accepts floats or numpy columns
(broadcast against each other) and returns a ``float`` when every input was a scalar, else a
float64 array of the broadcast shape, usually ``(n,)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
ArrayIn = npt.NDArray[Any] | Sequence[float]
"""An input column: an ``np.ndarray`` (any real dtype) or a list of numbers."""


def as_floats(name: str, value: float | ArrayIn) -> FloatArray:
    """``value`` as a float64 array; ``ValueError`` naming ``name`` if it holds NaN."""
    array = np.asarray(value, dtype=np.float64)
    if np.isnan(array).any():
        raise ValueError(f"{name} must be a number, not NaN")
    return array


def all_scalar(*values: object) -> bool:
    """True when no value is an array, list or tuple (the caller passed one memory)."""
    return not any(isinstance(v, np.ndarray | list | tuple) for v in values)


def scalar_or_array(result: FloatArray, *inputs: object) -> float | FloatArray:
    """``float`` when every input was a scalar, else the float64 array itself."""
    if all_scalar(*inputs):
        return float(result)
    return np.asarray(result, dtype=np.float64)


def per_distinct(values: npt.NDArray[Any], value_of: Callable[[str], float]) -> FloatArray:
    """``value_of(str(v))`` for each ``v`` of ``values`` -> float64 array of the same shape.

    ``value_of`` runs once per distinct ``str(v)`` (a few layers or sources among 100,000
    memories), found with a dict in one pass rather than by sorting the column.
    """
    keys = list(map(str, np.asarray(values, dtype=object).ravel().tolist()))
    position = {key: i for i, key in enumerate(dict.fromkeys(keys))}
    index = np.fromiter(map(position.__getitem__, keys), dtype=np.intp, count=len(keys))
    table = np.array([value_of(key) for key in position], dtype=np.float64)
    result = table[index] if len(table) else np.zeros(0, dtype=np.float64)
    return np.asarray(result.reshape(np.shape(values)), dtype=np.float64)
