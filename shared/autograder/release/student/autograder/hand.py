"""lab00 in the student release: hand-typed answers checked without an answer key to hand out.

Each student's Q, K and V come from their id (the same draw as the grader's),
so the answers cannot be recorded at release time. `check` recomputes them
inside `_verdict`, which returns only what the feedback says (passed, the name
of the recognised slip, or the first wrong position); no function here returns
a right answer (tests/test_release_hand.py calls every function of the release
to make sure), and nothing but Q, K and V (the problem, which `show_problem`
prints anyway) leaves this module. A student can of course compute the answers
from Q, K and V with numpy, by hand-written code: that is the exercise. tests/test_release_parity.py holds it to the
same verdicts as the instructor's lab00 on every answer of its corpus.
"""
from __future__ import annotations

import hashlib
import itertools
import math

import numpy as np

from .exercise import Case, Exercise, Feedback, Result, close, first_wrong_entry, shape_mismatch, value_mismatch

T, D_K, MASK_T = 3, 2, 4
ROUNDING_TOL = 0.0151
DISTINCT = 0.04
SEPARATED = ("qk_scores", "scaled_scores", "attention_weights", "attention_output")
HALF_HUNDREDTH = 0.0051


def _normalise_id(student_id: str) -> str:
    return student_id.strip().casefold()


