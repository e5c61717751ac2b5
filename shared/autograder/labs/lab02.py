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

from .. import evidence, i18n
from ..exercise import Array, Case, Exercise, Feedback, Result, close, decode, describe, first_difference, value_mismatch
from . import LabSpec, bugs02
from .lab01 import TensorExercise, is_torch_bool, is_torch_float, rng_for, shape_str, tensor_arg

ATOL = 1e-5  # the issue: equals F.scaled_dot_product_attention within 1e-5
SLIP_ATOL = 1e-4


# ---------------------------------------------------------------- the math, in numpy (float64)
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
        ("wrong_triangle", softmax(scaled + M.T)),
        ("transposed_k", softmax(np.swapaxes(scaled, -1, -2) + M)),
    ]
    return right, slips


def f32(values: np.ndarray) -> np.ndarray:
    """What the student's code receives: the float32 tensor, read back as float64."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


# ---------------------------------------------------------------- causal_attention
class CausalAttention(TensorExercise):
    id = "causal_attention"
    points = 4
    section = "03 §8"
    forbidden_calls = ("F.scaled_dot_product_attention", "nn.MultiheadAttention")
    sections = {"forgot_scale": "03 §2", "divided_by_dk": "03 §2", "no_mask": "02 §0", "diagonal_masked": "08 §3",
                "wrong_triangle": "02 §0", "transposed_k": "03 §1", "wrong_axis": "03 §4",
                "mask_after_softmax": "08 §1", "rows_not_normalised": "08 §1", "weights_transposed": "03 §5",
                "future_weight": "02 §0", "batch_dims": "06 §1"}
    diagnoses = ("no_mask", "forgot_scale", "divided_by_dk", "mask_after_softmax", "wrong_axis", "diagonal_masked",
                 "wrong_triangle", "transposed_k", "weights_transposed", "outputs_swapped", "rows_not_normalised",
                 "future_weight", "batch_dims")

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

    def judge(self, ctx, cases, outputs):
        result = super().judge(ctx, cases, outputs)
        if result.status == "error":
            failing = next(i for i, o in enumerate(outputs) if "error" in o)
            if self.only_batched_fails(cases, outputs, failing):
                result.feedback.append(Feedback("lab02.batch_dims", {}))
                result.feedback.append(Feedback("common.see_section", {"section": self.sections["batch_dims"]}))
                result.diagnosis = "batch_dims"
        return result

    @staticmethod
    def only_batched_fails(cases, outputs, failing: int) -> bool:
        unbatched = [i for i, c in enumerate(cases) if not c.data["batched"]]
        return bool(cases[failing].data["batched"] and unbatched
                    and all("ok" in outputs[i] for i in unbatched))

    def judge_outputs(self, ctx, cases, values):
        results = [self.judge_one(case, got) for case, got in zip(cases, values)]
        # "It works for (T, d) inputs" is said only when it does for every (T, d) case, hidden ones
        # included: a slip that a batched case happens to show first (d_k vs d_v, d_k = 1) is not about batches.
        unbatched = [result for case, result in zip(cases, results) if not case.data["batched"]]
        unbatched_ok = bool(unbatched) and all(result is None for result in unbatched)
        for case, result in zip(cases, results):
            if result is not None:
                if case.data["batched"] and unbatched_ok:
                    # Right for (T, d), wrong with batch dims: say so, after what went wrong.
                    result.feedback = [f for f in result.feedback if f.key != "common.see_section"]
                    result.feedback.append(Feedback("lab02.batch_dims", {}))
                    result.feedback.append(Feedback("common.see_section", {"section": self.sections["batch_dims"]}))
                    result.diagnosis = "batch_dims"
                return result
        return self.passed()

    def judge_one(self, case: Case, got: Any) -> Result | None:
        as_input = f32 if case.data.get("dtype", "float32") == "float32" else np.asarray
        Q, K, V = (as_input(case.data[name]) for name in ("Q", "K", "V"))
        T = Q.shape[-2]
        right_w = right_weights(Q, K)
        right_out = right_w @ V
        w_shape, out_shape = right_w.shape, right_out.shape
        expected = f"tuple(float {shape_str(out_shape)}, float {shape_str(w_shape)})"
        if not isinstance(got, (tuple, list)) or len(got) != 2 or not all(isinstance(g, Array) for g in got):
            return self.wrong_type(case, got, expected)
        out, w = got
        if (out.shape == w_shape and w.shape == out_shape and out.shape != w.shape
                and close(out.values, right_w, SLIP_ATOL) and close(w.values, right_out, SLIP_ATOL)):
            return self.diagnose("outputs_swapped")
        if not (is_torch_float(out) and is_torch_float(w)) or out.shape != out_shape or w.shape != w_shape:
            return self.result(
                0, "failed", Feedback("common.failed", {"name": self.id}),
                Feedback("common.wrong_shape", {"case": case.name, "expected": expected, "got": describe(tuple(got))}),
                diagnosis="wrong_shape",
            )
        weights = w.values.astype(float)
        if not close(weights, right_w, ATOL):
            _, slips = weights_and_slips(Q, K)  # only for a wrong answer: eight softmaxes per case
            for name, slip in slips:
                if name == "diagonal_masked":
                    if T > 1 and close(weights[..., 1:, :], slip[..., 1:, :], SLIP_ATOL):
                        return self.diagnose(name)
                elif close(weights, slip, SLIP_ATOL):
                    return self.diagnose(name)
            with np.errstate(invalid="ignore"):
                sums = weights.sum(axis=-1)
            bad = np.argwhere(~(np.abs(sums - 1.0) <= 1e-3))
            if bad.size:
                index = tuple(int(x) for x in bad[0])
                return self.diagnose("rows_not_normalised", row=index[-1], total=_fmt(sums[index]))
            future = np.argwhere(np.triu(np.abs(weights) > 1e-6, k=1))
            if future.size:
                index = tuple(int(x) for x in future[0])
                return self.diagnose("future_weight", i=index[-2], j=index[-1], value=_fmt(weights[index]))
            index = first_difference(weights, right_w, ATOL)
            return value_mismatch(self, case, weights, index or (0,) * weights.ndim)
        output = out.values.astype(float)
        if not close(output, right_out, ATOL):
            if close(output, np.swapaxes(right_w, -1, -2) @ V, SLIP_ATOL) and T > 1:
                return self.diagnose("weights_transposed")
            index = first_difference(output, right_out, ATOL)
            return value_mismatch(self, case, output, index or (0,) * output.ndim)
        return None


def _fmt(x: float) -> str:
    return "nan" if not np.isfinite(x) else f"{x:.4g}"


# ---------------------------------------------------------------- the student's tests
def _verdict(value: Any) -> bool | None:
    """The student's answer as a bool: True, False, a 0-d bool tensor or array; None otherwise."""
    if type(value) is bool:
        return value
    if isinstance(value, Array) and value.is_bool and value.shape == ():
        return bool(value.values)
    return None


