"""Attention functions, correct and buggy, that grade lab02's perturbation_test and jacobian_leaks.

Each one is Python SOURCE: it reaches the student's test as
{"__function__": source, "name": "attn_fn"} and is compiled in the worker
(runtime.decode_arg gives it torch, F, nn and math). All are named `attn_fn`
and carry no docstring, so the function object does not say which bug it has.

Every function maps X (T, d) to (T, d): a single-head self-attention with
fixed projections drawn from `torch.Generator().manual_seed(wseed)`, then a
body that differs from one function to the next. `pattern(T)` says which
outputs depend on which inputs (what autograd sees: output i, input j);
`forward_causal` says whether a perturbation of the forward pass can show a
leak. tests/test_lab02.py checks both against the functions themselves.

The instructor's grader uses the same list through lab02's exercise
definitions; `IMPLS`, `source` and `as_arg` are its public interface.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .judging02 import FAINT_LEAK, POSITION_LEAK  # the names lab02's judges group these functions by

FUNCTION_NAME = "attn_fn"

PRELUDE = '''_weights = {{}}  # (d, dtype) -> (W_q, W_k, W_v): drawn once per size, the same numbers on every call
_positions = {{}}  # T -> the index grids: a student's test calls this function T + 1 times or more


_BASE = torch.randn(3, 16, 16, generator=torch.Generator().manual_seed({wseed}), dtype=torch.float64)


def _draw(d, dtype):  # no random draw at call time for d <= 16: torch.func.jacfwd runs the first call under vmap
    if d <= 16:
        W = _BASE[:, :d, :d]                             # (3, d, d)
    else:
        W = torch.randn(3, d, d, generator=torch.Generator().manual_seed({wseed}), dtype=torch.float64)
    _weights[d, dtype] = tuple((W[n] / math.sqrt(2 * d)).to(dtype) for n in range(3))


def attn_fn(X, /):  # positional only: every input a test passes is recorded as evidence
    T, d = X.shape[-2], X.shape[-1]
    if (d, X.dtype) not in _weights:
        _draw(d, X.dtype)
    W_q, W_k, W_v = _weights[d, X.dtype]                # (d, d) each
    Q, K, V = X @ W_q, X @ W_k, X @ W_v                  # (T, d) each
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d)      # (T, T)
    if T not in _positions:
        _positions[T] = (torch.arange(T).unsqueeze(-1), torch.arange(T).unsqueeze(0))
    i, j = _positions[T]                                 # (T, 1) query index, (1, T) key index
'''


def _tril(T: int, k: int = 0) -> np.ndarray:
    return np.tril(np.ones((T, T), dtype=bool), k=k)


def _middle(T: int) -> int:
    return T // 2


# The tiny leak's Jacobian block is exactly TINY * I (about 7.6e-6 per entry, in any dtype): not zero, and
# far above the rounding of a correct function's zeros, which autograd gives exactly; a test that
# thresholds at 1e-4 or more misses it (the lab says: test for non-zero, not for "large").
TINY = 2.0 ** -17


def _tiny_pattern(T: int) -> np.ndarray:
    pattern = _tril(T)
    pattern[0, T - 1] = True
    return pattern


def _middle_pattern(T: int) -> np.ndarray:
    pattern = _tril(T)
    pattern[:, _middle(T)] = True
    return pattern


@dataclass(frozen=True)
class Impl:
    name: str
    body: str  # lines after PRELUDE, indented by 4 spaces
    forward_causal: bool  # True: changing X[p] never moves outputs < p (a perturbation test must say True)
    pattern: Callable[[int], np.ndarray] | None  # (T, T) bool: output i depends on input j (autograd); None: NaN
    perturbation: bool  # used to grade perturbation_test
    jacobian: bool  # used to grade jacobian_leaks
    faint: bool = False  # the leak is small by design: it moves outputs (or the Jacobian) by less than 1e-3


IMPLS: tuple[Impl, ...] = (
    # ---- correct (causal) functions
    Impl("attention", '''\
    weights = torch.softmax(scores.masked_fill(j > i, float("-inf")), dim=-1)  # (T, T)
    return weights @ V
''', True, _tril, True, True),
    Impl("position_wise", '''\
    return torch.tanh(Q) + V                             # each position on its own: no mixing
''', True, lambda T: np.eye(T, dtype=bool), True, True),
    Impl("prefix_mean", '''\
    counts = torch.arange(1, T + 1, dtype=X.dtype).unsqueeze(-1)   # (T, 1)
    return torch.cumsum(V, dim=-2) / counts              # mean of V[0..i]
''', True, _tril, True, False),
    # ---- bugs
    Impl("no_mask", '''\
    weights = torch.softmax(scores, dim=-1)              # (T, T)
    return weights @ V
''', False, lambda T: np.ones((T, T), dtype=bool), True, False),
    Impl("off_by_one", '''\
    weights = torch.softmax(scores.masked_fill(j > i + 1, float("-inf")), dim=-1)  # (T, T)
    return weights @ V
''', False, lambda T: _tril(T, 1), True, True),
    Impl("mask_after_softmax", '''\
    weights = torch.softmax(scores, dim=-1) * (j <= i)   # (T, T)
    return weights @ V
''', False, lambda T: np.ones((T, T), dtype=bool), True, False),
    Impl("diagonal_masked", '''\
    weights = torch.softmax(scores.masked_fill(j >= i, float("-inf")), dim=-1)  # (T, T)
    return weights @ V
''', False, None, True, False),
    Impl("middle_leak", '''\
    visible = (j <= i) | (j == T // 2)                   # (T, T)
    weights = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)
    return weights @ V
''', False, _middle_pattern, False, True),
    Impl("tiny_leak", '''\
    weights = torch.softmax(scores.masked_fill(j > i, float("-inf")), dim=-1)  # (T, T)
    reads = ((i == 0) & (j == T - 1)).to(X.dtype)        # (T, T)
    return weights @ V + TINY * (reads @ X)
'''.replace("TINY", repr(TINY)), False, lambda T: _tiny_pattern(T), False, True, faint=True),
    Impl("gradient_leak", '''\
    hard = F.one_hot(scores.masked_fill(j > i, float("-inf")).argmax(dim=-1), T).to(X.dtype)  # (T, T)
    soft = torch.softmax(scores, dim=-1)                 # surrogate for the gradient, without the mask
    weights = hard + (soft - soft.detach())              # straight-through: value of hard, gradient of soft
    return weights @ V
''', True, lambda T: np.ones((T, T), dtype=bool), False, True),
)

BY_NAME = {impl.name: impl for impl in IMPLS}
PERTURBATION = tuple(impl for impl in IMPLS if impl.perturbation)
JACOBIAN = tuple(impl for impl in IMPLS if impl.jacobian)


def position_leak(query: int, key: int) -> Impl:
    """Causal attention in which ONE earlier query also reads ONE later key: only perturbing `key` shows it.

    A test that skips position `key`, or compares only some earlier outputs,
    misses it; the grader draws one such bug per position.
    """
    assert 0 <= query < key

    def pattern(T: int) -> np.ndarray:
        allowed = _tril(T)
        if key < T:
            allowed[query, key] = True
        return allowed

    body = f'''\
    visible = (j <= i) | ((i == {query}) & (j == {key}))  # (T, T)
    weights = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)
    return weights @ V
'''
    return Impl(f"{POSITION_LEAK}_{query}_{key}", body, False, pattern, True, True)


# The faint leak moves one earlier output by at most 2 * FAINT (tanh keeps it bounded): below 1e-3 whatever
# the perturbation, far above float32 rounding (~1e-7 here). A test that compares within 1e-5 sees it, one
# within 1e-3 cannot: the tolerance belongs near the rounding noise.
FAINT = 4e-4


def faint_leak(query: int, key: int) -> Impl:
    """Causal attention plus a faint path from input `key` to output `query` < key (at most 2 * FAINT)."""
    assert 0 <= query < key

    def pattern(T: int) -> np.ndarray:
        allowed = _tril(T)
        if key < T:
            allowed[query, key] = True
        return allowed

    body = f'''\
    weights = torch.softmax(scores.masked_fill(j > i, float("-inf")), dim=-1)  # (T, T)
    reads = ((i == {query}) & (j == {key})).to(X.dtype)  # (T, T)
    return weights @ V + {FAINT} * torch.tanh(reads @ X)
'''
    return Impl(f"{FAINT_LEAK}_{query}_{key}", body, False, pattern, True, False, faint=True)


def impl_of(data: dict) -> Impl:
    """The Impl a case's data names: one of IMPLS, or a (faint) position leak with its query and key."""
    if data["impl"] == POSITION_LEAK:
        return position_leak(int(data["query"]), int(data["key"]))
    if data["impl"] == FAINT_LEAK:
        return faint_leak(int(data["query"]), int(data["key"]))
    return BY_NAME[data["impl"]]


def source(impl: Impl | str, wseed: int = 0) -> str:
    impl = BY_NAME[impl] if isinstance(impl, str) else impl
    return PRELUDE.format(wseed=int(wseed)) + impl.body


def as_arg(impl: Impl | str, wseed: int = 0, record: bool = False) -> dict:
    """The function as a call argument: the worker compiles it and hands the student a callable.

    With `record`, the worker notes every input the student's test passes to it (evidence).
    """
    arg = {"__function__": source(impl, wseed), "name": FUNCTION_NAME}
    if record:
        arg["record"] = True
    return arg


def compile_impl(impl: Impl | str, wseed: int = 0):
    """The function itself, for tests and demonstrations (trusted code only)."""
    import math

    import torch

    namespace = {"torch": torch, "F": torch.nn.functional, "nn": torch.nn, "math": math}
    exec(compile(source(impl, wseed), f"<{FUNCTION_NAME}>", "exec"), namespace)
    return namespace[FUNCTION_NAME]
