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

from .. import evidence
from ..i18n import N_
from ..exercise import Array, Case, Exercise, Feedback, Result, close, decode, describe, first_difference, value_mismatch
from . import LabSpec, bugs02
from .tensors import (TensorExercise, f32, is_torch_bool, is_torch_float, mask_of, right_weights, rng_for, shape_str,
                      softmax, tensor_arg)

ATOL = 1e-5  # the issue: equals F.scaled_dot_product_attention within 1e-5
SLIP_ATOL = 1e-4


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
class CausalAttention(TensorExercise):
    id = "causal_attention"
    points = 4
    section = "03 §8"
    forbidden_calls = ("F.scaled_dot_product_attention", "nn.MultiheadAttention")
    sections = {"forgot_scale": "03 §2", "divided_by_dk": "03 §2", "no_mask": "02 §0", "diagonal_masked": "08 §3",
                "wrong_triangle": "02 §0", "transposed_k": "03 §1", "wrong_axis": "03 §4",
                "mask_after_softmax": "08 §1", "rows_not_normalised": "08 §1", "weights_transposed": "03 §5",
                "future_weight": "02 §0", "batch_dims": "06 §1", "off_by_one": "08 §4"}
    diagnoses = ("no_mask", "forgot_scale", "divided_by_dk", "mask_after_softmax", "wrong_axis", "diagonal_masked",
                 "off_by_one", "wrong_triangle", "transposed_k", "weights_transposed", "outputs_swapped",
                 "rows_not_normalised", "future_weight", "batch_dims")

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
    return f"{x:.4g}"  # nan, inf and -inf as they are: a row with an infinite weight sums to inf, not nan


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
    function in which a single earlier query also reads key p, and in the
    public set one function whose leak is faint, below 1e-3: all must be
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
                "no_evidence": "07 §1", "tolerance_too_loose": "07 §6"}
    diagnoses = ("always_true", "always_false", "flags_correct", "nan_perturbation", "missed_positions",
                 "tolerance_too_loose", "crashes_on_nan", "raises_on_bug", "no_evidence", "missed_bugs")

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

    def judge_runs(self, cases, outputs):
        verdicts: dict[str, list] = {}  # check or correct function -> verdicts (True, False, "error", "unsupported")
        missed_keys: list[int] = []
        missed_faint: list[Case] = []  # faint leaks the test let through
        sweep = (bugs02.POSITION_LEAK, bugs02.FAINT_LEAK)
        for case, output in zip(cases, outputs):
            name = case.data.get("base", case.data["impl"])
            group = "positions" if name in sweep else ("nan_rule" if name == self.NAN_DEFECT else name)

            def missed_in_sweep() -> None:
                if name == bugs02.FAINT_LEAK:
                    missed_faint.append(case)
                elif group == "positions":
                    missed_keys.append(case.data["key"])

            if "ok" not in output:
                if name in self.CORRECT:
                    return self.crashed(case, output)
                verdicts.setdefault(group, []).append("error")
                missed_in_sweep()
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
            if verdict is not False:
                missed_in_sweep()
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
        elif missed == ["positions"] and not missed_keys:
            diagnosis = "tolerance_too_loose"  # every leak caught but the faint one: the comparison is too lax
        elif missed == ["positions"]:
            diagnosis = "missed_positions"
        else:
            diagnosis = "missed_bugs"
        listing = [Feedback("lab02.missed", {"caught": len(caught), "total": len(self.CHECKS)})]
        for check in missed:
            if check == "positions":
                if missed_keys:
                    keys = ", ".join(str(k) for k in sorted(set(missed_keys)))
                    listing.append(Feedback("lab02.impl.position_leaks", {"positions": keys}))
                for case in missed_faint:
                    listing.append(Feedback("lab02.impl.faint_leak", {"query": case.data["query"],
                                                                      "key": case.data["key"]}))
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


# Message keys this module builds at run time (diagnosed(name), f"lab02.<part>.{name}"), listed for `make catalogs`.
N_(
    "lab02.always_false", "lab02.always_true", "lab02.crashes_on_nan", "lab02.flags_correct",
    "lab02.future_weight", "lab02.impl.attention", "lab02.impl.diagonal_masked", "lab02.impl.gradient_leak",
    "lab02.impl.mask_after_softmax", "lab02.impl.middle_leak", "lab02.impl.no_mask", "lab02.impl.off_by_one",
    "lab02.impl.position_leak", "lab02.impl.position_wise", "lab02.impl.prefix_mean", "lab02.missed_bugs",
    "lab02.missed_positions", "lab02.nan_perturbation", "lab02.no_evidence", "lab02.outputs_swapped",
    "lab02.raises_on_bug", "lab02.rows_not_normalised", "lab02.tolerance_too_loose", "lab02.impl.tiny_leak",
)

LAB = LabSpec(id="lab02", exercises=EXERCISES)
