"""Judges of labs 02-04 in the student release: the instructor's judging order, on recorded references.

Each class follows its exercise's judge in the full autograder step by step;
where that judge computes a reference (the right weights, a slip's output, a
dependence pattern) it reads the value recorded for the public case instead.
tests/test_release_parity.py holds each to the full autograder's feedback on
the labs' wrong-answer corpus.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import evidence
from .exercise import (Array, Case, Exercise, Feedback, Result, close, decode, describe, first_difference,
                       shape_mismatch, value_mismatch)
from .replay import array_from, result_from


def close_nan(a, b, atol: float) -> bool:
    """Equal within atol, where NaN matches NaN and inf matches inf of the same sign."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    both_nan = np.isnan(a) & np.isnan(b)
    same_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    finite = np.isfinite(a) & np.isfinite(b)
    with np.errstate(invalid="ignore"):
        ok = both_nan | same_inf | (finite & (np.abs(a - b) <= atol))
    return bool(ok.all())


def is_float_array(value: Any, shape) -> bool:
    return isinstance(value, Array) and value.is_float and value.shape == tuple(shape)


def _is_torch(value: Any) -> bool:
    return isinstance(value, Array) and not value.dtype.startswith("numpy.")


class Recorded(Exercise):
    def __init__(self, data: dict):
        self.id, self.points, self.section, self.kind = data["id"], data["points"], data["section"], data["kind"]
        self.data = data

    def cases(self, ctx, seed=None):
        return [Case(case["name"], case["call"]) for case in self.data["cases"]]

    def recorded(self, name: str, points: float | None = None) -> Result:
        result = result_from(self.data["diagnoses"][name], self.id, self.points)
        if points is not None:
            result.points = float(points)
        return result

    def pointer(self) -> Feedback:
        key, params = self.data["pointer"]
        return Feedback(key, params)

    def passed_result(self) -> Result:
        return result_from(self.data["passed"], self.id, self.points)


class KVCacheMask(Recorded):
    def judge_outputs(self, ctx, cases, values) -> Result:
        records = self.data["cases"]
        for case, record, got in zip(cases, records, values):
            shape = tuple(record["shape"])
            if isinstance(got, Array) and got.is_bool and got.shape == shape[::-1] and shape[0] != shape[1]:
                if np.array_equal(got.values.T, array_from(record["right"])):
                    return self.recorded("transposed")
            if not (isinstance(got, Array) and got.is_bool and got.shape == shape):
                return shape_mismatch(self, case, got, f"bool {shape}")
        got = [value.values for value in values]
        rights = [array_from(record["right"]) for record in records]
        if all(np.array_equal(g, w) for g, w in zip(got, rights)):
            return self.passed_result()
        for number, (slip, _) in enumerate(records[0]["slips"]):
            if all(np.array_equal(g, array_from(record["slips"][number][1])) for g, record in zip(got, records)):
                return self.recorded(slip)
        index = next(i for i, (g, w) in enumerate(zip(got, rights)) if not np.array_equal(g, w))
        position = tuple(int(i) for i in np.argwhere(got[index] != rights[index])[0])
        return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                           Feedback("common.wrong_entry", {"case": cases[index].name,
                                                           "index": ", ".join(map(str, position)),
                                                           "got": str(bool(got[index][position]))}),
                           self.pointer(), diagnosis="wrong_values")


