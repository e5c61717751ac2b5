"""lab02, causal attention and the perturbation test.

- causal_attention(Q, K, V) -> (out, weights) is judged against numpy in
  float64; a wrong answer is matched against the classic slips computed from
  the same inputs.
- perturbation_test(attn_fn, T, d, seed) -> bool and jacobian_leaks(attn_fn, T, d)
  -> bool (T, T) are the student's own tests. They are graded mutation-testing
  style: run on correct and on buggy attention functions (bugs02, passed as
  source), they must say "causal" for the correct ones and catch the bugs.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..i18n import N_
from ..exercise import Case, Exercise
from . import LabSpec, bugs02
from .judging02 import (ATOL, CausalAttentionJudge, JacobianLeaksJudge, PerturbationTestJudge,  # noqa: F401
                        StudentTest)
from .tensors import f32, mask_of, right_weights, rng_for, shape_str, softmax, tensor_arg


# ---------------------------------------------------------------- the math, in numpy (float64)
def weights_and_slips(Q: np.ndarray, K: np.ndarray) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    T, d_k = Q.shape[-2], Q.shape[-1]
    raw = Q @ np.swapaxes(K, -1, -2)  # (..., T, T)
    scaled = raw / math.sqrt(d_k)
    M = mask_of(T)
    right = softmax(scaled + M)
    lower = np.tril(np.ones((T, T)))
    slips = [
        ("no_mask", softmax(scaled)),
        ("forgot_scale", softmax(raw + M)),
        ("divided_by_dk", softmax(raw / d_k + M)),
        ("mask_after_softmax", softmax(scaled) * lower),
        ("wrong_axis", softmax(scaled + M, axis=-2)),
        ("diagonal_masked", softmax(scaled + mask_of(T, -1))),
        ("off_by_one", softmax(scaled + mask_of(T, 1))),
        ("wrong_triangle", softmax(scaled + M.T)),
        ("transposed_k", softmax(np.swapaxes(scaled, -1, -2) + M)),
    ]
    return right, slips


# ---------------------------------------------------------------- causal_attention
class CausalAttention(CausalAttentionJudge):
    """The cases of causal_attention and their numpy reference (judging02.CausalAttentionJudge judges)."""

    # (leading dims, T, d_k, d_v, scale of Q and K)
    PUBLIC = (((), 4, 3, 3, 1.5), ((2, 2), 5, 4, 3, 1.0), ((1,), 6, 8, 2, 1.0))
    # Hidden shapes, always all of them: the edges of the input domain (T = 1, d_k = 1, d_v = 1,
    # one or two leading dims, float64); the seed draws their values and two more random shapes.
    HIDDEN = (((), 1, 3, 2, 1.0, "float32"), ((3,), 1, 1, 1, 1.0, "float32"), ((), 5, 1, 2, 2.0, "float32"),
              ((2,), 4, 2, 1, 1.0, "float32"), ((2, 3), 3, 4, 2, 1.2, "float32"), ((), 7, 5, 4, 1.0, "float64"),
              ((2,), 6, 3, 3, 1.5, "float64"), ((1, 1, 2), 2, 2, 2, 1.0, "float32"),
              ((), 4, 3, 3, 1.5, "float32"))  # the first public shape again, other values: no answer kept by shape

    def cases(self, ctx, seed=None):
        specs = [(shape, T, dk, dv, scale, 1000 + n, True, "float32")
                 for n, (shape, T, dk, dv, scale) in enumerate(self.PUBLIC)]
        if seed is not None:
            rng = rng_for(seed, self.id)
            for lead, T, dk, dv, scale, dtype in self.HIDDEN:
                specs.append((lead, T, dk, dv, scale, int(rng.integers(0, 2**31)), False, dtype))
            for n in range(2):
                lead = tuple(int(x) for x in rng.integers(1, 4, size=int(rng.integers(0, 3))))
                specs.append((lead, int(rng.integers(2, 9)), int(rng.integers(1, 9)), int(rng.integers(1, 6)),
                              float(rng.uniform(0.8, 1.6)), int(rng.integers(0, 2**31)), False, "float32"))
        cases = []
        for lead, T, dk, dv, scale, data_seed, public, dtype in specs:
            rng = np.random.default_rng(data_seed)
            Q = np.round(rng.normal(size=(*lead, T, dk)) * scale, 4)
            K = np.round(rng.normal(size=(*lead, T, dk)) * scale, 4)
            V = np.round(rng.normal(size=(*lead, T, dv)), 4)
            name = f"Q, K {shape_str((*lead, T, dk))}, V {shape_str((*lead, T, dv))}"
            if dtype != "float32":
                name += f", {dtype}"
            cases.append(Case(
                name,
                {"kind": "call", "target": self.id,
                 "args": [tensor_arg(Q, dtype), tensor_arg(K, dtype), tensor_arg(V, dtype)]},
                public=public,
                data={"Q": Q.tolist(), "K": K.tolist(), "V": V.tolist(), "batched": bool(lead), "dtype": dtype},
            ))
        return cases

    @staticmethod
    def inputs(case: Case) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Q, K and V as the student's code receives them, in float64."""
        as_input = f32 if case.data.get("dtype", "float32") == "float32" else np.asarray
        return tuple(as_input(case.data[name]) for name in ("Q", "K", "V"))

    def reference(self, case: Case) -> dict:
        Q, K, V = self.inputs(case)
        right_w = right_weights(Q, K)
        return {"weights": right_w, "out": right_w @ V}

    def slip_references(self, case: Case) -> dict:
        Q, K, V = self.inputs(case)
        _, slips = weights_and_slips(Q, K)
        return {"weights": slips, "transposed": np.swapaxes(right_weights(Q, K), -1, -2) @ V}