def variant(student_id: str) -> dict[str, np.ndarray]:
    """The student's problem: Q, K (T, d_k) and V (T, 2), drawn from the id until every slip is distinct."""
    digest = hashlib.sha256(("lab00:" + _normalise_id(student_id)).encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    while True:
        Q = rng.integers(0, 4, size=(T, D_K)).astype(float)
        K = rng.integers(0, 4, size=(T, D_K)).astype(float)
        V = rng.integers(-2, 4, size=(T, 2)).astype(float)
        problem = {"Q": Q, "K": K, "V": V}
        if _separated(problem):
            return problem


def _softmax_rows(scores):
    with np.errstate(invalid="ignore"):
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def _gap(a, b) -> float:
    a = np.nan_to_num(np.asarray(a, float), nan=1e6, posinf=1e6, neginf=-1e6)
    b = np.nan_to_num(np.asarray(b, float), nan=1e6, posinf=1e6, neginf=-1e6)
    return float(np.max(np.abs(a - b)))


def _verdict(exercise_id: str, p: dict, answer: np.ndarray | None = None, atol: float = 0.0):
    """What `check` may say about `answer`, never the right matrix.

    ("passed", None) | ("slip", name) | ("wrong", first wrong position); with no
    answer, ("separated", bool): every slip differs from the right answer and
    from the other slips by more than DISTINCT (the draw of a variant needs it).
    The right answer and the slips exist only inside this call.
    """
    mask = np.where(np.tril(np.ones((T, T), dtype=bool)), 0.0, -np.inf)
    raw = p["Q"] @ p["K"].T
    s = raw / math.sqrt(D_K)
    strict = np.where(np.tril(np.ones((T, T), dtype=bool), k=-1), 0.0, -np.inf)
    w = _softmax_rows(s + mask)
    ok = np.tril(np.ones((MASK_T, MASK_T), dtype=bool))
    candidates = {
        "qk_scores": [(None, raw), ("transposed_k", p["K"] @ p["Q"].T)],
        "scaled_scores": [(None, s), ("forgot_scale", raw), ("divided_by_dk", raw / D_K),
                          ("transposed_k", raw.T / math.sqrt(D_K))],
        "causal_mask_T4": [(None, np.where(ok, 0.0, -np.inf)), ("wrong_triangle", np.where(ok.T, 0.0, -np.inf)),
                           ("diagonal_masked", np.where(np.tril(ok, k=-1), 0.0, -np.inf)),
                           ("zero_inf_swapped", np.where(ok, -np.inf, 0.0)), ("binary_mask", ok.astype(float)),
                           ("binary_mask", (~ok).astype(float))],
        "attention_weights": [(None, w), ("no_mask", _softmax_rows(s)),
                              ("mask_after_softmax", _softmax_rows(s) * np.tril(np.ones((T, T)))),
                              ("forgot_scale", _softmax_rows(raw + mask)), ("wrong_triangle", _softmax_rows(s + mask.T)),
                              ("diagonal_masked", _softmax_rows(s + strict)), ("transposed_k", _softmax_rows(s.T + mask)),
                              ("wrong_axis", _softmax_rows((s + mask).T).T)],
        "attention_output": [(None, w @ p["V"]), ("no_mask", _softmax_rows(s) @ p["V"]),
                             ("weights_transposed", w.T @ p["V"])],
    }[exercise_id]
    (_, right), *slips = candidates
    if answer is None:
        distinct = all(_gap(slip, right) > DISTINCT for _, slip in slips) and all(
            _gap(a, b) > DISTINCT for (_, a), (_, b) in itertools.combinations(slips, 2))
        return "separated", distinct
    if close(answer, right, atol):
        return "passed", None
    for name, slip in slips:
        if name == "diagonal_masked" and exercise_id == "attention_weights":
            if close(answer[1:], slip[1:], atol):  # row 0 has no allowed key: the rest tells
                return "slip", name
        elif close(answer, slip, atol):
            return "slip", name
    return "wrong", first_wrong_entry(answer, right, atol)


def _could_be_weights(weights) -> bool:
    """Finite, non-negative, zero above the diagonal, rows summing to 1 (up to rounding to 2 decimals)."""
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2 or weights.shape[0] != weights.shape[1] or not np.isfinite(weights).all():
        return False
    row_sum_tol = weights.shape[-1] * 0.005 + HALF_HUNDREDTH
    return bool((weights >= -HALF_HUNDREDTH).all()
                and (np.abs(np.triu(weights, k=1)) <= HALF_HUNDREDTH).all()
                and (np.abs(weights.sum(axis=-1) - 1.0) <= row_sum_tol).all())


def _separated(problem: dict) -> bool:
    return all(_verdict(exercise_id, problem)[1] for exercise_id in SEPARATED)


class HandCheck(Exercise):
    kind = "value"

    def __init__(self, exercise_id: str, points: float, section: str, shape: tuple[int, int], atol: float):
        self.id, self.points, self.section, self.shape, self.atol = exercise_id, points, section, shape, atol

    def cases(self, ctx, seed=None):
        cases = [Case(self.id, {"kind": "value", "target": self.id})]
        if self.id == "attention_output":
            cases.append(Case("attention_weights", {"kind": "value", "target": "attention_weights"},
                              data={"optional": True}))
        return cases

    def tolerance(self, problem) -> float:
        if self.id == "attention_output":
            return ROUNDING_TOL + 0.005 * float(np.abs(problem["V"]).sum(axis=0).max())
        return self.atol

    def judge_outputs(self, ctx, cases, values) -> Result:
        got = values[0]
        if self.id == "causal_mask_T4" and hasattr(got, "values") and got.shape == self.shape:
            answer = np.where(got.values.astype(float) <= -1e9, -np.inf, got.values.astype(float))
            got = type(got)(answer, got.dtype)
        result = self._judge_answer(ctx, cases, got)
        own = values[1] if len(values) > 1 else None
        if (self.id == "attention_output" and result.status == "failed" and result.diagnosis != "wrong_shape"
                and hasattr(own, "values") and own.shape == (T, T) and _could_be_weights(own.values)):
            own_output = own.values.astype(float) @ ctx["variant"]["V"]
            if close(got.values.astype(float), own_output, self.tolerance(ctx["variant"])):
                return self.result(self.points, "passed", Feedback("common.passed", {"name": self.id}),
                                   Feedback("lab00.carried_forward", {}), diagnosis="carried_forward")
        return result

    def _judge_answer(self, ctx, cases, got) -> Result:
        if hasattr(got, "values") and got.shape == (self.shape[0], 2 * self.shape[1]):
            return self.diagnosed("decimal_comma")
        if not hasattr(got, "values") or got.shape != self.shape:
            return shape_mismatch(self, cases[0], got, str(self.shape))
        answer = got.values.astype(float)
        outcome, detail = _verdict(self.id, ctx["variant"], answer, self.tolerance(ctx["variant"]))
        if outcome == "passed":
            return self.passed()
        if outcome == "slip":
            return self.diagnosed(detail)
        return value_mismatch(self, cases[0], answer, detail)


def make_context(values: dict):
    student_id = values.get("STUDENT_ID")
    if not isinstance(student_id, str) or not student_id.strip():
        return {}, ("lab00.no_student_id", {})
    return {"student_id": student_id.strip(), "variant": variant(student_id)}, None


def format_variant(problem: dict) -> str:
    lines = []
    for name in ("Q", "K", "V"):
        rows = ", ".join("[" + ", ".join(f"{int(x)}" for x in row) + "]" for row in problem[name])
        lines.append(f"{name} = [{rows}]")
    return "\n".join(lines)