class CachedAttention(Recorded):
    def judge_outputs(self, ctx, cases, values) -> Result:
        records = self.data["cases"]
        atol = self.data["atol"]
        for case, record, got in zip(cases, records, values):
            expected = record["expected_text"]
            if not (isinstance(got, tuple) and len(got) == 3):
                return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                                   Feedback("common.wrong_shape", {"case": case.name, "expected": expected,
                                                                   "got": describe(got)}),
                                   Feedback("lab04.wrong_return"), diagnosis="wrong_return")
            if record["T_past"] and isinstance(got[1], Array) and got[1].shape == tuple(record["k_shape"]):
                return self.recorded("cache_not_appended")
            if not all(is_float_array(part, shape) for part, shape in zip(got, record["shapes"])):
                return shape_mismatch(self, case, got, expected)
        for case, record, got in zip(cases, records, values):
            if not (close_nan(got[1].values, array_from(record["k_all"]), atol)
                    and close_nan(got[2].values, array_from(record["v_all"]), atol)):
                swapped_k, swapped_v = (array_from(a) for a in record["swapped"])
                if close_nan(got[1].values, swapped_k, atol) and close_nan(got[2].values, swapped_v, atol):
                    return self.recorded("cache_order")
                return result_from(record["wrong_cache"], self.id, self.points)
        outs = [value[0].values for value in values]
        want = [array_from(record["want"]) for record in records]
        right = [close_nan(g, w, atol) for g, w in zip(outs, want)]
        if all(right):
            return self.passed_result()
        for number, (name, _) in enumerate(records[0]["slips"]):
            if all(self.matches(g, array_from(record["slips"][number][1])) for g, record in zip(outs, records)):
                return self.recorded(name)
        index = right.index(False)
        # where every gap lies just above atol, first_difference (1e-12 looser) finds none: name the first entry
        position = first_difference(np.nan_to_num(outs[index], nan=1e30), want[index], atol) or (0,) * outs[index].ndim
        return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                           Feedback("common.wrong_entry", {"case": cases[index].name,
                                                           "index": ", ".join(map(str, position)),
                                                           "got": f"{outs[index][position]:.4g}"}),
                           self.pointer(), diagnosis="wrong_values")

    def matches(self, got, candidate) -> bool:
        defined = ~np.isnan(candidate)
        return close_nan(got[defined], candidate[defined], self.data["match_atol"])


def compared_rows(out: np.ndarray, lengths, side: str = "right", skip_first: bool = False) -> np.ndarray:
    """The output with every padding query position set to 0 (and each sequence's first real one with
    `skip_first`)."""
    B, T = out.shape[:2]
    if lengths is None:
        keep = np.ones((B, T), dtype=bool)
    elif side == "left":
        keep = np.arange(T)[None, :] >= T - np.asarray(lengths)[:, None]
    else:
        keep = np.arange(T)[None, :] < np.asarray(lengths)[:, None]  # (B, T)
    if skip_first:
        keep = keep.copy()
        keep[np.arange(B), keep.argmax(axis=1)] = False
    return np.where(keep[:, :, None], out, 0.0)


class SelfAttention(Recorded):
    def judge(self, ctx, cases, outputs) -> Result:
        for output in outputs:
            error = output.get("error")
            if error and "state_dict" in error.get("message", ""):
                result = result_from(self.data["layers_missing"], self.id, self.points)
                result.feedback[1] = Feedback(result.feedback[1].key, {"message": error["message"][:160]})
                return result
        return super().judge(ctx, cases, outputs)

    def judge_outputs(self, ctx, cases, values) -> Result:
        records = self.data["cases"]
        atol = self.data["atol"]
        for case, record, got in zip(cases, records, values):
            if not is_float_array(got, record["x_shape"]):
                return shape_mismatch(self, case, got, f"float32 {tuple(record['x_shape'])}")
        got = [value.values for value in values]
        want = [array_from(record["want"]) for record in records]
        right = [close_nan(compared_rows(g, r["lengths"], r["side"]), compared_rows(w, r["lengths"], r["side"]), atol)
                 for g, w, r in zip(got, want, records)]
        if all(right):
            return self.passed_result()
        plain = [not record["padding"] for record in records]
        padding_only = all(ok for ok, p in zip(right, plain) if p)
        points = self.points - self.data["padding_points"]
        for number, (name, _) in enumerate(records[0]["slips"]):
            if padding_only != (name in self.data["padding_slips"]):
                continue
            if self.matches(got, records, number, skip_first=(name == "diagonal_masked"),
                            padding_rows=(name == "padding_ignored")):
                return self.recorded(name, points=points if padding_only else 0)
        if padding_only:
            return self.recorded("padding_wrong", points=points)
        one_head = [ok for ok, record in zip(right, records) if record["heads"] == 1]
        if one_head and all(one_head):
            return self.recorded("heads_wrong")
        index = next(i for i, ok in enumerate(right) if not ok)
        lengths, side = records[index]["lengths"], records[index]["side"]
        position = first_difference(np.nan_to_num(compared_rows(got[index], lengths, side), nan=1e30),
                                    compared_rows(want[index], lengths, side), atol) or (0,) * got[index].ndim
        return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                           Feedback("common.wrong_entry", {"case": cases[index].name,
                                                           "index": ", ".join(map(str, position)),
                                                           "got": f"{got[index][position]:.4g}"}),
                           self.pointer(), diagnosis="wrong_values")

    def matches(self, got, records, number, skip_first=False, padding_rows=False) -> bool:
        for value, record in zip(got, records):
            recorded = record["slips"][number][1]
            if recorded is None:
                return False
            candidate = array_from(recorded)
            if not padding_rows:
                value = compared_rows(value, record["lengths"], record["side"], skip_first)
                candidate = compared_rows(candidate, record["lengths"], record["side"], skip_first)
            if not close_nan(value, candidate, self.data["match_atol"]):
                return False
        return True


