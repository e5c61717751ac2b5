"""Helpers the labs' tensor exercises share: tensor arguments, hidden-case seeds, numpy references.

lab01 builds its masks on them, labs 02 and 05 compute attention with them, and
labs 03 and 04 draw their hidden cases with rng_for. Keeping them out of any one
lab's module means that changing a lab (its points, say) re-executes only the
notebooks of that lab (labbook.dependencies). The judge of one-tensor answers
(TensorExercise) is in judging.py, which the student release ships as it is.
"""
from __future__ import annotations

import math
import zlib
import numpy as np

from .judging import TensorExercise, shape_str  # noqa: F401  (the judging half, which the labs read here)


def tensor_arg(values, dtype: str) -> dict:
    """An argument that reaches the student's code as a torch tensor."""
    return {"__tensor__": np.asarray(values).tolist(), "dtype": dtype}


def rng_for(seed: int, exercise_id: str) -> np.random.Generator:
    """The hidden cases of one exercise: drawn from the instructor's seed, different per exercise."""
    return np.random.default_rng([seed, zlib.crc32(exercise_id.encode())])


# ---------------------------------------------------------------- numpy references of causal attention (labs 02, 05)
def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """An all -inf slice gives NaN, as torch.softmax does."""
    with np.errstate(invalid="ignore", over="ignore"):
        shifted = x - np.max(x, axis=axis, keepdims=True)
        e = np.exp(shifted)
        return e / e.sum(axis=axis, keepdims=True)


def mask_of(T: int, k: int = 0) -> np.ndarray:
    """Additive mask: 0 where j <= i + k, -inf elsewhere."""
    return np.where(np.tril(np.ones((T, T), dtype=bool), k=k), 0.0, -np.inf)


def right_weights(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """softmax(Q Kᵀ / √d_k + M): the weights a right answer returns."""
    T, d_k = Q.shape[-2], Q.shape[-1]
    return softmax(Q @ np.swapaxes(K, -1, -2) / math.sqrt(d_k) + mask_of(T))  # (..., T, T)


def f32(values: np.ndarray) -> np.ndarray:
    """What the student's code receives: the float32 tensor, read back as float64."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)
