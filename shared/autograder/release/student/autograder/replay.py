"""Judging from recorded data: what `check` does in the student release.

At release time the instructor's exercise definitions were run on every public
case: the right output, the output of each named slip and the feedback each
gets were written to data/labs.json. Here a student's output is compared with
those outputs in the order the definitions try them, so the verdict, points and
feedback are the ones the full autograder gives, without its reference code.

The way of judging is recorded per exercise (`mode`): "tensor" for one
tensor per case (TensorExercise's judge, labs/judging.py, on the recorded right
answers and slips); "judge" for labs 02-04, whose
exercises are judged by the very classes the instructor's grader uses
(labs/judging*.py), on the references recorded for the public cases
(recorded_judge); lab00 ("hand") has no cases to record: see hand.py.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .exercise import Case, Exercise
from .labs.judging import TensorExercise, from_plain


def _label(record: dict) -> tuple[str, dict] | None:
    label = record.get("label")
    return (label[0], dict(label[1])) if label else None


def array_from(data: dict) -> np.ndarray:
    values = np.array(data["values"], dtype=bool if data["bool"] else float)
    return values.reshape(data["shape"])


class TensorReplay(TensorExercise):
    """One tensor per case (labs 01 and 05): TensorExercise's own judge on the recorded answers and slips."""

    def __init__(self, data: dict):
        self.id, self.points, self.section, self.kind = data["id"], data["points"], data["section"], data["kind"]
        self.recorded = data  # not `self.data`: numpy < 2 lets a fuzzed ndarray "self" have its buffer replaced
        self.expected_kind, self.atol, self.slip_atol = data["expected_kind"], data["atol"], data["slip_atol"]
        self.kind_key = data.get("kind_key")
        self.sections, self.special_rule = data["sections"], data["special_rule"]
        self._records = {record["name"]: record for record in data["cases"]}

    def cases(self, ctx, seed=None):
        return [Case(case["name"], case["call"], label=_label(case)) for case in self.recorded["cases"]]

    def expected(self, case: Case) -> np.ndarray:
        return array_from(self._records[case.name]["expected"])

    def slips(self, case: Case) -> list:
        return [(slip["diagnosis"], array_from(slip["value"]), slip["key"], slip["params"])
                for slip in self._records[case.name]["slips"]]


class RecordedReferences:
    """What a judge of labs/judging*.py asks of a case, read from the release's data instead of computed."""

    def __init__(self, data: dict):
        self.recorded = data  # not `self.data`: numpy < 2 lets a fuzzed ndarray "self" have its buffer replaced
        self._records = {record["name"]: record for record in data["cases"]}
        self._references = {record["name"]: (from_plain(record["reference"]), from_plain(record["slip_references"]))
                            for record in data["cases"]}
        self._functions: dict[str, Any] = {}

    def cases(self, ctx, seed=None):
        return [Case(record["name"], record["call"], data=record["data"], label=_label(record))
                for record in self.recorded["cases"]]

    def reference(self, case: Case):
        return self._references[case.name][0]

    def slip_references(self, case: Case):
        return self._references[case.name][1]

    def trusted_function(self, case: Case):
        """The function the case hands to the student's test, compiled again for check's own runs."""
        from .runtime import decode_arg

        if case.name not in self._functions:
            arg = self._records[case.name]["call"]["args"][0]
            self._functions[case.name] = decode_arg({"__function__": arg["__function__"], "name": arg["name"]})
        return self._functions[case.name]


def recorded_judge(data: dict) -> Exercise:
    """The judge class the data names (`judging02.CausalAttentionJudge`), on the recorded references."""
    import importlib

    module, name = data["judge"].split(".")
    judge = getattr(importlib.import_module(f"{__package__}.labs.{module}"), name)
    return type(name, (RecordedReferences, judge), {})(data)


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
                exercises.append(recorded_judge(exercise))
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