def _fmt(x: float) -> str:
    return f"{x:.4g}"  # nan, inf and -inf as they are: a row with an infinite weight sums to inf, not nan


class CausalAttention(Recorded):
    def diagnose(self, diagnosis: str, **params) -> Result:
        feedback = [Feedback("common.failed", {"name": self.id}), Feedback(self.data["keys"][diagnosis], params)]
        section = self.data["sections"].get(diagnosis, self.section)
        if section:
            feedback.append(Feedback("common.see_section", {"section": section}))
        return self.result(0, "failed", *feedback, diagnosis=diagnosis)

    def judge(self, ctx, cases, outputs):
        result = super().judge(ctx, cases, outputs)
        if result.status == "error":
            failing = next(i for i, o in enumerate(outputs) if "error" in o)
            records = self.data["cases"]
            unbatched = [i for i, r in enumerate(records) if not r["batched"]]
            if records[failing]["batched"] and unbatched and all("ok" in outputs[i] for i in unbatched):
                result.feedback.append(Feedback("lab02.batch_dims", {}))
                result.feedback.append(Feedback("common.see_section", {"section": self.data["sections"]["batch_dims"]}))
                result.diagnosis = "batch_dims"
        return result

    def judge_outputs(self, ctx, cases, values):
        records = self.data["cases"]
        results = [self.judge_one(case, record, got) for case, record, got in zip(cases, records, values)]
        unbatched = [result for record, result in zip(records, results) if not record["batched"]]
        unbatched_ok = bool(unbatched) and all(result is None for result in unbatched)
        for record, result in zip(records, results):
            if result is not None:
                if record["batched"] and unbatched_ok:
                    result.feedback = [f for f in result.feedback if f.key != "common.see_section"]
                    result.feedback.append(Feedback("lab02.batch_dims", {}))
                    result.feedback.append(Feedback("common.see_section",
                                                    {"section": self.data["sections"]["batch_dims"]}))
                    result.diagnosis = "batch_dims"
                return result
        return self.passed_result()

    def judge_one(self, case: Case, record: dict, got: Any) -> Result | None:
        atol, slip_atol = self.data["atol"], self.data["slip_atol"]
        right_w, right_out = array_from(record["right_w"]), array_from(record["right_out"])
        T = record["T"]
        w_shape, out_shape = right_w.shape, right_out.shape
        shape_str = lambda shape: "(" + ", ".join(str(n) for n in shape) + ")"  # noqa: E731
        expected = f"tuple(float {shape_str(out_shape)}, float {shape_str(w_shape)})"
        if not isinstance(got, (tuple, list)) or len(got) != 2 or not all(isinstance(g, Array) for g in got):
            if not _is_torch(got):
                expected = "torch.Tensor " + expected
            return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                               Feedback("common.wrong_shape", {"case": case.name, "expected": expected,
                                                               "got": describe(got)}), diagnosis="wrong_shape")
        out, w = got
        if (out.shape == w_shape and w.shape == out_shape and out.shape != w.shape
                and close(out.values, right_w, slip_atol) and close(w.values, right_out, slip_atol)):
            return self.diagnose("outputs_swapped")
        torch_float = lambda a: _is_torch(a) and a.is_float  # noqa: E731
        if not (torch_float(out) and torch_float(w)) or out.shape != out_shape or w.shape != w_shape:
            return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                               Feedback("common.wrong_shape", {"case": case.name, "expected": expected,
                                                               "got": describe(tuple(got))}), diagnosis="wrong_shape")
        weights = w.values.astype(float)
        if not close(weights, right_w, atol):
            for name, slip in record["slips"]:
                slip = array_from(slip)
                if name == "diagonal_masked":
                    if T > 1 and close(weights[..., 1:, :], slip[..., 1:, :], slip_atol):
                        return self.diagnose(name)
                elif close(weights, slip, slip_atol):
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
            index = first_difference(weights, right_w, atol)
            return value_mismatch(self, case, weights, index or (0,) * weights.ndim)
        output = out.values.astype(float)
        if not close(output, right_out, atol):
            if close(output, array_from(record["transposed_out"]), slip_atol) and T > 1:
                return self.diagnose("weights_transposed")
            index = first_difference(output, right_out, atol)
            return value_mismatch(self, case, output, index or (0,) * output.ndim)
        return None


