"""Judging from recorded data: what `check` does in the student release.

At release time the instructor's exercise definitions were run on every public
case: the right output, the output of each named slip and the feedback each
gets were written to data/labs.json. Here a student's output is compared with
those outputs in the order the definitions try them, so the verdict, points and
feedback are the ones the full autograder gives, without its reference code.

The way of judging is recorded per exercise (`mode`): "tensor" here (one
tensor per case, tried against the right one, special cases, then the slips in
order: lab01's masks); the modes of labs 02-04 in judges.py; lab00 ("hand")
has no cases to record: see hand.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .exercise import Array, Case, Exercise, Feedback, Result, close, describe, first_difference, value_mismatch


def result_from(data: dict, exercise_id: str, max_points: float) -> Result:
    feedback = [Feedback(key, params) for key, params in data["feedback"]]
    return Result(exercise_id, float(data["points"]), float(max_points), data["status"], feedback,
                  data.get("diagnosis"))


def array_from(data: dict) -> np.ndarray:
    values = np.array(data["values"], dtype=bool if data["bool"] else float)
    return values.reshape(data["shape"])


def _is_torch(value: Any) -> bool:
    return isinstance(value, Array) and not value.dtype.startswith("numpy.")


class TensorReplay(Exercise):
    """One tensor per case (lab01): right, special, slips in order, wrong type, first wrong entry."""

    def __init__(self, data: dict):
        self.id, self.points, self.section, self.kind = data["id"], data["points"], data["section"], data["kind"]
        self.data = data
        self.expected_kind, self.atol, self.block = data["expected_kind"], data["atol"], data["block"]
        self.slip_atol = data.get("slip_atol")

    def cases(self, ctx, seed=None):
        return [Case(case["name"], case["call"]) for case in self.data["cases"]]

    def kind_ok(self, got) -> bool:
        if not _is_torch(got):
            return False
        if self.expected_kind == "int64":
            return got.dtype == "int64"
        return got.dtype == "bool" if self.expected_kind == "bool" else got.is_float

    def normalise(self, got: Array) -> np.ndarray:
        if self.expected_kind == "float":
            values = np.asarray(got.values, dtype=float)
            return np.where(values <= self.block, -np.inf, values)
        return got.values.astype(bool) if got.is_bool else got.values.astype(float)

    def same(self, got: np.ndarray, want: np.ndarray) -> bool:
        if got.shape != want.shape:
            return False
        if want.dtype == bool:
            return got.dtype == bool and bool(np.array_equal(got, want))
        return close(got, want, self.atol)

    def same_slip(self, got: np.ndarray, slip: np.ndarray) -> bool:
        if self.slip_atol is None:
            return self.same(got, slip)
        return got.shape == slip.shape and close(got, slip, self.slip_atol)

    def judge_outputs(self, ctx, cases, values) -> Result:
        for case, record, got in zip(cases, self.data["cases"], values):
            result = self.judge_case(case, record, got)
            if result is not None:
                return result
        return result_from(self.data["passed"], self.id, self.points)

    def wrong_type(self, case: Case, got, expected: str) -> Result:
        if not _is_torch(got):
            expected = "torch.Tensor " + expected
        return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                           Feedback("common.wrong_shape", {"case": case.name, "expected": expected,
                                                           "got": describe(got)}),
                           diagnosis="wrong_shape")

    def judge_case(self, case: Case, record: dict, got) -> Result | None:
        want = array_from(record["expected"])
        expected = record["expected_text"]
        if not isinstance(got, Array):
            return self.wrong_type(case, got, expected)
        answer = self.normalise(got)
        if self.kind_ok(got) and self.same(answer, want):
            return None
        special = self.special(record, got, answer, want)
        if special is not None:
            return special
        for slip in record["slips"]:
            if self.kind_ok(got) and self.same_slip(answer, array_from(slip["value"])):
                return result_from(slip["result"], self.id, self.points)
        if not self.kind_ok(got) or answer.shape != want.shape:
            return self.wrong_type(case, got, expected)
        index = first_difference(answer.astype(float), want.astype(float), self.atol)
        return value_mismatch(self, case, answer.astype(float), index or (0,) * want.ndim)

    def special(self, record: dict, got: Array, answer: np.ndarray, want: np.ndarray) -> Result | None:
        special = record.get("special")
        if special is None:
            return None
        if special["kind"] == "nan":
            if self.kind_ok(got) and answer.shape == want.shape and np.isnan(answer).any():
                return result_from(special["result"], self.id, self.points)
        elif special["kind"] == "reshaped":
            if got.dtype == "bool" and _is_torch(got) and answer.shape != want.shape and answer.size == want.size \
                    and np.array_equal(answer.reshape(-1), want.reshape(-1)):
                result = result_from(special["result"], self.id, self.points)
                got_shape = "(" + ", ".join(str(n) for n in answer.shape) + ")"
                result.feedback[1] = Feedback(result.feedback[1].key, {**result.feedback[1].params, "got": got_shape})
                return result
        return None


@dataclass
class ReplayLab:
    id: str
    exercises: list[Exercise]
    context_names: tuple[str, ...] = ()
    max_score: float = 0.0

    @classmethod
    def from_data(cls, data: dict) -> "ReplayLab":
        exercises: list[Exercise] = []
        for exercise in data["exercises"]:
            if exercise["mode"] == "tensor":
                exercises.append(TensorReplay(exercise))
            elif exercise["mode"] == "hand":
                from .hand import HandCheck

                exercises.append(HandCheck(exercise["id"], exercise["points"], exercise["section"],
                                           tuple(exercise["shape"]), exercise["atol"]))
            else:
                from .judges import JUDGES

                exercises.append(JUDGES[exercise["mode"]](exercise))
        for exercise in exercises:
            exercise.lab = data["id"]
        return cls(data["id"], exercises, tuple(data.get("context_names", ())), float(data["max_score"]))

    def show_context(self, ctx: dict) -> str:
        from .hand import format_variant

        return format_variant(ctx["variant"])

    def make_context(self, values: dict):
        if self.id == "lab00":
            from .hand import make_context

            return make_context(values)
        return {}, None