class StudentTest(Exercise):
    """A test written by the student, run on the functions of bugs02 (each case: one function)."""

    section = "07 §1"
    sections: dict[str, str] = {}

    def call(self, impl: bugs02.Impl, wseed: int, kwargs: dict) -> dict:
        return {"kind": "call", "target": self.id, "args": [bugs02.as_arg(impl, wseed, record=True)],
                "kwargs": kwargs}

    def case(self, impl: bugs02.Impl, wseed: int, kwargs: dict, public: bool, **data) -> Case:
        label = f"{self.id}({impl.name})" if public else f"{self.id}({impl.name}, {kwargs})"
        return Case(label, self.call(impl, wseed, kwargs), public=public,
                    data={"impl": impl.name, "kwargs": kwargs, "wseed": wseed, **data})

    def judge(self, ctx, cases, outputs):
        for output in outputs:
            if "missing" in output:
                return self.result(0, "missing", Feedback("common.missing", {"name": output["missing"]}))
        if any("not_answered" in output for output in outputs):
            return self.result(0, "not_answered", Feedback("common.not_answered", {"name": self.id}))
        return self.judge_runs(cases, outputs)

    def judge_runs(self, cases: list[Case], outputs: list[dict]) -> Result:
        raise NotImplementedError

    def feedback(self, diagnosis: str, *items: Feedback) -> list[Feedback]:
        out = [Feedback("common.failed", {"name": self.id}), *items]
        section = self.sections.get(diagnosis, self.section)
        if section:
            out.append(Feedback("common.see_section", {"section": section}))
        return out

    def crashed(self, case: Case, output: dict) -> Result:
        key = "common.timeout" if "timeout" in output else "common.raised"
        error = output.get("error", {})
        return self.result(0, "timeout" if "timeout" in output else "error",
                           Feedback(key, {"name": self.id, "case": case.name, "type": error.get("type", ""),
                                          "message": error.get("message", "")}))


def _impl_data(case: Case) -> dict:
    return {"impl": case.data.get("base", case.data["impl"]), **{k: case.data[k] for k in ("query", "key")
                                                                 if k in case.data}}


def leak_witnessed(case: Case, output: dict) -> bool:
    """The test's recorded calls on this buggy function show an earlier output moving (trusted re-run)."""
    inputs = evidence.recorded_inputs(output)
    if not inputs:
        return False
    function = _trusted(bugs02.impl_of(_impl_data(case)), case.data["wseed"])

    def run(x: np.ndarray) -> np.ndarray:
        import torch

        if x.ndim < 2 or x.shape[-2] > 64 or x.shape[-1] > 64 or x.ndim > 4:
            raise ValueError("not an input of this exercise")
        with torch.no_grad():
            return function(torch.tensor(x, dtype=torch.float64)).numpy()

    impl = bugs02.impl_of(_impl_data(case))
    return evidence.witnessed(inputs, run, feature_dims=1, key=("lab02", impl.name, int(case.data["wseed"])))


_TRUSTED: dict[tuple, Any] = {}


def _trusted(impl: bugs02.Impl, wseed: int):
    key = (impl.name, int(wseed))
    if key not in _TRUSTED:
        if len(_TRUSTED) > 512:
            _TRUSTED.clear()
        _TRUSTED[key] = bugs02.compile_impl(impl, wseed)
    return _TRUSTED[key]