class JacobianLeaks(Recorded):
    def feedback(self, diagnosis: str, *items: Feedback) -> list[Feedback]:
        out = [Feedback("common.failed", {"name": self.id}), *items]
        section = self.data["sections"].get(diagnosis, self.section)
        if section:
            out.append(Feedback("common.see_section", {"section": section}))
        return out

    def judge(self, ctx, cases, outputs):
        for output in outputs:
            if "missing" in output:
                return self.result(0, "missing", Feedback("common.missing", {"name": output["missing"]}))
        if any("not_answered" in output for output in outputs):
            return self.result(0, "not_answered", Feedback("common.not_answered", {"name": self.id}))
        return self.judge_runs(cases, outputs)

    def judge_runs(self, cases, outputs):
        answers = []
        for case, record, output in zip(cases, self.data["cases"], outputs):
            if "ok" not in output:
                key = "common.timeout" if "timeout" in output else "common.raised"
                error = output.get("error", {})
                return self.result(0, "timeout" if "timeout" in output else "error",
                                   Feedback(key, {"name": self.id, "case": case.name, "type": error.get("type", ""),
                                                  "message": error.get("message", "")}))
            want = array_from(record["want"])
            got = decode(output["ok"])
            if not (_is_torch(got) and got.dtype == "bool") or got.shape != want.shape:
                expected = "bool (" + ", ".join(str(n) for n in want.shape) + ")"
                if not (isinstance(got, Array) and not got.dtype.startswith("numpy.")):
                    expected = "torch.Tensor " + expected
                return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                                   Feedback("common.wrong_shape", {"case": case.name, "expected": expected,
                                                                   "got": describe(got)}), diagnosis="wrong_shape")
            T, d = record["T"], record["d"]
            if not any(len(shape) >= 2 and shape[-2:] == (T, d) for shape in evidence.recorded_shapes(output)):
                return self.result(0, "failed", *self.feedback("no_evidence", Feedback("lab02.jacobian_no_call",
                                                                                       {"case": case.name})),
                                   diagnosis="no_evidence")
            answers.append((record, got.values.astype(bool), want))
        for convention in (lambda w: w, lambda w: w & ~np.tril(np.ones_like(w))):
            if all(np.array_equal(a, convention(w)) for _, a, w in answers):
                return self.passed_result()
        wrong = [(r, a, w) for r, a, w in answers if not np.array_equal(a, w)]
        if all(np.array_equal(a, w.T) for _, a, w in wrong):
            return self.result(0, "failed", *self.feedback("jacobian_transposed",
                                                            Feedback("lab02.jacobian_transposed", {})),
                               diagnosis="jacobian_transposed")
        if all(r["impl"] == "gradient_leak" and not np.triu(a, 1).any() for r, a, _ in wrong):
            return self.result(0, "failed", *self.feedback("gradient_leak_missed",
                                                            Feedback("lab02.gradient_leak_missed", {})),
                               diagnosis="gradient_leak_missed")
        if all(not (a & ~w).any() for _, a, w in wrong):
            return self.result(0, "failed", *self.feedback("threshold_too_high",
                                                            Feedback("lab02.threshold_too_high", {})),
                               diagnosis="threshold_too_high")
        record, answer, want = wrong[0]
        index = tuple(int(x) for x in np.argwhere(answer != want)[0])
        return self.result(0, "failed", *self.feedback(
            "wrong_values",
            Feedback("lab02.pattern_wrong", {"case": record["name"], "i": index[0], "j": index[1],
                                             "got": str(bool(answer[index]))}),
            Feedback(f"lab02.impl.{record['impl_key']}", record["impl_params"])),
            diagnosis="wrong_values")


