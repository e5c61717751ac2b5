"""What judges need besides the exercise's reference: one copy for the repository, the grader and the release.

A judge (a class of judging02/03/04, or TensorExercise) compares a student's
output with the exercise's *reference*: the right output, each named slip's
output, a dependence pattern, the trusted function a student's test is run on.
It asks for them through three methods of one case, which the lab module
computes (lab02.py, lab03.py, lab04.py: reference code, hidden cases) and the
student release reads back from what was recorded at release time
(release/replay.py records them with `to_plain`; the release's replay.py reads
them with `from_plain`). These modules hold judging only: no reference code
and no case generator, so the release ships them as they are.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import i18n
from ..i18n import N_
from ..exercise import (Array, Case, Exercise, Feedback, Result, close, describe, first_wrong_entry,
                        value_mismatch)

# Any value <= this counts as -inf in an additive mask: -1e4 (BERT's fill, safe in fp16), -1e9 stored in
# bf16 (-998244352) and finfo.min all block as well as -inf does next to finite scores.
BLOCK = -1e4


class Judge(Exercise):
    """An exercise judged against a reference that depends on the case only (never on the answer).

    `reference(case)` is what every answer is compared with; `slip_references(case)` what a wrong answer
    is matched against (asked only once an answer is wrong: computing it can cost more than the
    reference); `trusted_function(case)` the function a student's test receives, for the grader's own
    runs. Each returns plain data or numpy arrays (see to_plain), the function excepted.
    """

    def reference(self, case: Case) -> Any:
        raise NotImplementedError

    def slip_references(self, case: Case) -> Any:
        return []

    def trusted_function(self, case: Case):
        raise NotImplementedError


# Methods of a judge that say where a reference comes from: the only ones a lab module's subclass may define.
REFERENCE_METHODS = ("reference", "slip_references", "trusted_function")


def judge_class(exercise: Exercise) -> type | None:
    """The judging class a lab module's exercise extends (the first in its MRO defined in a judging module)."""
    for kind in type(exercise).__mro__:
        if kind.__module__.rsplit(".", 1)[-1].startswith("judging") and issubclass(kind, Judge) and kind is not Judge:
            return kind
    return None


# ---------------------------------------------------------------- references as plain data (JSON)
def to_plain(value: Any) -> Any:
    """Arrays, tuples and numpy scalars as JSON-able data that from_plain reads back (tuples as lists)."""
    if isinstance(value, np.ndarray):
        is_bool = value.dtype == bool
        flat = value.reshape(-1).tolist() if is_bool else [float(x) for x in value.astype(float).reshape(-1)]
        return {"__array__": flat, "bool": bool(is_bool), "shape": list(value.shape)}
    if isinstance(value, (list, tuple)):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_plain(item) for key, item in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value