# ---------------------------------------------------------------- the student's tests
class BugsTest(StudentTest):
    """A student's test run on the functions of bugs02: the cases, and each function as the reference."""

    def call(self, impl: bugs02.Impl, wseed: int, kwargs: dict) -> dict:
        return {"kind": "call", "target": self.id, "args": [bugs02.as_arg(impl, wseed, record=True)],
                "kwargs": kwargs}

    def case(self, impl: bugs02.Impl, wseed: int, kwargs: dict, public: bool, **data) -> Case:
        label = f"{self.id}({impl.name})" if public else f"{self.id}({impl.name}, {kwargs})"
        return Case(label, self.call(impl, wseed, kwargs), public=public,
                    data={"impl": impl.name, "kwargs": kwargs, "wseed": wseed, **data})

    def trusted_function(self, case: Case):
        return _trusted(bugs02.impl_of(_impl_data(case)), case.data["wseed"])


def _impl_data(case: Case) -> dict:
    return {"impl": case.data.get("base", case.data["impl"]), **{k: case.data[k] for k in ("query", "key")
                                                                 if k in case.data}}


def leak_witnessed(case: Case, output: dict) -> bool:
    """The test's recorded calls on this case's function show an earlier output moving (trusted re-run)."""
    return BugsTest.leak_witnessed(PerturbationTest(), case, output)


_TRUSTED: dict[tuple, Any] = {}


def _trusted(impl: bugs02.Impl, wseed: int):
    key = (impl.name, int(wseed))
    if key not in _TRUSTED:
        if len(_TRUSTED) > 512:
            _TRUSTED.clear()
        _TRUSTED[key] = bugs02.compile_impl(impl, wseed)
    return _TRUSTED[key]