JUDGES = {"kv_cache_mask": KVCacheMask, "cached_attention": CachedAttention, "self_attention": SelfAttention,
          "causal_attention": CausalAttention, "jacobian_leaks": JacobianLeaks}


def _trusted(call_arg: dict):
    """The function a public case hands to the student's test, compiled again for the grader's own runs."""
    from .runtime import decode_arg

    return decode_arg({"__function__": call_arg["__function__"], "name": call_arg["name"]})


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, Array) and value.is_bool and value.shape == ():
        return bool(value.values)
    return None


class PerturbationTest(JacobianLeaks):
    """lab02.perturbation_test: verdicts on the public functions; a False counts only with evidence."""

    def diagnose_test(self, diagnosis: str, points: float = 0.0, extra: list[Feedback] | None = None) -> Result:
        items = [Feedback(f"lab02.{diagnosis}", {})]
        return self.result(points, "failed", *self.feedback(diagnosis, *items, *(extra or [])), diagnosis=diagnosis)

    def leak_witnessed(self, record: dict, output: dict) -> bool:
        inputs = evidence.recorded_inputs(output)
        if not inputs:
            return False
        function = _trusted(record["call"]["args"][0])

        def run(x: np.ndarray) -> np.ndarray:
            import torch

            if x.ndim < 2 or x.shape[-2] > 64 or x.shape[-1] > 64 or x.ndim > 4:
                raise ValueError("not an input of this exercise")
            with torch.no_grad():
                return function(torch.tensor(x, dtype=torch.float64)).numpy()

        return evidence.witnessed(inputs, run, feature_dims=1, key=("lab02", record["name"], record["wseed"]))

    def judge_runs(self, cases, outputs):
        data = self.data
        correct, nan_defect = data["correct"], data["nan_defect"]
        verdicts: dict[str, list] = {}
        missed_keys: list[int] = []
        missed_faint: list[dict] = []
        sweep = (data["position_leak"], data["faint_leak"])
        for case, record, output in zip(cases, data["cases"], outputs):
            name = record["group"]
            group = "positions" if name in sweep else ("nan_rule" if name == nan_defect else name)

            def missed_in_sweep() -> None:
                if name == data["faint_leak"]:
                    missed_faint.append(record)
                elif group == "positions":
                    missed_keys.append(record["key"])

            if "ok" not in output:
                if name in correct:
                    key = "common.timeout" if "timeout" in output else "common.raised"
                    error = output.get("error", {})
                    return self.result(0, "timeout" if "timeout" in output else "error",
                                       Feedback(key, {"name": self.id, "case": case.name,
                                                      "type": error.get("type", ""),
                                                      "message": error.get("message", "")}))
                verdicts.setdefault(group, []).append("error")
                missed_in_sweep()
                continue
            value = decode(output["ok"])
            verdict = _as_bool(value)
            if verdict is None:
                return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                                   Feedback("common.wrong_shape", {"case": case.name, "expected": "bool",
                                                                   "got": describe(value)}),
                                   diagnosis="wrong_shape")
            if verdict is False and group not in correct and group != "nan_rule" \
                    and not self.leak_witnessed(record, output):
                verdict = "unsupported"
            if verdict is not False:
                missed_in_sweep()
            verdicts.setdefault(group, []).append(verdict)
        flagged = [name for name in correct if not all(v is True for v in verdicts[name])]
        said = [v for vs in verdicts.values() for v in vs]
        if flagged:
            if all(v is False for v in said if v != "unsupported"):
                return self.diagnose_test("always_false")
            if flagged == ["attention"]:
                return self.diagnose_test("nan_perturbation")
            return self.diagnose_test("flags_correct", extra=[Feedback(f"lab02.impl.{n}") for n in flagged])
        leak_checks = data["leak_bugs"] + ["positions"]
        caught = [check for check in leak_checks if all(v is False for v in verdicts[check])]
        nan_ok = all(v in (True, False) for v in verdicts["nan_rule"])
        if nan_ok and caught:
            caught.append("nan_rule")
        missed = [check for check in data["checks"] if check not in caught]
        if not missed:
            return self.passed_result()
        bug_verdicts = [v for check in leak_checks for v in verdicts[check]]
        if all(v is True for v in bug_verdicts):
            diagnosis = "always_true" if nan_ok else "crashes_on_nan"
        elif "unsupported" in bug_verdicts:
            diagnosis = "no_evidence"
        elif "error" in bug_verdicts:
            diagnosis = "raises_on_bug"
        elif missed == ["nan_rule"]:
            diagnosis = "crashes_on_nan"
        elif missed == ["positions"] and not missed_keys:
            diagnosis = "tolerance_too_loose"
        elif missed == ["positions"]:
            diagnosis = "missed_positions"
        else:
            diagnosis = "missed_bugs"
        listing = [Feedback("lab02.missed", {"caught": len(caught), "total": len(data["checks"])})]
        for check in missed:
            if check == "positions":
                if missed_keys:
                    keys = ", ".join(str(k) for k in sorted(set(missed_keys)))
                    listing.append(Feedback("lab02.impl.position_leaks", {"positions": keys}))
                for record in missed_faint:
                    listing.append(Feedback("lab02.impl.faint_leak", {"query": record["query"],
                                                                      "key": record["key"]}))
            elif check == "nan_rule":
                if not nan_ok:
                    listing.append(Feedback("lab02.impl.nan_rule"))
            else:
                listing.append(Feedback(f"lab02.impl.{check}"))
        return self.diagnose_test(diagnosis, points=float(len(caught)), extra=listing)


