"""lab02's judges: causal_attention, perturbation_test and jacobian_leaks, on a reference given per case.

The exercises themselves (cases, the numpy references, the functions of
bugs02) are in lab02.py; these classes hold everything else about them, and
the student release runs them as they are on the references recorded for the
public cases (labs/judging.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import evidence, i18n
from ..exercise import Array, Case, Feedback, Result, close, decode, describe, first_wrong_entry, value_mismatch
from .judging import Judge, TensorExercise, is_torch_bool, is_torch_float, shape_str

ATOL = 1e-5  # the issue: equals F.scaled_dot_product_attention within 1e-5
SLIP_ATOL = 1e-4
# The names of bugs02's functions that the judges group (a single position's leak, and a faint one).
POSITION_LEAK = "position_leak"
FAINT_LEAK = "faint_leak"


# ---------------------------------------------------------------- causal_attention
class CausalAttentionJudge(TensorExercise):
    """causal_attention(Q, K, V) -> (out, weights).

    reference(case): {"weights": right weights, "out": right output}; slip_references(case):
    {"weights": [(diagnosis, weights of that slip)...], "transposed": the output of transposed weights}.
    """

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
        reference = self.reference(case)
        right_w, right_out = reference["weights"], reference["out"]
        T = right_w.shape[-2]
        w_shape, out_shape = right_w.shape, right_out.shape
        expected = f"tuple(float {shape_str(out_shape)}, float {shape_str(w_shape)})"
        if not isinstance(got, (tuple, list)) or len(got) != 2 or not all(isinstance(g, Array) for g in got):
            return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                               Feedback("common.wrong_type", {"case": case.shown, "expected": expected,
                                                              "got": describe(got)}),
                               diagnosis="wrong_shape")
        out, w = got
        if (out.shape == w_shape and w.shape == out_shape and out.shape != w.shape
                and close(out.values, right_w, SLIP_ATOL) and close(w.values, right_out, SLIP_ATOL)):
            return self.diagnose("outputs_swapped")
        if not (is_torch_float(out) and is_torch_float(w)) or out.shape != out_shape or w.shape != w_shape:
            return self.result(
                0, "failed", Feedback("common.failed", {"name": self.id}),
                Feedback("common.wrong_type", {"case": case.shown, "expected": expected, "got": describe(tuple(got))}),
                diagnosis="wrong_shape",
            )
        weights = w.values.astype(float)
        if not close(weights, right_w, ATOL):
            slips = self.slip_references(case)["weights"]  # only for a wrong answer: eight softmaxes per case
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
            return value_mismatch(self, case, weights, first_wrong_entry(weights, right_w, ATOL))
        output = out.values.astype(float)
        if not close(output, right_out, ATOL):
            if close(output, self.slip_references(case)["transposed"], SLIP_ATOL) and T > 1:
                return self.diagnose("weights_transposed")
            return value_mismatch(self, case, output, first_wrong_entry(output, right_out, ATOL))
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


class StudentTest(Judge):
    """A test written by the student, run on the functions of bugs02 (each case: one function)."""

    section = "07 §1"
    sections: dict[str, str] = {}

    def judge(self, ctx, cases, outputs):
        for output in outputs:
            if "missing" in output:
                return self.result(0, "missing", Feedback("common.missing", {"name": output["missing"]}))
        if any("not_answered" in output for output in outputs):
            return self.result(0, "not_answered", Feedback("common.not_answered", {"name": self.id}))
        return self.judge_runs(cases, outputs)

    def judge_runs(self, cases: list[Case], outputs: list[dict]) -> Result:
        raise NotImplementedError

    def reference(self, case: Case) -> Any:
        return None  # what the test is run on, trusted_function(case), is all perturbation_test's reference

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
                           Feedback(key, {"name": self.id, "case": case.shown, "type": error.get("type", ""),
                                          "message": error.get("message", "")}))

    def leak_witnessed(self, case: Case, output: dict) -> bool:
        """The test's recorded calls on this buggy function show an earlier output moving (trusted re-run)."""
        inputs = evidence.recorded_inputs(output)
        if not inputs:
            return False
        function = self.trusted_function(case)

        def run(x: np.ndarray) -> np.ndarray:
            import torch

            if x.ndim < 2 or x.shape[-2] > 64 or x.shape[-1] > 64 or x.ndim > 4:
                raise ValueError("not an input of this exercise")
            with torch.no_grad():
                return function(torch.tensor(x, dtype=torch.float64)).numpy()

        return evidence.witnessed(inputs, run, feature_dims=1, key=("lab02", case.data["impl"], int(case.data["wseed"])))