class PerturbationTest(PerturbationTestJudge, BugsTest):
    """perturbation_test's cases: the public and hidden sets of bugs02's functions (the judge: judging02)."""

    public_T = 6  # passed explicitly (the signature's default is 8): the hidden set uses hidden_T
    hidden_T = 7  # above the public 6: a test of a hard-coded (public) size loses the hidden sweep

    def run_set(self, T: int, kwargs: dict, wseed: int, rng: np.random.Generator, public: bool) -> list[Case]:
        # The hidden set (other T, d, weights) re-runs the correct functions and the position sweep; the
        # whole-mask bugs show at any size, so the public set decides them.
        names = self.CORRECT + self.LEAK_BUGS + (self.NAN_DEFECT,) if public else ("attention", "position_wise")
        cases = [self.case(bugs02.BY_NAME[name], wseed, kwargs, public) for name in names]
        for key in range(1, T):
            query = int(rng.integers(0, key))
            cases.append(self.case(bugs02.position_leak(query, key), wseed, kwargs, public,
                                   base=bugs02.POSITION_LEAK, query=query, key=key, T=T))
        if public:  # at the signature's d and seed: the leak and what a test draws are the same every run
            key = int(rng.integers(1, T))
            query = int(rng.integers(0, key))
            cases.append(self.case(bugs02.faint_leak(query, key), wseed, kwargs, public,
                                   base=bugs02.FAINT_LEAK, query=query, key=key, T=T))
        return cases

    def cases(self, ctx, seed=None):
        cases = self.run_set(self.public_T, {"T": self.public_T}, 0, np.random.default_rng(0), True)
        if seed is not None:
            rng = rng_for(seed, self.id)
            # T is fixed, the signature's default and above the public 6: a test that ignores T and
            # perturbs a fixed number of positions loses the sweep whatever the seed, or never.
            T = self.hidden_T
            kwargs = {"T": T, "d": int(rng.integers(2, 7)), "seed": int(rng.integers(1, 10_000))}
            cases += self.run_set(T, kwargs, int(rng.integers(1, 2**31)), rng, False)
        return cases


class JacobianLeaks(JacobianLeaksJudge, BugsTest):
    """jacobian_leaks's cases, and each function's dependence pattern as the reference (the judge: judging02)."""

    public_kwargs = {"T": 6, "d": 2}  # d = 2: half the backward passes of the default d = 4
    hidden_T = 5
    # A Jacobian costs T * d backward passes: the hidden cases re-run correct attention and one
    # position leak (drawn per seed) on another size and other weights.
    hidden_impls = ("attention",)

    def cases(self, ctx, seed=None):
        cases = [self.case(impl, 0, self.public_kwargs, True) for impl in bugs02.JACOBIAN]
        if seed is not None:
            rng = rng_for(seed, self.id)
            T = self.hidden_T  # fixed, not the public 6: a pattern of a hard-coded size fails whatever the seed
            kwargs = {"T": T, "d": 2}
            wseed = int(rng.integers(1, 2**31))
            cases += [self.case(bugs02.BY_NAME[name], wseed, kwargs, False) for name in self.hidden_impls]
            key = int(rng.integers(1, T))
            query = int(rng.integers(0, key))
            cases.append(self.case(bugs02.position_leak(query, key), wseed, kwargs, False,
                                   base=bugs02.POSITION_LEAK, query=query, key=key))
        return cases

    def reference(self, case: Case) -> np.ndarray:
        return bugs02.impl_of(_impl_data(case)).pattern(case.data["kwargs"]["T"])


EXERCISES: list[Exercise] = [CausalAttention(), PerturbationTest(), JacobianLeaks()]


# Message keys this module builds at run time (diagnosed(name), f"lab02.<part>.{name}"), listed for `make catalogs`.
N_(
    "lab02.always_false", "lab02.always_true", "lab02.crashes_on_nan", "lab02.flags_correct",
    "lab02.future_weight", "lab02.impl.attention", "lab02.impl.diagonal_masked", "lab02.impl.gradient_leak",
    "lab02.impl.mask_after_softmax", "lab02.impl.middle_leak", "lab02.impl.no_mask", "lab02.impl.off_by_one",
    "lab02.impl.position_leak", "lab02.impl.position_wise", "lab02.impl.prefix_mean", "lab02.missed_bugs",
    "lab02.missed_positions", "lab02.nan_perturbation", "lab02.no_evidence", "lab02.outputs_swapped",
    "lab02.raises_on_bug", "lab02.rows_not_normalised", "lab02.tolerance_too_loose", "lab02.impl.tiny_leak",
)

# The stubs' hints (Lab.hint(exercise), which a stub raises in the notebook's language).
N_(
    "lab02.hint.causal_attention", "lab02.hint.perturbation_test", "lab02.hint.jacobian_leaks",
)

LAB = LabSpec(id="lab02", exercises=EXERCISES)