def from_plain(value: Any) -> Any:
    if isinstance(value, dict):
        if "__array__" in value:
            values = np.array(value["__array__"], dtype=bool if value["bool"] else float)
            return values.reshape(value["shape"])
        return {key: from_plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [from_plain(item) for item in value]
    return value


# ---------------------------------------------------------------- what came back
def shape_str(shape: tuple) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


def is_torch(value: Any) -> bool:
    return isinstance(value, Array) and not value.dtype.startswith("numpy.")


def is_torch_float(value: Any) -> bool:
    return is_torch(value) and value.is_float


def is_torch_bool(value: Any) -> bool:
    return is_torch(value) and value.dtype == "bool"


def as_additive(values: np.ndarray) -> np.ndarray:
    """Float mask with every value <= BLOCK read as -inf."""
    values = np.asarray(values, dtype=float)
    return np.where(values <= BLOCK, -np.inf, values)


def close_nan(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
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


def is_float_array(value: Any, shape: tuple[int, ...]) -> bool:
    return isinstance(value, Array) and value.is_float and value.shape == tuple(shape)


def as_bool(value: Any) -> bool | None:
    """A Python bool, or a 0-d boolean tensor/array (`(a == b).all()`), as a bool; else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Array) and value.is_bool and value.shape == ():
        return bool(value.values)
    return None


# ---------------------------------------------------------------- one tensor per case
class TensorExercise(Judge):
    """An exercise whose answer is one tensor per case, with named wrong answers.

    Subclasses give `expected(case)` (np array), `expected_kind` ("bool",
    "float" or "int64") and `slips(case)`: (diagnosis, wrong answer, message key or None,
    params) tried in order when the answer is wrong. A slip may have another
    shape than the right answer (a mask that broadcasts wrongly).
    """

    expected_kind = "bool"
    atol = 0.0
    # A slip's output matches within this tolerance (outputs of arithmetic, not exact masks); None: as `same`.
    slip_atol: float | None = None
    # Diagnosis -> chapter section, where it differs from `section`.
    sections: dict[str, str] = {}
    # A diagnosis that is not a fixed wrong answer, tried before the slips (see special): lab01's masks.
    special_rule: str | None = None

    def expected(self, case: Case) -> np.ndarray:
        raise NotImplementedError

    def slips(self, case: Case) -> list[tuple[str, np.ndarray, str | None, dict]]:
        return []

    # -- messages
    def diagnose(self, diagnosis: str, key: str | None = None, points: float = 0.0,
                 extra: list[Feedback] | None = None, **params) -> Result:
        """Like Exercise.diagnosed, with an optional message key and a section per diagnosis."""
        if key is None:
            key = f"{self.lab}.{diagnosis}"
            if not i18n.has(key):
                key = f"diagnosis.{diagnosis}"
        feedback = [Feedback("common.failed", {"name": self.id}), Feedback(key, params), *(extra or [])]
        section = self.sections.get(diagnosis, self.section)
        if section:
            feedback.append(Feedback("common.see_section", {"section": section}))
        return self.result(points, "failed", *feedback, diagnosis=diagnosis)

    # What the kind of answer means in this exercise (`common.kind.*`); by default from expected_kind.
    kind_key: str | None = None

    def kind_message(self) -> str:
        return self.kind_key or {"bool": "common.kind.bool_mask", "int64": "common.kind.positions"}.get(
            self.expected_kind, "common.kind.float")

    def wrong_type(self, case: Case, got: Any, expected: str) -> Result:
        """Not a tensor, a tensor of the wrong kind, or of the wrong shape: say which, and what this exercise's
        kind of answer means (a float additive mask of 0 and -inf, a boolean mask...), never only two dtypes."""
        want_shape = str(tuple(np.shape(self.expected(case))))  # as Python writes it: (6,) for one axis
        if not is_torch(got):
            message = Feedback("common.not_a_tensor", {"case": case.shown, "expected": want_shape,
                                                        "got": describe(got)})
            kind = self.kind_message()
        elif isinstance(got, Array) and str(tuple(got.shape)) == want_shape:
            message = Feedback("common.wrong_kind", {"case": case.shown, "got": got.dtype})
            kind = "common.kind.bool_not_additive" if self.kind_message() == "common.kind.additive_mask" \
                and got.is_bool else self.kind_message()
        else:
            message = Feedback("common.wrong_shape", {"case": case.shown, "expected": want_shape,
                                                       "got": str(tuple(got.shape)) if isinstance(got, Array)
                                                       else describe(got)})
            kind = None if self.kind_ok(got) else self.kind_message()
        feedback = [Feedback("common.failed", {"name": self.id}), message]
        if kind is not None:
            feedback.append(Feedback(kind, {}))
        return self.result(0, "failed", *feedback, diagnosis="wrong_shape")

    # -- judging
    def kind_ok(self, got: Any) -> bool:
        if self.expected_kind == "int64":  # position ids (lab05)
            return is_torch(got) and got.dtype == "int64"
        return is_torch_bool(got) if self.expected_kind == "bool" else is_torch_float(got)

    def normalise(self, got: Array) -> np.ndarray:
        if self.expected_kind == "float":
            return as_additive(got.values)
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
        return got.shape == np.shape(slip) and close(got, slip, self.slip_atol)

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        for case, got in zip(cases, values):
            result = self.judge_case(case, got)
            if result is not None:
                return result
        return self.passed()

    def judge_case(self, case: Case, got: Any) -> Result | None:
        want = self.expected(case)
        expected = f"{self.expected_kind} {shape_str(want.shape)}"
        if not isinstance(got, Array):
            return self.wrong_type(case, got, expected)
        answer = self.normalise(got)
        if self.kind_ok(got) and self.same(answer, want):
            return None
        special = self.special(case, got, answer)
        if special is not None:
            return special
        for diagnosis, slip, key, params in self.slips(case):
            if self.kind_ok(got) and self.same_slip(answer, slip):
                return self.diagnose(diagnosis, key, **params)
        if not self.kind_ok(got) or answer.shape != want.shape:
            return self.wrong_type(case, got, expected)
        return value_mismatch(self, case, answer.astype(float),
                              first_wrong_entry(answer.astype(float), want.astype(float), self.atol))

    def special(self, case: Case, got: Array, answer: np.ndarray) -> Result | None:
        """A diagnosis that is not a fixed wrong answer, as `special_rule` names it.

        nan_in_mask: a mask of the right kind and shape that holds NaN; padding_shape: the right
        values in a shape that broadcasts wrongly against (B, H, T, T).
        """
        if self.special_rule == "nan_in_mask":
            if self.kind_ok(got) and answer.shape == self.expected(case).shape and np.isnan(answer).any():
                return self.diagnose("nan_in_mask")
        elif self.special_rule == "padding_shape":
            want = self.expected(case)
            if is_torch_bool(got) and answer.shape != want.shape and answer.size == want.size:
                if np.array_equal(answer.reshape(-1), want.reshape(-1)):
                    return self.diagnose("padding_shape", got=shape_str(answer.shape), expected=shape_str(want.shape))
        return None


# The meanings of the kinds of answer (TensorExercise.kind_message).
N_("common.kind.bool_mask", "common.kind.positions", "common.kind.float", "common.kind.additive_mask",
   "common.kind.bool_not_additive")
