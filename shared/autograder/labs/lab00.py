"""lab00, attention by hand: each student gets their own small T=3, d_k=2 problem.

The student types five answers as nested lists: QK^T, the scaled scores, the
causal mask for T=4, the softmax weights and the output. Each answer is judged
against the student's variant; a wrong answer is matched against the classic
slips (each computed here from the same variant) so the feedback can name it.
"""
from __future__ import annotations

import hashlib
import itertools
import math

import numpy as np

from ..i18n import N_
from ..exercise import Case, Exercise, Feedback, Result, close, first_wrong_entry, shape_mismatch, value_mismatch
from . import LabSpec

T = 3
D_K = 2
MASK_T = 4
ROUNDING_TOL = 0.0151  # rounding to 2 decimals (±0.005) plus ±0.01 of slack
DISTINCT = 0.04  # every slip differs from the right answer by more than this somewhere
HALF_HUNDREDTH = 0.0051  # what rounding to 2 decimals moves one entry by (0.005), and a little slack
SAMPLE_STUDENT_ID = "sample-student"


# ---------------------------------------------------------------- variants
def normalise_id(student_id: str) -> str:
    return student_id.strip().casefold()


def variant(student_id: str) -> dict[str, np.ndarray]:
    """Q, K (T, d_k) and V (T, 2) of small integers, fixed by the student id.

    Draws until every classic slip gives an answer that differs from the right
    one (and from the other slips) by more than the rounding tolerance, so a
    diagnosis is never ambiguous and a slip never passes.
    """
    digest = hashlib.sha256(("lab00:" + normalise_id(student_id)).encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    while True:
        Q = rng.integers(0, 4, size=(T, D_K)).astype(float)  # (T, d_k)
        K = rng.integers(0, 4, size=(T, D_K)).astype(float)  # (T, d_k)
        V = rng.integers(-2, 4, size=(T, 2)).astype(float)  # (T, d_v)
        problem = {"Q": Q, "K": K, "V": V}
        if _well_separated(problem):
            return problem


def _well_separated(problem: dict[str, np.ndarray]) -> bool:
    for exercise in (QKScores(), ScaledScores(), AttentionWeights(), AttentionOutput()):
        right = exercise.reference(problem)
        slips = [slip for _, slip in exercise.slips(problem)]
        for value in slips:
            if _max_gap(value, right) <= DISTINCT:
                return False
        for a, b in itertools.combinations(slips, 2):
            if _max_gap(a, b) <= DISTINCT:
                return False
    return True


def _max_gap(a: np.ndarray, b: np.ndarray) -> float:
    a = np.nan_to_num(np.asarray(a, float), nan=1e6, posinf=1e6, neginf=-1e6)
    b = np.nan_to_num(np.asarray(b, float), nan=1e6, posinf=1e6, neginf=-1e6)
    return float(np.max(np.abs(a - b)))


# ---------------------------------------------------------------- the math
def causal_mask(T: int) -> np.ndarray:
    """M[i, j] = 0 if j <= i else -inf."""
    return np.where(np.tril(np.ones((T, T), dtype=bool)), 0.0, -np.inf)  # (T, T)


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """Row-wise softmax; an all -inf row gives NaN, as torch.softmax does."""
    with np.errstate(invalid="ignore"):
        shifted = scores - scores.max(axis=-1, keepdims=True)
        e = np.exp(shifted)
        return e / e.sum(axis=-1, keepdims=True)


def scaled(problem) -> np.ndarray:
    return problem["Q"] @ problem["K"].T / math.sqrt(D_K)  # (T, T)


def weights_of(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return softmax_rows(scores + mask)


def could_be_weights(weights: np.ndarray) -> bool:
    """Whether typed weights could be this lab's causal attention weights, up to rounding to 2 decimals:
    finite, non-negative, zero above the diagonal, every row summing to 1.

    Only such weights carry an error forward to the output: all zeros, NaN (or
    NaN typed as 0), rows that do not sum to 1, or weight on future keys are no
    weights an output could rightly be computed from.
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2 or weights.shape[0] != weights.shape[1] or not np.isfinite(weights).all():
        return False
    row_sum_tol = weights.shape[-1] * 0.005 + HALF_HUNDREDTH  # each entry rounded by up to 0.005
    return bool((weights >= -HALF_HUNDREDTH).all()
                and (np.abs(np.triu(weights, k=1)) <= HALF_HUNDREDTH).all()
                and (np.abs(weights.sum(axis=-1) - 1.0) <= row_sum_tol).all())


# ---------------------------------------------------------------- exercises
class HandExercise(Exercise):
    """An answer typed by hand: a variable holding a nested list of numbers."""

    kind = "value"
    shape: tuple[int, int] = (T, T)
    atol = ROUNDING_TOL

    def reference(self, problem) -> np.ndarray:
        raise NotImplementedError

    def slips(self, problem) -> list[tuple[str, np.ndarray]]:
        """Named wrong answers, in the order they are tried."""
        return []

    def diagnosis_names(self) -> tuple[str, ...]:
        slips = (name for name, _ in self.slips(variant(SAMPLE_STUDENT_ID)))
        return tuple(dict.fromkeys([*slips, "decimal_comma"]))

    def cases(self, ctx: dict, seed: int | None = None) -> list[Case]:
        # A hand-typed answer has exactly one case; the per-student variant replaces random cases.
        return [Case(self.id, {"kind": "value", "target": self.id})]

    def tolerance(self, problem) -> float:
        return self.atol

    def judge_outputs(self, ctx, cases, values) -> Result:
        got = values[0]
        expected = str(self.shape)
        if hasattr(got, "values") and got.shape == (self.shape[0], 2 * self.shape[1]):
            # [[1,41, 9,19, 0,00], ...]: decimal commas make Python read twice as many numbers
            return self.diagnosed("decimal_comma")
        if not hasattr(got, "values") or got.shape != self.shape:
            return shape_mismatch(self, cases[0], got, expected)
        answer = got.values.astype(float)
        problem = ctx["variant"]
        atol = self.tolerance(problem)
        if close(answer, self.reference(problem), atol):
            return self.passed()
        for name, slip in self.slips(problem):
            if self.matches_slip(name, answer, slip, atol):
                return self.diagnosed(name)
        return value_mismatch(self, cases[0], answer, first_wrong_entry(answer, self.reference(problem), atol))

    def matches_slip(self, name: str, answer: np.ndarray, slip: np.ndarray, atol: float) -> bool:
        return close(answer, slip, atol)


class QKScores(HandExercise):
    id = "qk_scores"
    points = 2
    section = "03 §1"
    atol = 0.0101

    def reference(self, p):
        return p["Q"] @ p["K"].T  # (T, T)

    def slips(self, p):
        return [("transposed_k", p["K"] @ p["Q"].T)]


class ScaledScores(HandExercise):
    id = "scaled_scores"
    points = 2
    section = "03 §2"

    def reference(self, p):
        return scaled(p)

    def slips(self, p):
        raw = p["Q"] @ p["K"].T
        return [
            ("forgot_scale", raw),
            ("divided_by_dk", raw / D_K),
            ("transposed_k", raw.T / math.sqrt(D_K)),
        ]


class CausalMaskT4(HandExercise):
    id = "causal_mask_T4"
    points = 2
    section = "03 §3"
    shape = (MASK_T, MASK_T)
    atol = 0.0

    def reference(self, p):
        return causal_mask(MASK_T)

    def judge_outputs(self, ctx, cases, values) -> Result:
        got = values[0]
        if hasattr(got, "values") and got.shape == self.shape:
            # Any large negative number blocks as well as -inf does.
            answer = np.where(got.values.astype(float) <= -1e9, -np.inf, got.values.astype(float))
            values = [type(got)(answer, got.dtype)]
        return super().judge_outputs(ctx, cases, values)

    def slips(self, p):
        allowed = np.tril(np.ones((MASK_T, MASK_T), dtype=bool))
        strict = np.tril(np.ones((MASK_T, MASK_T), dtype=bool), k=-1)
        return [
            ("wrong_triangle", np.where(allowed.T, 0.0, -np.inf)),
            ("diagonal_masked", np.where(strict, 0.0, -np.inf)),
            ("zero_inf_swapped", np.where(allowed, -np.inf, 0.0)),
            ("binary_mask", allowed.astype(float)),
            ("binary_mask", (~allowed).astype(float)),
        ]


class AttentionWeights(HandExercise):
    id = "attention_weights"
    points = 2
    section = "03 §4"

    def reference(self, p):
        return weights_of(scaled(p), causal_mask(T))

    def slips(self, p):
        s = scaled(p)
        raw = p["Q"] @ p["K"].T
        lower = np.tril(np.ones((T, T)))
        strict = np.where(np.tril(np.ones((T, T), dtype=bool), k=-1), 0.0, -np.inf)
        return [
            ("no_mask", softmax_rows(s)),
            ("mask_after_softmax", softmax_rows(s) * lower),
            ("forgot_scale", weights_of(raw, causal_mask(T))),
            ("wrong_triangle", weights_of(s, causal_mask(T).T)),
            ("diagonal_masked", weights_of(s, strict)),
            ("transposed_k", weights_of(s.T, causal_mask(T))),
            ("wrong_axis", softmax_rows((s + causal_mask(T)).T).T),
        ]

    def matches_slip(self, name, answer, slip, atol):
        if name == "diagonal_masked":
            # Row 0 has no allowed key (NaN): whatever the student wrote there, the rest tells.
            return close(answer[1:], slip[1:], atol)
        return close(answer, slip, atol)


class AttentionOutput(HandExercise):
    id = "attention_output"
    points = 2
    section = "03 §5"
    shape = (T, 2)

    def cases(self, ctx, seed=None):
        # The student's own weights come along so that an output that is right
        # for wrong weights gets credit (error carried forward), said as such,
        # if those weights could be weights at all (could_be_weights).
        return [
            Case(self.id, {"kind": "value", "target": self.id}),
            Case("attention_weights", {"kind": "value", "target": "attention_weights"}, data={"optional": True}),
        ]

    def tolerance(self, p) -> float:
        # Weights rounded to 2 decimals move each output by up to 0.005 * sum_j |V[j, k]|.
        return ROUNDING_TOL + 0.005 * float(np.abs(p["V"]).sum(axis=0).max())

    def reference(self, p):
        return AttentionWeights().reference(p) @ p["V"]  # (T, d_v)

    def slips(self, p):
        w = AttentionWeights().reference(p)
        return [
            ("no_mask", softmax_rows(scaled(p)) @ p["V"]),
            ("weights_transposed", w.T @ p["V"]),
        ]

    def judge_outputs(self, ctx, cases, values) -> Result:
        result = super().judge_outputs(ctx, cases, values)
        own = values[1]
        if (result.status == "failed" and result.diagnosis != "wrong_shape" and hasattr(own, "values")
                and own.shape == (T, T) and could_be_weights(own.values)):
            own_output = own.values.astype(float) @ ctx["variant"]["V"]
            if close(values[0].values.astype(float), own_output, self.tolerance(ctx["variant"])):
                return self.result(self.points, "passed", Feedback("common.passed", {"name": self.id}),
                                   Feedback("lab00.carried_forward", {}), diagnosis="carried_forward")
        return result


EXERCISES: list[Exercise] = [QKScores(), ScaledScores(), CausalMaskT4(), AttentionWeights(), AttentionOutput()]


def make_context(values: dict) -> tuple[dict, tuple[str, dict] | None]:
    student_id = values.get("STUDENT_ID")
    if not isinstance(student_id, str) or not student_id.strip():
        return {}, ("lab00.no_student_id", {})
    return {"student_id": student_id.strip(), "variant": variant(student_id)}, None


def format_variant(problem: dict[str, np.ndarray]) -> str:
    """The student's Q, K, V as Python lists, ready to read (and language-neutral)."""
    lines = []
    for name in ("Q", "K", "V"):
        rows = ", ".join("[" + ", ".join(f"{int(x)}" for x in row) + "]" for row in problem[name])
        lines.append(f"{name} = [{rows}]")
    return "\n".join(lines)


# Message keys this module builds at run time (diagnosed(name), f"lab00.<part>.{name}"), listed for `make catalogs`.
N_(
    "lab00.decimal_comma",
)

LAB = LabSpec(id="lab00", exercises=EXERCISES, context_names=("STUDENT_ID",), make_context=make_context,
              show_context=lambda ctx: format_variant(ctx["variant"]))