CRASHED = "__prefix_test_crashed__"
UNSUPPORTED = "__prefix_test_unsupported__"


class PrefixTest(Recorded):
    """lab03.prefix_test: the correct and the leaking public decoders; a rejection counts only with evidence."""

    def cases(self, ctx, seed=None):
        return [Case(r["name"], r["call"], data={"optional": r["optional"]}) for r in self.data["cases"]]

    def pointer_for(self, diagnosis: str) -> Feedback:
        key, params = self.data["pointers"][diagnosis]
        return Feedback(key, params)

    def judge(self, ctx, cases, outputs):
        marked = []
        for record, output in zip(self.data["cases"], outputs):
            if record["bug"] != "correct" and "ok" not in output:
                error = output.get("error") or {"type": next(iter(output), "error"), "message": ""}
                output = {"ok": {CRASHED: {"type": error["type"], "message": error["message"]}}}
            elif (record["bug"] != "correct" and "ok" in output and _as_bool(decode(output["ok"])) is False
                  and not self.witnessed(record, output)):
                output = {"ok": {UNSUPPORTED: True}}
            marked.append(output)
        return super().judge(ctx, cases, marked)

    @staticmethod
    def witnessed(record: dict, output: dict) -> bool:
        inputs = evidence.recorded_inputs(output)
        if not inputs:
            return False
        model = _trusted(record["call"]["args"][0])
        vocab = record["vocab"]

        def run(ids: np.ndarray) -> np.ndarray:
            import torch

            if ids.ndim != 2 or ids.shape[1] > 64 or ids.shape[0] > 64 or (ids < 0).any() or (ids >= vocab).any():
                raise ValueError("not token ids of this decoder")
            with torch.no_grad():
                return model(torch.tensor(ids, dtype=torch.long)).double().numpy()

        return evidence.witnessed(inputs, run, feature_dims=0, key=("lab03", record["name"]))

    def judge_outputs(self, ctx, cases, values):
        data = self.data
        sweep, checks = data["sweep"], data["checks"]
        sweep_bugs = (data["position_leak"], data["faint_leak"])
        crashes = {}
        verdicts: dict[str, list] = {}
        missed_sweep: list[tuple[str, list]] = []
        for case, record, value in zip(cases, data["cases"], values):
            check = sweep if record["bug"] in sweep_bugs else record["bug"]
            if isinstance(value, dict) and CRASHED in value:
                crashes.setdefault(check, value[CRASHED])
                verdict = None
            elif isinstance(value, dict) and UNSUPPORTED in value:
                verdict = "unsupported"
            else:
                verdict = _as_bool(value)
                if verdict is None:
                    key = "lab03.returned_none" if value is None else "common.wrong_shape"
                    return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                                       Feedback(key, {"case": case.name, "expected": "bool", "got": describe(value)}),
                                       Feedback("lab03.wrong_type"), diagnosis="wrong_type")
            if check == sweep and verdict is not False:
                missed_sweep.append((record["bug"], record["leak"]))
            verdicts.setdefault(check, []).append(verdict)
        if not all(v is True for v in verdicts["correct"]):
            flagged_all = all(v in (False, "unsupported") for check in checks for v in verdicts[check])
            return self.recorded("always_false" if flagged_all else "rejects_correct")
        caught = [check for check in checks if all(v is False for v in verdicts[check])]
        missed = [check for check in checks if check not in caught]
        if not missed:
            return self.passed_result()
        feedback = [Feedback("common.failed", {"name": self.id}),
                    Feedback("lab03.passed_checks", {"caught": len(caught), "total": len(checks)})]
        for check in missed:
            if check in crashes:
                continue
            if check == sweep:
                positions = sorted({leak[0] for bug, leak in missed_sweep if bug == data["position_leak"]})
                if positions:
                    feedback.append(Feedback("lab03.missed.positions",
                                             {"positions": ", ".join(str(t) for t in positions)}))
                for bug, leak in missed_sweep:
                    if bug == data["faint_leak"]:
                        feedback.append(Feedback("lab03.missed.faint_leak", {"position": leak[0], "token": leak[1]}))
            else:
                feedback.append(Feedback(f"lab03.missed.{check}"))
        said = [v for check in checks for v in verdicts[check]]
        if crashes:
            check, error = next(iter(crashes.items()))
            feedback.append(Feedback("lab03.crashes", {"bug": check, "type": error["type"],
                                                       "message": str(error["message"])[:160]}))
            diagnosis = "crashes"
        elif not caught and all(v is True for v in said):
            diagnosis = "always_true"
        elif "unsupported" in said:
            diagnosis = "no_evidence"
        elif missed == [sweep] and all(bug == data["faint_leak"] for bug, _ in missed_sweep):
            diagnosis = "tolerance_too_loose"
        elif missed == [sweep]:
            diagnosis = "missed_positions"
        else:
            diagnosis = "missed_bugs"
        if diagnosis != "crashes":
            feedback.append(Feedback(f"lab03.{diagnosis}"))
        feedback.append(self.pointer_for(diagnosis))
        return self.result(len(caught), "failed", *feedback, diagnosis=diagnosis)


JUDGES.update(perturbation_test=PerturbationTest, prefix_test=PrefixTest)
