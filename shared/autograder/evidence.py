"""Evidence behind a student's test verdict: did the test's own calls reveal the leak it reports?

A student's test (lab02's perturbation_test, lab03's prefix_test) receives a
function and says whether it is causal. The worker records the inputs the test
passed to that function (runtime's "record" flag); the grader re-runs its own,
trusted copy of the function on them. A verdict "not causal" earns credit only
when two recorded inputs that agree up to some position give different outputs
before it: a test that never calls the function, or that recognises a bug by
its code, shows no such pair and earns what `return True` earns.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .exercise import Array, decode

MAX_SEQUENCES = 512  # sequences kept for comparison, at most
MAX_PAIRS = 8192  # pairs compared for one function: the grader's time stays bounded whatever a test records


def recorded_inputs(output: dict, which: int = 0) -> list[np.ndarray]:
    """The inputs recorded for the `which`-th recorded function of one call (plain arrays).

    A snapshot is a numpy array (the grader's own log of a remote function's
    calls, grader/remote.py) or runtime's plain encoding (in-process `check`).
    """
    calls = output.get("calls")
    if not isinstance(calls, list) or len(calls) <= which or not isinstance(calls[which], list):
        return []
    arrays = []
    for snapshot in calls[which]:
        if isinstance(snapshot, np.ndarray):
            if snapshot.ndim >= 1 and snapshot.dtype.kind in "biuf":
                arrays.append(snapshot.astype(float, copy=False))
            continue
        value = decode(snapshot) if isinstance(snapshot, dict) else None
        # a shape-only record (a torch.func wrapper) decodes to a plain dict, whose .values is a method
        if isinstance(value, Array) and value.values.ndim >= 1:
            arrays.append(np.asarray(value.values, dtype=float))
    return arrays


def recorded_shapes(output: dict, which: int = 0) -> list[tuple[int, ...]]:
    """Shapes of every recorded input, values or not (torch.func wrappers give a shape only)."""
    calls = output.get("calls")
    if not isinstance(calls, list) or len(calls) <= which or not isinstance(calls[which], list):
        return []
    shapes = []
    for snapshot in calls[which]:
        if isinstance(snapshot, np.ndarray):
            shapes.append(tuple(int(n) for n in snapshot.shape))
        elif isinstance(snapshot, dict):
            shape = snapshot.get("shape", snapshot.get("__shape__"))
            if isinstance(shape, list) and all(isinstance(n, int) for n in shape):
                shapes.append(tuple(shape))
    return shapes


def split_sequences(x: np.ndarray, y: np.ndarray, feature_dims: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(input, output) per sequence: leading batch dimensions become separate sequences.

    `feature_dims` is how many trailing dimensions of x follow the time axis
    (1 for X of shape (..., T, d), 0 for token ids of shape (..., T)).
    """
    time_axis = x.ndim - 1 - feature_dims
    if time_axis < 0 or y.ndim < time_axis + 1 or x.shape[:time_axis + 1] != y.shape[:time_axis + 1]:
        return []
    lead = x.shape[:time_axis]
    xs = x.reshape((-1,) + x.shape[time_axis:])
    ys = y.reshape((-1,) + y.shape[time_axis:])
    return [(xs[n], ys[n]) for n in range(int(np.prod(lead, dtype=int)))]


def reveals_leak(sequences: list[tuple[np.ndarray, np.ndarray]], atol: float = 1e-9) -> bool:
    """True when two sequences share a prefix of inputs but not the outputs on that prefix."""
    sequences = sequences[:MAX_SEQUENCES]
    for a in range(len(sequences)):
        xa, ya = sequences[a]
        for b in range(a + 1, len(sequences)):
            xb, yb = sequences[b]
            if xa.shape[1:] != xb.shape[1:] or ya.shape[1:] != yb.shape[1:]:
                continue
            length = min(len(xa), len(xb))
            if length == 0:
                continue
            same = np.all((xa[:length] == xb[:length]).reshape(length, -1), axis=1)  # (length,)
            prefix = length if same.all() else int(np.argmin(same))
            if prefix and _moved(ya[:prefix], yb[:prefix], atol):
                return True
    return False


def _moved(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    with np.errstate(invalid="ignore"):
        differs = np.abs(a - b) > atol
    return bool((differs | (np.isnan(a) != np.isnan(b))).any())


_OUTPUTS: dict[tuple, np.ndarray] = {}


def trusted_output(key: tuple, x: np.ndarray, run: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """run(x), remembered: students who keep the default seed hand the same inputs to the same function."""
    full = (key, x.shape, x.tobytes())
    if full not in _OUTPUTS:
        if len(_OUTPUTS) > 4096:
            _OUTPUTS.clear()
        _OUTPUTS[full] = np.asarray(run(x), dtype=float)
    return _OUTPUTS[full]


def witnessed(inputs: list[np.ndarray], run: Callable[[np.ndarray], np.ndarray], feature_dims: int,
              key: tuple | None = None) -> bool:
    """Whether the recorded `inputs`, run through the trusted `run`, show a leak.

    Outputs are computed one input at a time and each new sequence is compared
    with those before it, so the usual test (a base input, then one change per
    position) is settled after the runs up to the leaking position.
    """
    _one_thread()
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    pairs = 0
    for x in inputs:
        try:
            y = trusted_output(key, x, run) if key is not None else np.asarray(run(x), dtype=float)
        except Exception:  # an input the function cannot take (wrong shape, bad ids) is no evidence
            continue
        for sequence in split_sequences(x, y, feature_dims):
            if len(seen) >= MAX_SEQUENCES:
                return False
            for earlier in seen:  # the first recorded input (a test's base) is compared first
                pairs += 1
                if pairs > MAX_PAIRS:
                    return False
                if reveals_leak([earlier, sequence]):
                    return True
            seen.append(sequence)
    return False


def _one_thread() -> None:
    """The grader re-runs tiny functions: torch's thread pool costs more than it saves and competes with the workers."""
    import torch

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