class PerturbationTest(StudentTest):
    """perturbation_test(attn_fn, T, d, seed) -> bool, graded on correct and buggy functions.

    Five points, one per check: three whole-mask bugs (no mask, off by one,
    mask after the softmax), the position sweep (for every p = 1 … T-1 one
    function in which a single earlier query also reads key p: all must be
    caught), and the NaN rule (a function whose output is not finite is a
    defect, not a leak: either verdict is right, but the test must answer with
    a bool). A bug counts as caught only when the test said False AND its
    recorded calls show the leak. Nothing counts unless every correct function
    gets True.
    """

    id = "perturbation_test"
    LEAK_BUGS = ("no_mask", "off_by_one", "mask_after_softmax")
    NAN_DEFECT = "diagonal_masked"
    CORRECT = ("attention", "position_wise", "prefix_mean")
    CHECKS = LEAK_BUGS + ("positions", "nan_rule")
    points = float(len(CHECKS))
    public_T = 6  # passed explicitly (the signature's default is 8): the hidden set uses hidden_T
    hidden_T = 7  # above the public 6: a test of a hard-coded (public) size loses the hidden sweep
    sections = {"missed_positions": "07 §6", "nan_perturbation": "07 §6", "crashes_on_nan": "08 §3",
                "no_evidence": "07 §1"}
    diagnoses = ("always_true", "always_false", "flags_correct", "nan_perturbation", "missed_positions",
                 "crashes_on_nan", "raises_on_bug", "no_evidence", "missed_bugs")

    def run_set(self, T: int, kwargs: dict, wseed: int, rng: np.random.Generator, public: bool) -> list[Case]:
        # The hidden set (other T, d, weights) re-runs the correct functions and the position sweep; the
        # whole-mask bugs show at any size, so the public set decides them.
        names = self.CORRECT + self.LEAK_BUGS + (self.NAN_DEFECT,) if public else ("attention", "position_wise")
        cases = [self.case(bugs02.BY_NAME[name], wseed, kwargs, public) for name in names]
        for key in range(1, T):
            query = int(rng.integers(0, key))
            cases.append(self.case(bugs02.position_leak(query, key), wseed, kwargs, public,
                                   base=bugs02.POSITION_LEAK, query=query, key=key, T=T))
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

    def judge_runs(self, cases, outputs):
        verdicts: dict[str, list] = {}  # check or correct function -> verdicts (True, False, "error", "unsupported")
        missed_keys: list[int] = []
        for case, output in zip(cases, outputs):
            name = case.data.get("base", case.data["impl"])
            group = "positions" if name == bugs02.POSITION_LEAK else ("nan_rule" if name == self.NAN_DEFECT
                                                                      else name)
            if "ok" not in output:
                if name in self.CORRECT:
                    return self.crashed(case, output)
                verdicts.setdefault(group, []).append("error")
                if group == "positions":
                    missed_keys.append(case.data["key"])
                continue
            value = decode(output["ok"])
            verdict = _verdict(value)
            if verdict is None:
                return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                                   Feedback("common.wrong_shape", {"case": case.name, "expected": "bool",
                                                                   "got": describe(value)}),
                                   diagnosis="wrong_shape")
            if verdict is False and group not in self.CORRECT and group != "nan_rule" \
                    and not leak_witnessed(case, output):
                verdict = "unsupported"
            if group == "positions" and verdict is not False:
                missed_keys.append(case.data["key"])
            verdicts.setdefault(group, []).append(verdict)
        flagged = [name for name in self.CORRECT if not all(v is True for v in verdicts[name])]
        said = [v for vs in verdicts.values() for v in vs]
        if flagged:
            if all(v is False for v in said if v != "unsupported"):
                return self.diagnose_test("always_false")
            if flagged == ["attention"]:
                return self.diagnose_test("nan_perturbation")
            return self.diagnose_test("flags_correct", extra=[Feedback(f"lab02.impl.{n}") for n in flagged])
        caught = [check for check in self.LEAK_BUGS + ("positions",) if all(v is False for v in verdicts[check])]
        nan_ok = all(v in (True, False) for v in verdicts["nan_rule"])
        if nan_ok and caught:  # answering with a bool is worth a point only in a test that finds something
            caught.append("nan_rule")
        missed = [check for check in self.CHECKS if check not in caught]
        if not missed:
            return self.passed(Feedback("lab02.caught_all", {}))
        bug_verdicts = [v for check in self.LEAK_BUGS + ("positions",) for v in verdicts[check]]
        if all(v is True for v in bug_verdicts):
            diagnosis = "always_true" if nan_ok else "crashes_on_nan"
        elif "unsupported" in bug_verdicts:
            diagnosis = "no_evidence"
        elif "error" in bug_verdicts:
            diagnosis = "raises_on_bug"
        elif missed == ["nan_rule"]:
            diagnosis = "crashes_on_nan"
        elif missed == ["positions"]:
            diagnosis = "missed_positions"
        else:
            diagnosis = "missed_bugs"
        listing = [Feedback("lab02.missed", {"caught": len(caught), "total": len(self.CHECKS)})]
        for check in missed:
            if check == "positions":
                keys = ", ".join(str(k) for k in sorted(set(missed_keys)))
                listing.append(Feedback("lab02.impl.position_leaks", {"positions": keys}))
            elif check == "nan_rule":
                if not nan_ok:
                    listing.append(Feedback("lab02.impl.nan_rule"))
            else:
                listing.append(Feedback(f"lab02.impl.{check}"))
        return self.diagnose_test(diagnosis, points=float(len(caught)), extra=listing)

    def diagnose_test(self, diagnosis: str, points: float = 0.0, extra: list[Feedback] | None = None) -> Result:
        items = [Feedback(f"lab02.{diagnosis}", {})]
        return self.result(points, "failed", *self.feedback(diagnosis, *items, *(extra or [])), diagnosis=diagnosis)


