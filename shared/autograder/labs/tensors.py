"""Helpers the labs' tensor exercises share: tensor arguments, hidden-case seeds, the judge of one-tensor answers.

lab01 builds its masks on them, lab02 judges attention with TensorExercise, and
labs 03 and 04 draw their hidden cases with rng_for. Keeping them out of any one
lab's module means that changing a lab (its points, say) re-executes only the
notebooks of that lab (labbook.dependencies).
"""
from __future__ import annotations

import math
import zlib
from typing import Any

import numpy as np

from .. import i18n
from ..exercise import Array, Case, Exercise, Feedback, Result, close, describe, first_difference, value_mismatch

# Any value <= this counts as -inf in an additive mask: -1e4 (BERT's fill, safe in fp16), -1e9 stored in
# bf16 (-998244352) and finfo.min all block as well as -inf does next to finite scores.
BLOCK = -1e4
def tensor_arg(values, dtype: str) -> dict:
    """An argument that reaches the student's code as a torch tensor."""
    return {"__tensor__": np.asarray(values).tolist(), "dtype": dtype}


def rng_for(seed: int, exercise_id: str) -> np.random.Generator:
    """The hidden cases of one exercise: drawn from the instructor's seed, different per exercise."""
    return np.random.default_rng([seed, zlib.crc32(exercise_id.encode())])


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


class TensorExercise(Exercise):
    """An exercise whose answer is one tensor per case, with named wrong answers.

    Subclasses give `expected(case)` (np array), `expected_kind` ("bool" or
    "float") and `slips(case)`: (diagnosis, wrong answer, message key or None,
    params) tried in order when the answer is wrong. A slip may have another
    shape than the right answer (a mask that broadcasts wrongly).
    """

    expected_kind = "bool"
    atol = 0.0
    # A slip's output matches within this tolerance (outputs of arithmetic, not exact masks); None: as `same`.
    slip_atol: float | None = None
    # Diagnosis -> chapter section, where it differs from `section`.
    sections: dict[str, str] = {}

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

    def wrong_type(self, case: Case, got: Any, expected: str) -> Result:
        """Wrong type, dtype or shape: say what was expected and what came back."""
        if not is_torch(got):
            expected = "torch.Tensor " + expected
        return self.result(
            0, "failed",
            Feedback("common.failed", {"name": self.id}),
            Feedback("common.wrong_shape", {"case": case.name, "expected": expected, "got": describe(got)}),
            diagnosis="wrong_shape",
        )

    # -- judging
    def kind_ok(self, got: Any) -> bool:
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
        index = first_difference(answer.astype(float), want.astype(float), self.atol)
        return value_mismatch(self, case, answer.astype(float), index or (0,) * want.ndim)

    def special(self, case: Case, got: Array, answer: np.ndarray) -> Result | None:
        """A diagnosis that is not a fixed wrong answer (NaN in a mask...)."""
        return None


# ---------------------------------------------------------------- numpy references of causal attention (labs 02, 05)
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


def f32(values: np.ndarray) -> np.ndarray:
    """What the student's code receives: the float32 tensor, read back as float64."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)