class PerturbationTestJudge(StudentTest):
    """perturbation_test(attn_fn, T, d, seed) -> bool, graded on correct and buggy functions.

    Five points, one per check: three whole-mask bugs (no mask, off by one,
    mask after the softmax), the position sweep (for every p = 1 … T-1 one
    function in which a single earlier query also reads key p, and in the
    public set one function whose leak is faint, below 1e-3: all must be
    caught), and the NaN rule (a function whose output is not finite is a
    defect, not a leak: either verdict is right, but the test must answer with
    a bool). A bug counts as caught only when the test said False AND its
    recorded calls show the leak. Nothing counts unless every correct function
    gets True. The reference: the trusted function of each case.
    """

    id = "perturbation_test"
    LEAK_BUGS = ("no_mask", "off_by_one", "mask_after_softmax")
    NAN_DEFECT = "diagonal_masked"
    CORRECT = ("attention", "position_wise", "prefix_mean")
    CHECKS = LEAK_BUGS + ("positions", "nan_rule")
    points = float(len(CHECKS))
    sections = {"missed_positions": "07 §6", "nan_perturbation": "07 §6", "crashes_on_nan": "08 §3",
                "no_evidence": "07 §1", "tolerance_too_loose": "07 §6"}
    diagnoses = ("always_true", "always_false", "flags_correct", "nan_perturbation", "missed_positions",
                 "tolerance_too_loose", "crashes_on_nan", "raises_on_bug", "no_evidence", "missed_bugs")

    def judge_runs(self, cases, outputs):
        verdicts: dict[str, list] = {}  # check or correct function -> verdicts (True, False, "error", "unsupported")
        missed_keys: list[int] = []
        missed_faint: list[Case] = []  # faint leaks the test let through
        sweep = (POSITION_LEAK, FAINT_LEAK)
        for case, output in zip(cases, outputs):
            name = case.data.get("base", case.data["impl"])
            group = "positions" if name in sweep else ("nan_rule" if name == self.NAN_DEFECT else name)

            def missed_in_sweep() -> None:
                if name == FAINT_LEAK:
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
                                   Feedback("common.not_a_bool", {"case": case.shown, "got": describe(value)}),
                                   diagnosis="wrong_shape")
            if verdict is False and group not in self.CORRECT and group != "nan_rule" \
                    and not self.leak_witnessed(case, output):
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
            return self.diagnose_test("flags_correct", extra=[Feedback(f"lab02.impl.{n}", item=True) for n in flagged])
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
                    listing.append(Feedback("lab02.impl.position_leaks",
                                            {"positions": keys, "count": len(set(missed_keys))}, count="count",
                                            item=True))
                for case in missed_faint:
                    listing.append(Feedback("lab02.impl.faint_leak", {"query": case.data["query"],
                                                                      "key": case.data["key"]}, item=True))
            elif check == "nan_rule":
                if not nan_ok:
                    listing.append(Feedback("lab02.impl.nan_rule", item=True))
            else:
                listing.append(Feedback(f"lab02.impl.{check}", item=True))
        return self.diagnose_test(diagnosis, points=float(len(caught)), extra=listing)

    def diagnose_test(self, diagnosis: str, points: float = 0.0, extra: list[Feedback] | None = None) -> Result:
        items = [Feedback(f"lab02.{diagnosis}", {})]
        return self.result(points, "failed", *self.feedback(diagnosis, *items, *(extra or [])), diagnosis=diagnosis)


class JacobianLeaksJudge(StudentTest):
    """jacobian_leaks(attn_fn, T, d) -> bool (T, T): which outputs depend on which inputs, per autograd.

    The whole dependence pattern is the answer; the leaking cells alone (above
    the diagonal, what the name suggests) are accepted too, if used for every
    function. A case counts only if the test called the function on an input
    of shape (..., T, d): a pattern read off the function's code earns nothing.
    The reference: the function's dependence pattern, bool (T, T).
    """

    id = "jacobian_leaks"
    points = 3
    section = "07 §3"
    diagnoses = ("jacobian_transposed", "gradient_leak_missed", "threshold_too_high", "no_evidence")

    @staticmethod
    def called(case: Case, output: dict) -> bool:
        T, d = case.data["kwargs"]["T"], case.data["kwargs"]["d"]
        return any(len(shape) >= 2 and shape[-2:] == (T, d) for shape in evidence.recorded_shapes(output))

    def judge_runs(self, cases, outputs):
        answers: list[tuple[Case, np.ndarray, np.ndarray]] = []
        for case, output in zip(cases, outputs):
            if "ok" not in output:
                return self.crashed(case, output)
            want = self.reference(case)
            got = decode(output["ok"])
            if not is_torch_bool(got) or got.shape != want.shape:
                expected = f"bool {shape_str(want.shape)}"
                if not (isinstance(got, Array) and not got.dtype.startswith("numpy.")):
                    expected = "torch.Tensor " + expected
                return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                                   Feedback("common.wrong_type", {"case": case.shown, "expected": expected,
                                                                  "got": describe(got)}),
                                   diagnosis="wrong_shape")
            if not self.called(case, output):
                return self.result(0, "failed", *self.feedback("no_evidence", Feedback("lab02.jacobian_no_call",
                                                                                       {"case": case.shown})),
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
        impl_key = "position_leak" if case.data.get("base") == POSITION_LEAK else case.data["impl"]
        return self.result(0, "failed", *self.feedback(
            "wrong_values",
            Feedback("lab02.pattern_wrong", {"case": case.shown, "i": index[0], "j": index[1],
                                             "got": str(bool(answer[index]))}),
            Feedback(f"lab02.impl.{impl_key}", {k: case.data[k] for k in ("query", "key") if k in case.data})),
            diagnosis="wrong_values")



i18n.NP_("lab02.impl.position_leaks")  # one position, several positions