class JacobianLeaks(StudentTest):
    """jacobian_leaks(attn_fn, T, d) -> bool (T, T): which outputs depend on which inputs, per autograd.

    The whole dependence pattern is the answer; the leaking cells alone (above
    the diagonal, what the name suggests) are accepted too, if used for every
    function. A case counts only if the test called the function on an input
    of shape (..., T, d): a pattern read off the function's code earns nothing.
    """

    id = "jacobian_leaks"
    points = 3
    section = "07 §3"
    public_kwargs = {"T": 6, "d": 2}  # d = 2: half the backward passes of the default d = 4
    hidden_T = 5
    # A Jacobian costs T * d backward passes: the hidden cases re-run correct attention and one
    # position leak (drawn per seed) on another size and other weights.
    hidden_impls = ("attention",)
    diagnoses = ("jacobian_transposed", "gradient_leak_missed", "threshold_too_high", "no_evidence")

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

    @staticmethod
    def called(case: Case, output: dict) -> bool:
        T, d = case.data["kwargs"]["T"], case.data["kwargs"]["d"]
        return any(len(shape) >= 2 and shape[-2:] == (T, d) for shape in evidence.recorded_shapes(output))

    def judge_runs(self, cases, outputs):
        answers: list[tuple[Case, np.ndarray, np.ndarray]] = []
        for case, output in zip(cases, outputs):
            if "ok" not in output:
                return self.crashed(case, output)
            impl = bugs02.impl_of(_impl_data(case))
            T = case.data["kwargs"]["T"]
            want = impl.pattern(T)
            got = decode(output["ok"])
            if not is_torch_bool(got) or got.shape != want.shape:
                expected = f"bool {shape_str(want.shape)}"
                if not (isinstance(got, Array) and not got.dtype.startswith("numpy.")):
                    expected = "torch.Tensor " + expected
                return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                                   Feedback("common.wrong_shape", {"case": case.name, "expected": expected,
                                                                   "got": describe(got)}),
                                   diagnosis="wrong_shape")
            if not self.called(case, output):
                return self.result(0, "failed", *self.feedback("no_evidence", Feedback("lab02.jacobian_no_call",
                                                                                       {"case": case.name})),
                                   diagnosis="no_evidence")
            answers.append((case, got.values.astype(bool), want))
        for convention in (lambda w: w, lambda w: w & ~np.tril(np.ones_like(w))):
            if all(np.array_equal(a, convention(w)) for _, a, w in answers):
                return self.passed()
        wrong = [(c, a, w) for c, a, w in answers if not np.array_equal(a, w)]
        if all(np.array_equal(a, w.T) for _, a, w in wrong):
            return self.result(0, "failed", *self.feedback("jacobian_transposed", Feedback("lab02.jacobian_transposed", {})),
                               diagnosis="jacobian_transposed")
        if all(c.data["impl"] == "gradient_leak" and not np.triu(a, 1).any() for c, a, _ in wrong):
            return self.result(0, "failed", *self.feedback("gradient_leak_missed",
                                                            Feedback("lab02.gradient_leak_missed", {})),
                               diagnosis="gradient_leak_missed")
        if all(not (a & ~w).any() for _, a, w in wrong):
            return self.result(0, "failed", *self.feedback("threshold_too_high",
                                                            Feedback("lab02.threshold_too_high", {})),
                               diagnosis="threshold_too_high")
        case, answer, want = wrong[0]
        index = tuple(int(x) for x in np.argwhere(answer != want)[0])
        impl_key = "position_leak" if case.data.get("base") == bugs02.POSITION_LEAK else case.data["impl"]
        return self.result(0, "failed", *self.feedback(
            "wrong_values",
            Feedback("lab02.pattern_wrong", {"case": case.name, "i": index[0], "j": index[1],
                                             "got": str(bool(answer[index]))}),
            Feedback(f"lab02.impl.{impl_key}", {k: case.data[k] for k in ("query", "key") if k in case.data})),
            diagnosis="wrong_values")



EXERCISES: list[Exercise] = [CausalAttention(), PerturbationTest(), JacobianLeaks()]


MESSAGES = {
    "lab02.demo_unsolved": {
        "en": "(This demonstration uses your functions: solve the exercises above first.)",
        "es": "(Esta demostración usa tus funciones: resuelve primero los ejercicios de arriba.)",
        "de": "(Diese Vorführung verwendet deine Funktionen: löse zuerst die Aufgaben oben.)",
        "hi-Latn": "(Yeh demo tumhare functions use karta hai: pehle upar wali exercises solve karo.)",
    },
    "lab02.outputs_swapped": {
        "en": "you returned (weights, out): the order is (out, weights).",
        "es": "devolviste (weights, out): el orden es (out, weights).",
        "de": "du hast (weights, out) zurückgegeben: die Reihenfolge ist (out, weights).",
        "hi-Latn": "tumne (weights, out) return kiya: order (out, weights) hai.",
    },
    "lab02.rows_not_normalised": {
        "en": "row {row} of your weights sums to {total}, not 1. Each row is a softmax over the keys that query may read: mask the scores (add -inf) before the softmax, never the weights after it.",
        "es": "la fila {row} de tus pesos suma {total}, no 1. Cada fila es un softmax sobre las keys que esa query puede leer: enmascara los scores (suma -inf) antes del softmax, nunca los pesos después.",
        "de": "Zeile {row} deiner Gewichte summiert sich zu {total}, nicht zu 1. Jede Zeile ist ein Softmax über die Keys, die diese Query lesen darf: maskiere die Scores (addiere -inf) vor dem Softmax, nie die Gewichte danach.",
        "hi-Latn": "tumhare weights ki row {row} ka sum {total} hai, 1 nahi. Har row un keys par softmax hai jo woh query padh sakti hai: scores ko softmax se pehle mask karo (-inf add karo), weights ko baad mein kabhi nahi.",
    },
    "lab02.future_weight": {
        "en": "weights[{i}, {j}] = {value}, but key {j} comes after query {i}: every weight above the diagonal must be exactly 0.",
        "es": "weights[{i}, {j}] = {value}, pero la key {j} viene después de la query {i}: todo peso por encima de la diagonal debe ser exactamente 0.",
        "de": "weights[{i}, {j}] = {value}, aber Key {j} kommt nach Query {i}: jedes Gewicht über der Diagonale muss genau 0 sein.",
        "hi-Latn": "weights[{i}, {j}] = {value}, lekin key {j} query {i} ke baad aati hai: diagonal ke upar har weight exactly 0 hona chahiye.",
    },
    "lab02.batch_dims": {
        "en": "It works for (T, d) inputs but not with leading batch dimensions (..., T, d): transpose with K.transpose(-2, -1) (not K.T), take T = Q.shape[-2] and the softmax over dim=-1.",
        "es": "Funciona con entradas (T, d) pero no con dimensiones de batch delante (..., T, d): traspón con K.transpose(-2, -1) (no K.T), toma T = Q.shape[-2] y el softmax sobre dim=-1.",
        "de": "Für Eingaben (T, d) klappt es, aber nicht mit vorangestellten Batch-Dimensionen (..., T, d): transponiere mit K.transpose(-2, -1) (nicht K.T), nimm T = Q.shape[-2] und den Softmax über dim=-1.",
        "hi-Latn": "(T, d) inputs ke liye chalta hai lekin aage batch dimensions (..., T, d) ke saath nahi: K.transpose(-2, -1) se transpose karo (K.T nahi), T = Q.shape[-2] lo aur softmax dim=-1 par.",
    },
    "lab02.always_true": {
        "en": "your test says True (causal) for every function, the buggy ones included. For each position p, change X[p] and compare the outputs at positions < p: if any moved, return False.",
        "es": "tu test dice True (causal) para todas las funciones, también las defectuosas. Para cada posición p, cambia X[p] y compara las salidas en las posiciones < p: si alguna se movió, devuelve False.",
        "de": "dein Test sagt bei jeder Funktion True (kausal), auch bei den fehlerhaften. Verändere für jede Position p die Zeile X[p] und vergleiche die Ausgaben an den Positionen < p: hat sich eine bewegt, gib False zurück.",
        "hi-Latn": "tumhara test har function ko True (causal) bolta hai, buggy wale bhi. Har position p ke liye X[p] badlo aur positions < p ke outputs compare karo: koi bhi hila to False return karo.",
    },
    "lab02.always_false": {
        "en": "your test says False (not causal) for every function, the correct ones included. Compare only the outputs before p, with a tolerance (torch.allclose(..., atol=1e-5)), and return True when none moved.",
        "es": "tu test dice False (no causal) para todas las funciones, también las correctas. Compara solo las salidas anteriores a p, con una tolerancia (torch.allclose(..., atol=1e-5)), y devuelve True si ninguna se movió.",
        "de": "dein Test sagt bei jeder Funktion False (nicht kausal), auch bei den korrekten. Vergleiche nur die Ausgaben vor p, mit einer Toleranz (torch.allclose(..., atol=1e-5)), und gib True zurück, wenn sich keine bewegt hat.",
        "hi-Latn": "tumhara test har function ko False (causal nahi) bolta hai, sahi wale bhi. Sirf p se pehle ke outputs compare karo, tolerance ke saath (torch.allclose(..., atol=1e-5)), aur koi na hile to True return karo.",
    },
    "lab02.flags_correct": {
        "en": "your test calls a causal function non-causal. Causal only means: outputs before p do not depend on X[p]. It does not require outputs at or after p to change. Flagged by mistake:",
        "es": "tu test llama no causal a una función causal. Causal solo significa: las salidas anteriores a p no dependen de X[p]. No exige que cambien las salidas en p o después. Señaladas por error:",
        "de": "dein Test nennt eine kausale Funktion nicht kausal. Kausal heißt nur: Ausgaben vor p hängen nicht von X[p] ab. Dass sich Ausgaben an oder nach p ändern, wird nicht verlangt. Irrtümlich beanstandet:",
        "hi-Latn": "tumhara test ek causal function ko non-causal bol raha hai. Causal ka bas itna matlab hai: p se pehle ke outputs X[p] par depend nahi karte. p ya uske baad ke outputs ka badalna zaroori nahi. Galti se flag hue:",
    },
    "lab02.raises_on_bug": {
        "en": "your test raised an error (or did not finish) on a buggy function instead of returning False (an assert, or torch.testing.assert_close?). A test function answers with a bool: return False when outputs move.",
        "es": "tu test lanzó un error (o no terminó) con una función defectuosa en lugar de devolver False (¿un assert, o torch.testing.assert_close?). Una función de test responde con un bool: devuelve False cuando las salidas se mueven.",
        "de": "dein Test hat bei einer fehlerhaften Funktion einen Fehler ausgelöst (oder ist nicht fertig geworden), statt False zurückzugeben (ein assert oder torch.testing.assert_close?). Eine Testfunktion antwortet mit einem bool: gib False zurück, wenn sich Ausgaben bewegen.",
        "hi-Latn": "tumhare test ne buggy function par False return karne ki jagah error raise kiya (ya khatam hi nahi hua) (assert ya torch.testing.assert_close?). Test function bool se jawab deta hai: outputs hilen to False return karo.",
    },
    "lab02.nan_perturbation": {
        "en": "your test calls correct causal attention non-causal, while it accepts the functions that do not mix positions. Typical cause: perturbing with NaN. A blocked key gets weight exactly 0, but 0 · NaN = NaN, so NaN still spreads into earlier outputs. Perturb with ordinary random numbers.",
        "es": "tu test llama no causal a la atención causal correcta, y en cambio acepta las funciones que no mezclan posiciones. Causa típica: perturbar con NaN. Una key bloqueada recibe peso exactamente 0, pero 0 · NaN = NaN, así que el NaN llega igualmente a las salidas anteriores. Perturba con números aleatorios normales.",
        "de": "dein Test nennt korrekte kausale Attention nicht kausal, akzeptiert aber die Funktionen, die keine Positionen mischen. Typische Ursache: Stören mit NaN. Ein gesperrter Key bekommt Gewicht genau 0, aber 0 · NaN = NaN, also gelangt NaN trotzdem in frühere Ausgaben. Stör mit gewöhnlichen Zufallszahlen.",
        "hi-Latn": "tumhara test sahi causal attention ko non-causal bolta hai, jabki positions ko mix na karne wale functions ko accept karta hai. Aksar wajah: NaN se perturb karna. Blocked key ka weight exactly 0 hota hai, lekin 0 · NaN = NaN, isliye NaN phir bhi pehle ke outputs tak pahunch jaata hai. Normal random numbers se perturb karo.",
    },
    "lab02.missed_bugs": {
        "en": "some bugs slip through your test.",
        "es": "algunos bugs pasan tu test sin ser detectados.",
        "de": "einige Fehler rutschen durch deinen Test.",
        "hi-Latn": "kuch bugs tumhare test se bach nikalte hain.",
    },
    "lab02.impl.attention": {
        "en": "• correct causal attention;",
        "es": "• atención causal correcta;",
        "de": "• korrekte kausale Attention;",
        "hi-Latn": "• sahi causal attention;",
    },
    "lab02.impl.position_wise": {
        "en": "• a position-wise function (no mixing at all: causal, yet later outputs do not change);",
        "es": "• una función posición a posición (no mezcla nada: es causal, aunque las salidas posteriores no cambien);",
        "de": "• eine positionsweise Funktion (mischt gar nichts: kausal, obwohl sich spätere Ausgaben nicht ändern);",
        "hi-Latn": "• position-wise function (kuch mix nahi karta: causal hai, chahe baad ke outputs na badlen);",
    },
    "lab02.impl.prefix_mean": {
        "en": "• a running mean over positions 0 … i (causal);",
        "es": "• una media acumulada sobre las posiciones 0 … i (causal);",
        "de": "• ein laufender Mittelwert über die Positionen 0 … i (kausal);",
        "hi-Latn": "• positions 0 … i ka running mean (causal);",
    },
    "lab02.impl.no_mask": {
        "en": "• no mask at all (every query reads every key);",
        "es": "• sin máscara (cada query lee todas las keys);",
        "de": "• gar keine Maske (jede Query liest jeden Key);",
        "hi-Latn": "• koi mask nahi (har query har key padhti hai);",
    },
    "lab02.impl.off_by_one": {
        "en": "• mask off by one (query i also reads key i + 1);",
        "es": "• máscara desplazada en uno (la query i lee también la key i + 1);",
        "de": "• Maske um eins verschoben (Query i liest auch Key i + 1);",
        "hi-Latn": "• mask mein off-by-one (query i key i + 1 bhi padhti hai);",
    },
    "lab02.impl.mask_after_softmax": {
        "en": "• 0/1 mask multiplied after the softmax (future scores still sit in the normaliser);",
        "es": "• máscara 0/1 multiplicada después del softmax (los scores futuros siguen en el normalizador);",
        "de": "• 0/1-Maske nach dem Softmax multipliziert (zukünftige Scores stecken noch im Normierer);",
        "hi-Latn": "• 0/1 mask softmax ke baad multiply kiya (future scores abhi bhi normaliser mein hain);",
    },
    "lab02.impl.diagonal_masked": {
        "en": "• diagonal masked too (row 0 has no key: NaN);",
        "es": "• diagonal también enmascarada (la fila 0 no tiene key: NaN);",
        "de": "• Diagonale mitmaskiert (Zeile 0 hat keinen Key: NaN);",
        "hi-Latn": "• diagonal bhi mask (row 0 ke paas koi key nahi: NaN);",
    },
    "lab02.impl.middle_leak": {
        "en": "• a leak from one middle position (every query also reads key T // 2);",
        "es": "• una fuga desde una posición intermedia (cada query lee también la key T // 2);",
        "de": "• ein Leck aus einer mittleren Position (jede Query liest auch Key T // 2);",
        "hi-Latn": "• beech ki ek position se leak (har query key T // 2 bhi padhti hai);",
    },
    "lab02.impl.gradient_leak": {
        "en": "• hard attention with a straight-through estimator whose soft surrogate has no mask (causal forward, leaking gradient);",
        "es": "• atención dura con un estimador straight-through cuyo sustituto suave no tiene máscara (forward causal, gradiente con fuga);",
        "de": "• harte Attention mit Straight-Through-Schätzer, dessen weicher Ersatz keine Maske hat (kausaler Forward, leckender Gradient);",
        "hi-Latn": "• hard attention straight-through estimator ke saath, jiske soft surrogate mein mask nahi (forward causal, gradient leak karta hai);",
    },
    "lab02.jacobian_transposed": {
        "en": "your pattern is transposed: entry (i, j) is True when OUTPUT i depends on INPUT j, so a causal function gives a lower triangle. The block is J[i, :, j, :] of the (T, d, T, d) Jacobian.",
        "es": "tu patrón está traspuesto: la entrada (i, j) es True cuando la SALIDA i depende de la ENTRADA j, así que una función causal da un triángulo inferior. El bloque es J[i, :, j, :] del jacobiano (T, d, T, d).",
        "de": "dein Muster ist transponiert: Eintrag (i, j) ist True, wenn AUSGABE i von EINGABE j abhängt; eine kausale Funktion ergibt also ein unteres Dreieck. Der Block ist J[i, :, j, :] der (T, d, T, d)-Jacobi-Matrix.",
        "hi-Latn": "tumhara pattern transposed hai: entry (i, j) tab True hai jab OUTPUT i INPUT j par depend kare, isliye causal function lower triangle deta hai. Block (T, d, T, d) Jacobian ka J[i, :, j, :] hai.",
    },
    "lab02.gradient_leak_missed": {
        "en": "you found every leak of the forward pass but not the one that lives only in the gradient (a straight-through estimator): its outputs do not move when you perturb the input, yet autograd shows a dependence. Use torch.autograd.functional.jacobian.",
        "es": "encontraste todas las fugas del forward, pero no la que solo vive en el gradiente (un estimador straight-through): sus salidas no se mueven al perturbar la entrada, pero autograd muestra una dependencia. Usa torch.autograd.functional.jacobian.",
        "de": "du hast alle Lecks des Forward-Passes gefunden, aber nicht das, das nur im Gradienten steckt (ein Straight-Through-Schätzer): seine Ausgaben bewegen sich bei gestörter Eingabe nicht, autograd zeigt trotzdem eine Abhängigkeit. Nimm torch.autograd.functional.jacobian.",
        "hi-Latn": "tumne forward pass ke saare leaks pakad liye, lekin woh nahi jo sirf gradient mein hai (straight-through estimator): input perturb karne par iske outputs nahi hilte, phir bhi autograd dependence dikhata hai. torch.autograd.functional.jacobian use karo.",
    },
    "lab02.threshold_too_high": {
        "en": "you missed weak dependencies: some Jacobian blocks are small but not zero (a leak through the softmax normaliser is small). Autograd gives exact zeros where there is no path, so test != 0 (or > 1e-12), not a large tolerance.",
        "es": "se te escaparon dependencias débiles: algunos bloques del jacobiano son pequeños pero no cero (una fuga a través del normalizador del softmax es pequeña). Autograd da ceros exactos donde no hay camino, así que comprueba != 0 (o > 1e-12), no una tolerancia grande.",
        "de": "dir sind schwache Abhängigkeiten entgangen: manche Blöcke der Jacobi-Matrix sind klein, aber nicht null (ein Leck über den Softmax-Normierer ist klein). Autograd liefert exakte Nullen, wo es keinen Pfad gibt; prüfe also != 0 (oder > 1e-12), keine große Toleranz.",
        "hi-Latn": "tumse weak dependencies chhoot gayi: kuch Jacobian blocks chhote hain lekin zero nahi (softmax normaliser se aane wala leak chhota hota hai). Jahan path nahi hota wahan autograd exact zero deta hai, isliye != 0 (ya > 1e-12) test karo, badi tolerance nahi.",
    },
    "lab02.pattern_wrong": {
        "en": "for {case} entry ({i}, {j}) of your pattern is {got}, which is wrong for this function:",
        "es": "para {case} la entrada ({i}, {j}) de tu patrón es {got}, y eso es incorrecto para esta función:",
        "de": "für {case} ist Eintrag ({i}, {j}) deines Musters {got}, und das ist für diese Funktion falsch:",
        "hi-Latn": "{case} ke liye tumhare pattern ki entry ({i}, {j}) {got} hai, jo is function ke liye galat hai:",
    },
    "lab02.caught_all": {
        "en": "It says \"causal\" for the correct functions, catches every leak (no mask, off by one, mask after the softmax, and a single leak at each position p = 1 … T-1), and answers with a bool for a function whose output is NaN.",
        "es": "Dice «causal» para las funciones correctas, detecta todas las fugas (sin máscara, desplazada en uno, máscara después del softmax y una fuga aislada en cada posición p = 1 … T-1) y responde con un bool ante una función cuya salida es NaN.",
        "de": "Er sagt „kausal“ zu den korrekten Funktionen, findet jedes Leck (keine Maske, um eins verschoben, Maske nach dem Softmax und ein einzelnes Leck an jeder Position p = 1 … T-1) und antwortet mit einem bool auf eine Funktion, deren Ausgabe NaN ist.",
        "hi-Latn": "Yeh sahi functions ko \"causal\" bolta hai, har leak pakadta hai (koi mask nahi, off-by-one, softmax ke baad mask, aur har position p = 1 … T-1 par ek akela leak), aur NaN output wale function par bhi bool se jawab deta hai.",
    },
    "lab02.missed": {
        "en": "It passed {caught} of {total} checks. Missed:",
        "es": "Superó {caught} de {total} comprobaciones. Le faltaron:",
        "de": "Er hat {caught} von {total} Prüfungen bestanden. Nicht bestanden:",
        "hi-Latn": "Isne {total} mein se {caught} checks pass kiye. Chhoot gaye:",
    },
    "lab02.missed_positions": {
        "en": "your test misses leaks that only some positions reveal: for each p the grader hands it a function in which one earlier query also reads key p. Perturb every position p = 1 … T-1 and compare all outputs before p, not only the last one or a few.",
        "es": "tu test no ve fugas que solo revelan algunas posiciones: para cada p el corrector le pasa una función en la que una query anterior lee también la key p. Perturba cada posición p = 1 … T-1 y compara todas las salidas anteriores a p, no solo la última o unas pocas.",
        "de": "dein Test übersieht Lecks, die nur manche Positionen zeigen: für jedes p bekommt er eine Funktion, in der eine frühere Query zusätzlich Key p liest. Störe jede Position p = 1 … T-1 und vergleiche alle Ausgaben vor p, nicht nur die letzte oder einige wenige.",
        "hi-Latn": "tumhara test woh leaks miss karta hai jo sirf kuch positions dikhati hain: har p ke liye grader ek aisa function deta hai jismein pehle ki ek query key p bhi padhti hai. Har position p = 1 … T-1 perturb karo aur p se pehle ke saare outputs compare karo, sirf last ya do-chaar nahi.",
    },
    "lab02.crashes_on_nan": {
        "en": "your test raised an error on a function whose output contains NaN. The rule of this lab: a non-finite output is a defect, not a leak, so either answer (True or False) is accepted for such a function, but a test must answer with a bool: check torch.isfinite(...) instead of letting an assert or a comparison raise.",
        "es": "tu test lanzó un error con una función cuya salida contiene NaN. La regla de este lab: una salida no finita es un defecto, no una fuga, así que para esa función se acepta cualquier respuesta (True o False), pero un test debe responder con un bool: comprueba torch.isfinite(...) en lugar de dejar que un assert o una comparación lance un error.",
        "de": "dein Test hat bei einer Funktion mit NaN in der Ausgabe einen Fehler ausgelöst. Die Regel dieses Labs: eine nicht endliche Ausgabe ist ein Defekt, kein Leck; für so eine Funktion gilt jede Antwort (True oder False), aber ein Test antwortet mit einem bool: prüfe torch.isfinite(...), statt ein assert oder einen Vergleich einen Fehler auslösen zu lassen.",
        "hi-Latn": "NaN output wale function par tumhare test ne error raise kiya. Is lab ka rule: non-finite output ek defect hai, leak nahi, isliye aise function ke liye dono jawab (True ya False) chalenge, lekin test ko bool se hi jawab dena hai: assert ya comparison ko error raise karne dene ki jagah torch.isfinite(...) check karo.",
    },
    "lab02.no_evidence": {
        "en": "your test said \"not causal\" for a function without showing why: none of the inputs it passed to that function reveal an earlier output moving. A verdict counts only if the test itself called the function on inputs that show the leak (the grader records them); recognising a function by its code earns nothing.",
        "es": "tu test dijo «no causal» de una función sin mostrar por qué: ninguna de las entradas que le pasó revela que se mueva una salida anterior. Un veredicto solo cuenta si el propio test llamó a la función con entradas que muestran la fuga (el corrector las registra); reconocer una función por su código no da puntos.",
        "de": "dein Test hat eine Funktion „nicht kausal“ genannt, ohne es zu zeigen: keine der Eingaben, mit denen er sie aufgerufen hat, lässt eine frühere Ausgabe sich bewegen. Ein Urteil zählt nur, wenn der Test die Funktion selbst mit Eingaben aufgerufen hat, die das Leck zeigen (der Grader zeichnet sie auf); eine Funktion an ihrem Code zu erkennen bringt nichts.",
        "hi-Latn": "tumhare test ne ek function ko \"causal nahi\" bola par wajah nahi dikhayi: usne jo inputs function ko diye, unmein se kisi mein bhi pehle ka output hilta nahi dikhta. Verdict tabhi count hota hai jab test ne khud function ko aise inputs par call kiya ho jo leak dikhate hain (grader unhe record karta hai); code dekh kar function pehchaanne ke koi points nahi.",
    },
    "lab02.jacobian_no_call": {
        "en": "for {case} your function returned a pattern without calling the function it was given on an input of shape (T, d). The pattern must come from autograd on that function, not from its code.",
        "es": "para {case} tu función devolvió un patrón sin llamar a la función recibida con una entrada de forma (T, d). El patrón debe salir de autograd sobre esa función, no de su código.",
        "de": "für {case} hat deine Funktion ein Muster zurückgegeben, ohne die übergebene Funktion mit einer Eingabe der Form (T, d) aufzurufen. Das Muster muss von autograd auf dieser Funktion kommen, nicht aus ihrem Code.",
        "hi-Latn": "{case} ke liye tumhare function ne diye gaye function ko (T, d) shape ke input par call kiye bina pattern return kar diya. Pattern us function par autograd se aana chahiye, uske code se nahi.",
    },
    "lab02.impl.position_leaks": {
        "en": "• a single leak at position(s) {positions}: one earlier query also reads that key (perturb every position and compare every earlier output);",
        "es": "• una fuga aislada en la(s) posición(es) {positions}: una query anterior lee también esa key (perturba cada posición y compara cada salida anterior);",
        "de": "• ein einzelnes Leck an Position(en) {positions}: eine frühere Query liest zusätzlich diesen Key (störe jede Position und vergleiche jede frühere Ausgabe);",
        "hi-Latn": "• position(s) {positions} par ek akela leak: pehle ki ek query woh key bhi padhti hai (har position perturb karo aur pehle ka har output compare karo);",
    },
    "lab02.impl.position_leak": {
        "en": "• a single leak: output {query} also reads key {key};",
        "es": "• una fuga aislada: la salida {query} lee también la key {key};",
        "de": "• ein einzelnes Leck: Ausgabe {query} liest zusätzlich Key {key};",
        "hi-Latn": "• ek akela leak: output {query} key {key} bhi padhta hai;",
    },
    "lab02.impl.nan_rule": {
        "en": "• a bool for a function whose output is NaN (diagonal masked too): your test raised instead;",
        "es": "• un bool ante una función cuya salida es NaN (diagonal también enmascarada): tu test lanzó un error;",
        "de": "• ein bool für eine Funktion mit NaN-Ausgabe (Diagonale mitmaskiert): dein Test hat stattdessen einen Fehler ausgelöst;",
        "hi-Latn": "• NaN output wale function (diagonal bhi mask) ke liye bool: tumhare test ne uski jagah error raise kiya;",
    },
}

i18n.register(MESSAGES)

LAB = LabSpec(id="lab02", exercises=EXERCISES)
