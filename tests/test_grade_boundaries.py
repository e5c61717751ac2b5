"""Both sides of every tolerance and boundary that decides a grade.

Answers are built here as the plain data the worker sends back (`{"ok": {"__tensor__": ...}}`)
from references written independently of the labs (loops and plain numpy), then nudged just
inside and just outside each exercise's tolerance; the judges see exactly what the grader would
hand them. Also: what counts as "blocked" in an additive mask (-1e4 and below: -1e9, finfo.min,
-inf; never -1, never +inf), and the common judging every exercise shares (exercise.py).
"""
import json
import math
import warnings

import numpy as np
import pytest

from autograder import Lab
from autograder.exercise import (Array, Case, Exercise, Feedback, Opaque, Result, TooLarge, close, decode, describe,
                                 first_difference, fmt_number, shape_mismatch, value_mismatch)
from autograder.labs import get_lab, lab00
from autograder.labs.tensors import TensorExercise, mask_of, softmax

NEG = -math.inf
SEED = 20261


# ---------------------------------------------------------------- helpers
def tensor(values, dtype="float32"):
    values = np.asarray(values, dtype=float if dtype != "bool" else bool)
    return {"__tensor__": values.tolist(), "dtype": dtype, "shape": list(values.shape)}


def arg(value):
    if isinstance(value, dict) and "__tensor__" in value:
        return np.array(value["__tensor__"], dtype=float)
    return value


def judge(lab, exercise_id, answer, seed=None):
    """Judge `answer(*args, **kwargs)` (numpy in, plain data out) on every case, hidden ones too if seeded."""
    exercise = get_lab(lab).exercise(exercise_id)
    cases = exercise.cases({}, seed)
    outputs = []
    for case in cases:
        args = [arg(a) for a in case.call.get("args", [])]
        kwargs = {k: arg(v) for k, v in (case.call.get("kwargs") or {}).items()}
        outputs.append({"ok": answer(*args, **kwargs)})
    return exercise.judge({}, cases, outputs)


def additive_mask(T, fill=NEG):
    """0 where key j <= query i, `fill` elsewhere (written with loops, not with the lab's numpy)."""
    return np.array([[0.0 if j <= i else fill for j in range(T)] for i in range(T)])


def softmax_rows(x):
    out = np.empty_like(x, dtype=float)
    for index in np.ndindex(x.shape[:-1]):
        row = x[index]
        e = np.exp(row - row.max())
        out[index] = e / e.sum()
    return out


def attention(Q, K, V, allowed):
    """softmax(Q Kᵀ / √d_k, masked by `allowed` (query, key) -> bool) V, per leading index."""
    d_k = Q.shape[-1]
    scores = np.einsum("...id,...jd->...ij", Q, K) / math.sqrt(d_k)
    mask = np.array([[0.0 if allowed(i, j) else NEG for j in range(K.shape[-2])] for i in range(Q.shape[-2])])
    weights = softmax_rows(scores + mask)
    return weights @ V, weights


# ---------------------------------------------------------------- exercise.py: closeness and its reports
def test_close_is_within_atol_with_a_rounding_slack_and_no_more():
    assert close([1.0], [1.0101], 0.0101)  # exactly at the tolerance (1.0101 - 1.0 is 0.010100000000000442)
    assert not close([1.0], [1.0101 + 1e-9], 0.0101)
    assert close([0.0], [1e-12], 0.0) and not close([0.0], [1e-11], 0.0)
    assert close([[1.0, 2.0]], [[1.0, 2.0]], 0.0)
    assert not close([1.0, 2.0], [[1.0, 2.0]], 1.0)  # another shape, whatever the values


@pytest.mark.parametrize("a, b, same", [
    (NEG, NEG, True), (math.inf, math.inf, True), (math.inf, NEG, False), (NEG, math.inf, False),
    (NEG, -1e300, False), (math.inf, 1e300, False), (math.nan, math.nan, False), (math.nan, 0.0, False),
    (0.0, math.nan, False),
])
def test_close_on_infinities_and_nan(a, b, same):
    assert close([0.0, a], [0.0, b], 0.5) is same
    assert (first_difference(np.array([0.0, a]), np.array([0.0, b]), 0.5) is None) is same
    if not same:
        assert first_difference(np.array([0.0, a]), np.array([0.0, b]), 0.5) == (1,)


def test_close_reads_booleans_and_integers_as_numbers():
    # numpy can neither subtract booleans nor take their sign: close must read them as 0.0 and 1.0
    flags = np.array([True, False])
    assert close(flags, flags, 0.0)
    assert close(flags, np.array([1.0, 0.0]), 0.0) and close(np.array([1.0, 0.0]), flags, 0.0)
    assert not close(flags, np.array([1.0, 1.0]), 0.0) and not close(np.array([0.0, 0.0]), flags, 0.0)
    assert close(np.array([1, 2]), np.array([1.0, 2.0]), 0.0)


def test_close_and_softmax_on_infinities_print_no_numpy_warning():
    # inf - inf, -inf - (-inf) and a shift that overflows would print a RuntimeWarning into the grader's output
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert close([math.inf, NEG], [math.inf, NEG], 0.0)
        assert np.isnan(softmax(np.array([NEG, NEG]))).all()  # nothing allowed: NaN, as torch.softmax gives
        assert softmax(np.array([1.7e308, -1.7e308])).tolist() == [1.0, 0.0]  # the shift is -3.4e308: -inf


def test_softmax_shifts_each_row_by_its_own_maximum():
    # exp(1000) overflows: only subtracting the maximum keeps [1000, 0] finite; a row shifted by another
    # row's maximum (1000) would underflow to 0 / 0. Row 1 by hand: e^0 / (e^0 + e^1), e^1 / (e^0 + e^1).
    got = softmax(np.array([[1000.0, 0.0], [0.0, 1.0]]))
    e = math.e
    assert np.allclose(got, [[1.0, 0.0], [1 / (1 + e), e / (1 + e)]], rtol=0, atol=1e-15)
    # along the other axis (lab02's wrong_axis slip): each column by its own maximum
    assert np.allclose(softmax(np.array([[1000.0, 0.0], [0.0, 1.0]]), axis=-2),
                       [[1.0, 1 / (1 + e)], [0.0, e / (1 + e)]], rtol=0, atol=1e-15)


@pytest.mark.parametrize("T, k", [(1, 0), (3, 0), (4, 1), (4, -1)])
def test_mask_of_is_zero_where_a_key_is_allowed_and_minus_infinity_elsewhere(T, k):
    want = [[0.0 if j <= i + k else NEG for j in range(T)] for i in range(T)]
    assert mask_of(T, k).tolist() == want


def test_first_difference_is_the_first_entry_outside_the_tolerance_in_row_major_order():
    want = np.zeros((3, 4))
    got = want.copy()
    got[2, 0] = 0.3
    got[1, 3] = 0.2
    got[0, 1] = 0.1  # within 0.1: not a difference
    assert first_difference(got, want, 0.1) == (1, 3)
    assert first_difference(want, want, 0.0) is None
    assert first_difference(np.array([0.1 + 1e-13]), np.array([0.0]), 0.1) is None  # the same slack as close
    assert first_difference(np.array([1e-12]), np.array([0.0]), 0.0) is None  # exactly at atol + slack: close


@pytest.mark.parametrize("x, text", [(math.nan, "nan"), (math.inf, "inf"), (NEG, "-inf"), (1.23456, "1.235"),
                                     (-0.5, "-0.5"), (12345.6, "1.235e+04"), (2.0, "2")])
def test_numbers_in_feedback(x, text):
    assert fmt_number(x) == text


def test_decoding_what_the_worker_sends():
    value = decode({"__tuple__": [tensor([[1, 2], [3, 4]]), tensor([True, False], "bool"),
                                  {"__object__": "Thing", "repr": "<thing>"},
                                  {"__tensor__": None, "dtype": "float32", "shape": [9, 9]},
                                  [1, {"a": tensor([5])}], 7, "text"]})
    matrix, flags, thing, big, nested, number, text = value
    assert isinstance(value, tuple)
    assert isinstance(matrix, Array) and matrix.shape == (2, 2) and matrix.values.dtype == float
    assert matrix.values.tolist() == [[1.0, 2.0], [3.0, 4.0]] and matrix.dtype == "float32"
    assert flags.values.dtype == bool and flags.values.tolist() == [True, False]
    assert thing == Opaque("Thing", "<thing>")
    assert big == TooLarge("float32", (9, 9))
    assert nested[0] == 1 and isinstance(nested[1]["a"], Array)
    assert (number, text) == (7, "text")
    assert decode({"__object__": "X"}) == Opaque("X", "")


def test_decoded_values_are_float64_or_bool_whatever_numbers_arrive():
    # a numpy mask comes back as booleans, like a torch mask; JSON integers (a forged or older worker) as floats
    numpy_mask = decode({"__tensor__": [True, False], "dtype": "numpy.bool", "shape": [2]})
    assert numpy_mask.values.dtype == bool and numpy_mask.values.tolist() == [True, False]
    integers = decode({"__tensor__": [1, 2, 3, 4], "dtype": "int64", "shape": [2, 2]})
    assert integers.values.dtype == np.float64 and integers.values.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize("dtype, is_bool, is_float", [
    ("bool", True, False), ("numpy.bool", True, False), ("float32", False, True), ("float64", False, True),
    ("half", False, True), ("double", False, True), ("numpy.float64", False, True), ("int64", False, False),
    ("numpy.int64", False, False),
])
def test_array_kinds(dtype, is_bool, is_float):
    array = Array(np.zeros(2), dtype)
    assert (array.is_bool, array.is_float) == (is_bool, is_float)


def test_describe_says_what_came_back():
    torch_bool = Array(np.zeros((4, 4), bool), "bool")
    numpy_bool = Array(np.zeros((4, 4), bool), "numpy.bool")
    assert describe(torch_bool) == "bool (4, 4)"
    assert describe(numpy_bool) == "numpy.ndarray bool (4, 4)"
    assert describe(numpy_bool, typed=True) == "bool (4, 4)"
    assert describe(TooLarge("numpy.float64", (9,))) == "numpy.ndarray float64 (9,)"
    assert describe((torch_bool, 3)) == "tuple(bool (4, 4), int)"
    assert describe([numpy_bool], typed=True) == "list[bool (4, 4)]"
    assert describe([TooLarge("float32", (2,)), 1]) == "list[float32 (2,), int]"
    assert describe([1, 2, 3]) == "list[3]"
    assert describe(Opaque("MyTensor", "")) == "MyTensor"
    assert describe(None) == "NoneType" and describe("x") == "str"


# ---------------------------------------------------------------- exercise.py: what every judge does first
class Doubling(Exercise):
    """A small exercise: f(x) = 2 x, two required cases and one optional."""

    id = "doubling"
    lab = "lab00"
    points = 3
    section = "01 §2"

    def cases(self, ctx, seed=None):
        return [Case("f(1)", {"kind": "call", "target": "f", "args": [1]}),
                Case("f(2)", {"kind": "call", "target": "f", "args": [2]}, public=False),
                Case("g", {"kind": "value", "target": "g"}, data={"optional": True})]

    def judge_outputs(self, ctx, cases, values):
        self.seen = values
        if values[0] == 2 and values[1] == 4:
            return self.passed()
        return self.diagnosed("forgot_scale", points=1)


def run_doubling(*outputs, kind="call"):
    exercise = Doubling()
    exercise.kind = kind
    return exercise, exercise.judge({}, exercise.cases({}), list(outputs))


def keys(result):
    return [item.key for item in result.feedback]


def test_a_missing_name_in_any_required_case_is_missing():
    _, result = run_doubling({"ok": 2}, {"missing": "f"}, {"ok": 0})
    assert (result.status, result.points, result.max_points) == ("missing", 0.0, 3.0)
    assert keys(result) == ["common.missing"] and result.feedback[0].params == {"name": "f"}


@pytest.mark.parametrize("kind, key", [("call", "common.not_answered"), ("value", "common.not_answered_value")])
def test_not_answered_says_so_in_the_kind_of_the_exercise(kind, key):
    _, result = run_doubling({"ok": 2}, {"not_answered": True}, {"ok": 0}, kind=kind)
    assert (result.status, result.points) == ("not_answered", 0.0)
    assert keys(result) == [key] and result.feedback[0].params == {"name": "doubling"}


def test_a_time_out_or_an_error_names_its_case():
    _, result = run_doubling({"ok": 2}, {"timeout": True}, {"ok": 0})
    assert (result.status, result.points) == ("timeout", 0.0)
    assert result.feedback[0].key == "common.timeout" and result.feedback[0].params == {"name": "doubling",
                                                                                        "case": "f(2)"}
    _, result = run_doubling({"error": {"type": "ZeroDivisionError", "message": "division by zero"}}, {"ok": 4},
                             {"ok": 0})
    assert (result.status, result.points) == ("error", 0.0)
    assert result.feedback[0].params == {"name": "doubling", "case": "f(1)", "type": "ZeroDivisionError",
                                         "message": "division by zero"}
    assert "ZeroDivisionError" in result.render("en") and "division by zero" in result.render("en")


def test_missing_outranks_not_answered_which_outranks_errors():
    _, result = run_doubling({"error": {"type": "E", "message": "m"}}, {"not_answered": True}, {"missing": "g"})
    assert result.status == "not_answered"  # the optional case's missing name does not count
    _, result = run_doubling({"timeout": True}, {"missing": "f"}, {"ok": 0})
    assert result.status == "missing"


def test_an_optional_case_that_fails_is_judged_without_it():
    exercise, result = run_doubling({"ok": 2}, {"ok": 4}, {"error": {"type": "NameError", "message": "g"}})
    assert (result.status, result.points) == ("passed", 3.0)
    assert exercise.seen == [2, 4, None]
    exercise, result = run_doubling({"ok": 2}, {"ok": 4}, {"timeout": True})
    assert result.status == "passed"


def test_the_values_reach_the_judge_decoded():
    exercise, _ = run_doubling({"ok": tensor([1, 2])}, {"ok": 4}, {"ok": {"__tuple__": [1, 2]}})
    assert isinstance(exercise.seen[0], Array) and exercise.seen[0].values.tolist() == [1.0, 2.0]
    assert exercise.seen[2] == (1, 2)


def test_a_diagnosis_takes_the_labs_own_message_first_and_points_to_the_section():
    _, result = run_doubling({"ok": 2}, {"ok": 5}, {"ok": 0})
    assert (result.status, result.points, result.diagnosis) == ("failed", 1.0, "forgot_scale")
    assert keys(result) == ["common.failed", "diagnosis.forgot_scale", "common.see_section"]
    assert result.feedback[2].params == {"section": "01 §2"}
    exercise = Doubling()
    exercise.lab = "lab00"
    assert exercise.diagnosed("decimal_comma").feedback[1].key == "lab00.decimal_comma"  # lab00 has its own
    exercise.section = ""
    assert [f.key for f in exercise.diagnosed("decimal_comma").feedback] == ["common.failed", "lab00.decimal_comma"]


def test_a_diagnosis_carries_its_message_parameters():
    result = Doubling().diagnosed("off_by_one", points=1, k=2)
    assert result.feedback == [Feedback("common.failed", {"name": "doubling"}),
                               Feedback("diagnosis.off_by_one", {"k": 2}),
                               Feedback("common.see_section", {"section": "01 §2"})]
    assert (result.points, result.status, result.diagnosis) == (1.0, "failed", "off_by_one")


class Scalar(TensorExercise):
    """A tensor exercise whose answer is a 0-d tensor (a loss, say): 0.5 exactly."""

    id = "scalar"
    lab = "lab00"
    expected_kind = "float"

    def cases(self, ctx, seed=None):
        return [Case("scalar()", {"kind": "call", "target": "scalar", "args": []})]

    def expected(self, case):
        return np.array(0.5)


def test_a_wrong_0d_tensor_is_a_wrong_entry_without_an_index():
    exercise = Scalar()
    cases = exercise.cases({})
    def scalar(x):  # as the worker sends a 0-d tensor: one number, no sizes
        return {"ok": {"__tensor__": [x], "dtype": "float32", "shape": []}}

    assert exercise.judge({}, cases, [scalar(0.5)]).status == "passed"
    result = exercise.judge({}, cases, [scalar(0.25)])
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_values")
    # a 0-d tensor has no index: the position is empty
    assert result.feedback[1] == Feedback("common.wrong_entry", {"case": "scalar()", "index": "", "got": "0.25"})


def test_passed_gives_every_point_and_a_result_is_plain_data():
    _, result = run_doubling({"ok": 2}, {"ok": 4}, {"ok": 0})
    assert (result.status, result.points, result.diagnosis, keys(result)) == ("passed", 3.0, None, ["common.passed"])
    plain = result.to_plain("en")
    assert plain == {"points": 3.0, "max_points": 3.0, "status": "passed", "diagnosis": None,
                     "feedback": result.render("en")}
    assert "doubling" in plain["feedback"]
    two = Result("x", 0, 1, "failed", [Feedback("common.passed", {"name": "a"}), Feedback("common.passed",
                                                                                          {"name": "b"})])
    assert two.render("en") == Feedback("common.passed", {"name": "a"}).render("en") + " " + \
        Feedback("common.passed", {"name": "b"}).render("en")


@pytest.mark.parametrize("kind, shape_key, entry_key", [
    ("call", "common.wrong_type", "common.wrong_entry"), ("value", "common.wrong_shape_value", "common.wrong_entry_value")])
def test_shape_and_value_mismatches_in_the_kind_of_the_exercise(kind, shape_key, entry_key):
    exercise = Doubling()
    exercise.kind = kind
    case = Case("f(3)", {})
    result = shape_mismatch(exercise, case, Array(np.zeros((2, 3)), "numpy.float64"), "(3, 3)")
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_shape")
    assert keys(result) == ["common.failed", shape_key]
    # a typed answer is told its shape (no dtype Python gave it); another answer what it is
    if kind == "value":
        assert result.feedback[1].params == {"expected": "(3, 3)", "got": "(2, 3)"}
    else:
        assert result.feedback[1].params == {"case": "f(3)", "expected": "(3, 3)",
                                             "got": "numpy.ndarray float64 (2, 3)"}
    result = value_mismatch(exercise, case, np.array([[0.0, 1.0], [2.0, NEG]]), (1, 1))
    assert (result.status, result.points, result.diagnosis) == ("failed", 0.0, "wrong_values")
    assert keys(result) == ["common.failed", entry_key, "common.see_section"]
    assert result.feedback[1].params == {"case": "f(3)", "index": "1, 1", "got": "-inf"}
    exercise.section = ""
    assert keys(value_mismatch(exercise, case, np.zeros(2), (0,))) == ["common.failed", entry_key]


# ---------------------------------------------------------------- lab00: answers typed by hand
STUDENT = "s7654321"


def lab00_answers(student=STUDENT):
    """The exact (unrounded) answers, computed with loops."""
    p = lab00.variant(student)
    Q, K, V = p["Q"], p["K"], p["V"]
    qk = np.array([[sum(Q[i, k] * K[j, k] for k in range(2)) for j in range(3)] for i in range(3)])
    scaled = qk / math.sqrt(2)
    weights = softmax_rows(scaled + additive_mask(3))
    return {"STUDENT_ID": student, "qk_scores": qk, "scaled_scores": scaled, "causal_mask_T4": additive_mask(4),
            "attention_weights": weights, "attention_output": weights @ V, "V": V}


def lab00_result(exercise_id, value, student=STUDENT):
    answers = lab00_answers(student)
    namespace = {name: (v.tolist() if isinstance(v, np.ndarray) else v) for name, v in answers.items()}
    namespace[exercise_id] = value.tolist() if isinstance(value, np.ndarray) else value
    (result,) = Lab("lab00").results(namespace, only=[exercise_id])
    return result


def nudged(matrix, by, at=(0, 0)):
    out = np.array(matrix, dtype=float)
    out[at] += by
    return out


@pytest.mark.parametrize("exercise_id, tolerance", [("qk_scores", 0.0101), ("scaled_scores", 0.0151),
                                                    ("attention_weights", 0.0151)])
@pytest.mark.parametrize("sign", [1, -1])
def test_lab00_answers_just_inside_and_just_outside_the_rounding_tolerance(exercise_id, tolerance, sign):
    right = lab00_answers()[exercise_id]
    at = (2, 1)  # an allowed entry of every answer
    inside = lab00_result(exercise_id, nudged(right, sign * tolerance, at))
    assert (inside.status, inside.points) == ("passed", 2.0), inside.render("en")
    outside = lab00_result(exercise_id, nudged(right, sign * (tolerance + 0.0002), at))
    assert (outside.status, outside.points, outside.diagnosis) == ("failed", 0.0, "wrong_values"), outside.render("en")
    assert "[2, 1]" in outside.render("en")


def test_lab00_output_tolerance_grows_with_the_values_of_v():
    answers = lab00_answers()
    V = answers["V"]
    # weights rounded to 2 decimals move output k by up to 0.005 * sum_j |V[j, k]|, plus the rounding of the output
    tolerance = 0.0151 + 0.005 * max(sum(abs(V[j, k]) for j in range(3)) for k in range(2))
    right = answers["attention_output"]
    assert lab00_result("attention_output", nudged(right, tolerance - 1e-6, (1, 0))).status == "passed"
    outside = lab00_result("attention_output", nudged(right, tolerance + 2e-4, (1, 0)))
    assert (outside.status, outside.points) == ("failed", 0.0), outside.render("en")


@pytest.mark.parametrize("fill", [NEG, -1e9, np.finfo(np.float64).min, float(np.finfo(np.float32).min), -1e30])
def test_lab00_any_large_negative_number_blocks(fill):
    result = lab00_result("causal_mask_T4", additive_mask(4, fill))
    assert (result.status, result.points) == ("passed", 2.0), result.render("en")


@pytest.mark.parametrize("fill", [-1.0, -100.0, -999_999_999.0, math.inf, 1e9, 0.0])
def test_lab00_a_mask_whose_blocked_entries_are_not_large_negatives_fails(fill):
    result = lab00_result("causal_mask_T4", additive_mask(4, fill))
    assert (result.status, result.points) == ("failed", 0.0), result.render("en")


def test_lab00_a_positive_infinity_mask_is_no_zero_inf_swap_either():
    plus = additive_mask(4, math.inf)
    result = lab00_result("causal_mask_T4", plus)
    assert result.diagnosis == "wrong_values" and "[0, 1]" in result.render("en") and "inf" in result.render("en")
    swapped = np.array([[NEG if j <= i else 0.0 for j in range(4)] for i in range(4)])
    assert lab00_result("causal_mask_T4", swapped).diagnosis == "zero_inf_swapped"


# ---------------------------------------------------------------- lab01: additive masks, exact boolean masks
def causal_float(fill):
    return lambda T: tensor(additive_mask(T, fill))


@pytest.mark.parametrize("fill", [NEG, -1e4, -1e9, float(np.finfo(np.float32).min), np.finfo(np.float64).min])
def test_lab01_additive_mask_blocks_from_minus_1e4_down(fill):
    result = judge("lab01", "causal_mask", causal_float(fill), seed=SEED)
    assert (result.status, result.points) == ("passed", 2.0), result.render("en")


@pytest.mark.parametrize("fill", [-9999.0, -1.0, -0.5, math.inf, 1e30])
def test_lab01_additive_mask_with_anything_else_in_the_blocked_cells_fails(fill):
    result = judge("lab01", "causal_mask", causal_float(fill))
    assert (result.status, result.points) == ("failed", 0.0), result.render("en")


def test_lab01_a_positive_infinity_mask_gets_nothing_even_where_a_size_has_no_blocked_cell():
    """T = 1 has no blocked cell: a +inf mask is right there, and must still fail on the other sizes."""
    result = judge("lab01", "causal_mask", causal_float(math.inf), seed=SEED)
    assert (result.points, result.diagnosis) == (0.0, "wrong_values"), result.render("en")
    assert "inf" in result.render("en")


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_lab01_additive_mask_in_any_float_dtype(dtype):
    assert judge("lab01", "causal_mask", lambda T: tensor(additive_mask(T), dtype)).status == "passed"


@pytest.mark.parametrize("dtype", ["bool", "int64", "numpy.float32"])
def test_lab01_additive_mask_of_another_kind_fails_whatever_its_values(dtype):
    values = lambda T: np.tril(np.ones((T, T))) if dtype == "bool" else additive_mask(T, -1e9)  # noqa: E731
    result = judge("lab01", "causal_mask", lambda T: tensor(values(T), dtype))
    assert result.points == 0.0 and result.diagnosis in ("wrong_shape", "binary_mask"), result.render("en")


def test_lab01_a_mask_nearly_right_is_wrong_at_the_first_wrong_entry():
    def off(T):
        mask = additive_mask(T)
        if T > 1:
            mask[T - 1, 0] = 1e-6  # an allowed entry, slightly off: masks are exact
        return tensor(mask)
    result = judge("lab01", "causal_mask", off)
    assert (result.points, result.diagnosis) == (0.0, "wrong_values")
    assert "[3, 0]" in result.render("en")  # the first public size is 4


def allowed_mask(T):
    return np.array([[j <= i for j in range(T)] for i in range(T)])


@pytest.mark.parametrize("exercise_id, answer", [
    ("allowed_mask", lambda T: tensor(allowed_mask(T), "bool")),
    ("blocked_mask", lambda T: tensor(~allowed_mask(T), "bool")),
])
def test_lab01_boolean_masks_right_and_one_cell_off(exercise_id, answer):
    assert judge("lab01", exercise_id, answer, seed=SEED).status == "passed"

    def one_off(T):
        plain = answer(T)
        values = np.array(plain["__tensor__"], dtype=bool)
        if T == 7:  # a hidden size only
            values[6, 6] = not values[6, 6]
        return tensor(values, "bool")
    assert judge("lab01", exercise_id, one_off).status == "passed"  # the public cases cannot see it
    assert judge("lab01", exercise_id, one_off, seed=SEED).points == 0.0
    as_float = judge("lab01", exercise_id, lambda T: tensor(answer(T)["__tensor__"], "float32"))
    assert (as_float.points, as_float.diagnosis) == (0.0, "wrong_shape")


def window(T, W):
    return np.array([[i - W < j <= i for j in range(T)] for i in range(T)])


def test_lab01_sliding_window_both_sides_of_w():
    assert judge("lab01", "sliding_window_mask", lambda T, W: tensor(window(T, W), "bool"), seed=SEED).points == 2.0
    wide = judge("lab01", "sliding_window_mask", lambda T, W: tensor(window(T, W + 1), "bool"))
    narrow = judge("lab01", "sliding_window_mask", lambda T, W: tensor(window(T, W - 1), "bool"))
    assert (wide.points, wide.diagnosis) == (0.0, "window_too_wide")
    assert (narrow.points, narrow.diagnosis) == (0.0, "window_too_narrow")


def padding(lengths, T):
    lengths = [int(n) for n in np.ravel(lengths)]
    return np.array([[[[t < n for t in range(T)]]] for n in lengths])  # (B, 1, 1, T)


def test_lab01_padding_both_sides_of_the_length():
    right = judge("lab01", "padding_mask", lambda lengths, T: tensor(padding(lengths, T), "bool"), seed=SEED)
    assert right.points == 2.0, right.render("en")
    longer = judge("lab01", "padding_mask",
                   lambda lengths, T: tensor(padding(np.asarray(lengths) + 1, T), "bool"))
    assert (longer.points, longer.diagnosis) == (0.0, "length_off_by_one")
    shorter = judge("lab01", "padding_mask",
                    lambda lengths, T: tensor(padding(np.asarray(lengths) - 1, T), "bool"))
    assert shorter.points == 0.0 and shorter.diagnosis != "length_off_by_one"


# ---------------------------------------------------------------- lab02: attention within 1e-5, slips within 1e-4
def causal_attention_answer(shift_out=0.0, shift_w=0.0, allowed=lambda i, j: j <= i):
    def answer(Q, K, V):
        out, weights = attention(np.asarray(Q), np.asarray(K), np.asarray(V), allowed)
        out = out.copy()
        weights = weights.copy()
        out[..., 0, 0] += shift_out
        weights[..., -1, 0] += shift_w
        return {"__tuple__": [tensor(out), tensor(weights)]}
    return answer


def test_lab02_attention_just_inside_and_just_outside_1e_5():
    assert judge("lab02", "causal_attention", causal_attention_answer(), seed=SEED).points == 4.0
    assert judge("lab02", "causal_attention", causal_attention_answer(shift_out=0.9e-5)).status == "passed"
    outside = judge("lab02", "causal_attention", causal_attention_answer(shift_out=1.1e-5))
    assert (outside.points, outside.diagnosis) == (0.0, "wrong_values")
    assert judge("lab02", "causal_attention", causal_attention_answer(shift_w=0.9e-5)).status == "passed"
    outside = judge("lab02", "causal_attention", causal_attention_answer(shift_w=1.1e-5))
    assert (outside.points, outside.diagnosis) == (0.0, "wrong_values")


def test_lab02_rows_that_do_not_sum_to_one_from_1e_3_on():
    inside = judge("lab02", "causal_attention", causal_attention_answer(shift_w=0.9e-3))
    assert inside.diagnosis == "wrong_values"
    outside = judge("lab02", "causal_attention", causal_attention_answer(shift_w=1.1e-3))
    assert outside.diagnosis == "rows_not_normalised"


def test_lab02_a_slip_is_named_within_1e_4_and_not_beyond():
    no_mask = causal_attention_answer(allowed=lambda i, j: True)
    assert judge("lab02", "causal_attention", no_mask).diagnosis == "no_mask"

    def shifted(by):
        def answer(Q, K, V):
            plain = no_mask(Q, K, V)
            weights = np.array(plain["__tuple__"][1]["__tensor__"])
            weights[..., 0, 1] += by
            weights[..., 0, 2] -= by  # rows still sum to one
            return {"__tuple__": [plain["__tuple__"][0], tensor(weights)]}
        return answer
    assert judge("lab02", "causal_attention", shifted(0.9e-4)).diagnosis == "no_mask"
    beyond = judge("lab02", "causal_attention", shifted(1.1e-4))
    assert beyond.points == 0.0 and beyond.diagnosis == "future_weight"


# ---------------------------------------------------------------- lab04: attention with a cache
def cached_answer(shift=0.0, top_left=False):
    def answer(q, k, v, past_k=None, past_v=None):
        q, k, v = (np.asarray(x) for x in (q, k, v))
        k_all = k if past_k is None else np.concatenate([np.asarray(past_k), k], axis=-2)
        v_all = v if past_v is None else np.concatenate([np.asarray(past_v), v], axis=-2)
        past = k_all.shape[-2] - q.shape[-2]
        allowed = (lambda i, j: j <= i) if top_left else (lambda i, j: j <= past + i)
        out, _ = attention(q, k_all, v_all, allowed)
        out = np.nan_to_num(out.copy())
        out[..., -1, 0] += shift
        return {"__tuple__": [tensor(out), tensor(k_all), tensor(v_all)]}
    return answer


def test_lab04_cached_attention_just_inside_and_just_outside_1e_5():
    assert judge("lab04", "cached_attention", cached_answer(), seed=SEED).points == 5.0
    assert judge("lab04", "cached_attention", cached_answer(shift=0.9e-5)).status == "passed"
    outside = judge("lab04", "cached_attention", cached_answer(shift=1.1e-5))
    assert (outside.points, outside.diagnosis) == (0.0, "wrong_values")


def test_lab04_the_top_left_slip_is_named_within_1e_4_and_not_beyond():
    assert judge("lab04", "cached_attention", cached_answer(top_left=True)).diagnosis == "top_left"
    assert judge("lab04", "cached_attention", cached_answer(shift=0.9e-4, top_left=True)).diagnosis == "top_left"
    beyond = judge("lab04", "cached_attention", cached_answer(shift=1.1e-4, top_left=True))
    assert (beyond.points, beyond.diagnosis) == (0.0, "wrong_values")


def cache_mask(T_new, T_past, shift=0):
    """New query r (absolute position T_past + r) sees keys 0 .. T_past + r (+ shift: a slip)."""
    return np.array([[j <= T_past + r + shift for j in range(T_past + T_new)] for r in range(T_new)])


def test_lab04_kv_cache_mask_exact_and_one_off():
    assert judge("lab04", "kv_cache_mask", lambda n, p: tensor(cache_mask(n, p), "bool"), seed=SEED).points == 3.0

    def one_off(n, p):
        mask = cache_mask(n, p)
        if (n, p) == (6, 6):  # hidden only
            mask[0, p + 1] = True
        return tensor(mask, "bool")
    assert judge("lab04", "kv_cache_mask", one_off).points == 3.0  # not a public case
    assert judge("lab04", "kv_cache_mask", one_off, seed=SEED).points == 0.0
    one_later = judge("lab04", "kv_cache_mask", lambda n, p: tensor(cache_mask(n, p, +1), "bool"))
    assert (one_later.points, one_later.diagnosis) == (0.0, "off_by_one")
    one_earlier = judge("lab04", "kv_cache_mask", lambda n, p: tensor(cache_mask(n, p, -1), "bool"))
    assert (one_earlier.points, one_earlier.diagnosis) == (0.0, "diagonal_masked")


# ---------------------------------------------------------------- lab05: packed attention, positions
def packed_answer(shift=0.0, across_documents=False):
    def answer(q, k, v, doc_ids):
        ids = [int(i) for i in np.ravel(doc_ids)]
        allowed = (lambda i, j: j <= i) if across_documents else (lambda i, j: j <= i and ids[i] == ids[j])
        out, _ = attention(np.asarray(q), np.asarray(k), np.asarray(v), allowed)
        out = out.copy()
        out[..., -1, -1] += shift
        return tensor(out)
    return answer


def test_lab05_packed_attention_just_inside_and_just_outside_1e_5():
    assert judge("lab05", "packed_attention", packed_answer(), seed=SEED).points == 3.0
    assert judge("lab05", "packed_attention", packed_answer(shift=0.9e-5)).status == "passed"
    outside = judge("lab05", "packed_attention", packed_answer(shift=1.1e-5))
    assert (outside.points, outside.diagnosis) == (0.0, "wrong_values")


def test_lab05_the_documents_leak_slip_is_named_within_1e_4_and_not_beyond():
    assert judge("lab05", "packed_attention", packed_answer(across_documents=True)).diagnosis == "documents_leak"
    near = judge("lab05", "packed_attention", packed_answer(shift=0.9e-4, across_documents=True))
    assert near.diagnosis == "documents_leak"
    beyond = judge("lab05", "packed_attention", packed_answer(shift=1.1e-4, across_documents=True))
    assert (beyond.points, beyond.diagnosis) == (0.0, "wrong_values")


def positions(doc_ids):
    ids = [int(i) for i in np.ravel(doc_ids)]
    return [0 if t == 0 or ids[t] != ids[t - 1] else None for t in range(len(ids))]


def packed_positions(doc_ids):
    ids = [int(i) for i in np.ravel(doc_ids)]
    out, count = [], 0
    for t, doc in enumerate(ids):
        count = 0 if t == 0 or doc != ids[t - 1] else count + 1
        out.append(count)
    return out


@pytest.mark.parametrize("dtype, points", [("int64", 1.0), ("int32", 0.0), ("float32", 0.0)])
def test_lab05_position_ids_must_be_int64(dtype, points):
    result = judge("lab05", "packed_position_ids", lambda ids: tensor(packed_positions(ids), dtype), seed=SEED)
    assert result.points == points, result.render("en")


def test_lab05_position_ids_off_by_one_either_way():
    for shift in (1, -1):
        result = judge("lab05", "packed_position_ids",
                       lambda ids: tensor(np.array(packed_positions(ids)) + shift, "int64"))
        assert (result.points, result.diagnosis) == (0.0, "positions_off_by_one")


def sink_window(T, W, n_sink):
    return np.array([[j <= i and (i - W < j or j < n_sink) for j in range(T)] for i in range(T)])


def test_lab05_sink_window_both_sides_of_w_and_of_the_sinks():
    right = judge("lab05", "sink_window_mask", lambda T, W, n: tensor(sink_window(T, W, n), "bool"), seed=SEED)
    assert right.points == 2.0
    wide = judge("lab05", "sink_window_mask", lambda T, W, n: tensor(sink_window(T, W + 1, n), "bool"))
    assert (wide.points, wide.diagnosis) == (0.0, "window_too_wide")
    no_sinks = judge("lab05", "sink_window_mask", lambda T, W, n: tensor(sink_window(T, W, 0), "bool"))
    assert (no_sinks.points, no_sinks.diagnosis) == (0.0, "sinks_missing")
    one_more = judge("lab05", "sink_window_mask", lambda T, W, n: tensor(sink_window(T, W, n + 1), "bool"))
    assert one_more.points == 0.0


# ---------------------------------------------------------------- every written form of a named slip is named
def lengths_of(lengths):
    return [int(n) for n in np.ravel(lengths)]


def combined_parts(lengths, T):
    """(causal (1, 1, T, T), padded keys (B, 1, 1, T), padded queries (B, 1, T, 1)), with loops."""
    n = lengths_of(lengths)
    causal = np.array([[[[j <= i for j in range(T)] for i in range(T)]]])
    keys = np.array([[[[j < m for j in range(T)]]] for m in n])
    queries = np.array([[[[i < m] for i in range(T)]] for m in n])
    return causal, keys, queries


@pytest.mark.parametrize("form, diagnosis", [
    (lambda c, k, q: c & k, None),
    (lambda c, k, q: c | k, "combined_with_or"),
    (lambda c, k, q: ~(c & k), "convention_inverted"),
    (lambda c, k, q: c & k & q, "padding_queries"),
    (lambda c, k, q: np.broadcast_to(c & q, (q.shape[0], 1, c.shape[-1], c.shape[-1])), "padding_queries"),
    (lambda c, k, q: np.broadcast_to(c, (k.shape[0],) + c.shape[1:]), "padding_missing"),
    (lambda c, k, q: c, "padding_missing"),
    (lambda c, k, q: c[0, 0], "padding_missing"),
    (lambda c, k, q: np.broadcast_to(k, (k.shape[0], 1, c.shape[-1], c.shape[-1])), "causal_missing"),
    (lambda c, k, q: k, "causal_missing"),
    (lambda c, k, q: (c & k)[:, 0], "padding_shape"),  # (B, T, T): the right values, no heads' axis
])
def test_lab01_combined_mask_every_form_of_each_slip(form, diagnosis):
    result = judge("lab01", "combined_mask", lambda lengths, T: tensor(form(*combined_parts(lengths, T)), "bool"))
    if diagnosis is None:
        assert result.status == "passed", result.render("en")
    else:
        assert (result.points, result.diagnosis) == (0.0, diagnosis), result.render("en")


def test_lab01_padding_mask_in_a_shape_that_broadcasts_wrongly():
    flat = judge("lab01", "padding_mask", lambda lengths, T: tensor(padding(lengths, T)[:, 0, 0], "bool"))
    assert (flat.points, flat.diagnosis) == (0.0, "padding_shape")
    assert "(3, 5)" in flat.render("en") and "(3, 1, 1, 5)" in flat.render("en")
    as_float = judge("lab01", "padding_mask", lambda lengths, T: tensor(padding(lengths, T)[:, 0, 0], "float32"))
    assert as_float.diagnosis == "wrong_shape"  # the right values as floats in another shape: no padding_shape
    other_size = judge("lab01", "padding_mask", lambda lengths, T: tensor(padding(lengths, T + 1), "bool"))
    assert other_size.diagnosis == "wrong_shape"


def left_padded_positions(mask, *, pad=0, offset=-1, fill_pads=True):
    """Position ids of a left-padded 0/1 mask, by hand: count of real tokens so far + offset, `pad` on padding."""
    out = []
    for row in np.asarray(mask, dtype=int):
        seen, ids = 0, []
        for m in row:
            seen += m
            ids.append(seen + offset if (m or not fill_pads) else pad)
        out.append(ids)
    return np.array(out)


@pytest.mark.parametrize("answer, diagnosis", [
    (lambda m: left_padded_positions(m), None),
    (lambda m: np.broadcast_to(np.arange(m.shape[-1]), m.shape), "padding_counted"),
    (lambda m: left_padded_positions(m, offset=0), "positions_off_by_one"),
    (lambda m: left_padded_positions(m, offset=0, fill_pads=False), "positions_off_by_one"),
    (lambda m: left_padded_positions(m, pad=1), "padding_fill_one"),
    (lambda m: left_padded_positions(m, fill_pads=False), "padding_not_filled"),
    (lambda m: np.arange(m.shape[-1])[None, :] - (np.asarray(m) == 0).sum(axis=-1, keepdims=True),
     "padding_not_filled"),
])
def test_lab05_position_ids_every_form_of_each_slip(answer, diagnosis):
    result = judge("lab05", "position_ids_from_mask", lambda mask: tensor(answer(np.asarray(mask)), "int64"))
    if diagnosis is None:
        assert result.status == "passed", result.render("en")
    else:
        assert (result.points, result.diagnosis) == (0.0, diagnosis), result.render("en")


def test_lab04_returning_only_the_output_is_named():
    def only_out(q, k, v, past_k=None, past_v=None):
        return cached_answer()(q, k, v, past_k, past_v)["__tuple__"][0]
    result = judge("lab04", "cached_attention", only_out)
    assert (result.points, result.diagnosis) == (0.0, "wrong_return")
    assert [item.key for item in result.feedback] == ["common.failed", "common.wrong_type", "lab04.wrong_return"]


# ---------------------------------------------------------------- the lab registry, lab00's problem as shown
def test_a_lab_spec_names_its_exercises_lab_and_sums_their_points():
    from autograder.labs import LAB_IDS, LabSpec, UnknownLab

    first, second = Doubling(), Doubling()
    second.id, second.points = "tripling", 1.5
    spec = LabSpec(id="lab42", exercises=[first, second])
    assert (first.lab, second.lab) == ("lab42", "lab42")
    assert spec.max_score == 4.5 and spec.exercise("tripling") is second
    with pytest.raises(KeyError):
        spec.exercise("quadrupling")
    assert LAB_IDS == ("lab00", "lab01", "lab02", "lab03", "lab04", "lab05")
    with pytest.raises(UnknownLab):
        get_lab("lab42")
    with pytest.raises(UnknownLab):
        get_lab("bugs02")
    assert get_lab("lab01").max_score == 10.0


def test_lab00_shows_the_students_own_problem_as_python_lists():
    p = lab00.variant(STUDENT)
    shown = get_lab("lab00").show_context({"variant": p})
    lines = shown.split("\n")
    assert [line.split(" = ")[0] for line in lines] == ["Q", "K", "V"]
    for line, name in zip(lines, ("Q", "K", "V")):
        assert eval(line.split(" = ")[1]) == p[name].astype(int).tolist()  # noqa: S307 (our own text)
        assert "." not in line  # whole numbers, as the student types them


def test_an_answer_that_is_no_tensor_says_what_was_expected():
    result = judge("lab01", "causal_mask", lambda T: {"__object__": "MyMask", "repr": "<MyMask>"})
    assert (result.points, result.diagnosis) == (0.0, "wrong_shape")
    # not a tensor: what came back, the shape wanted, and what the kind means in this exercise
    assert [item.key for item in result.feedback] == ["common.failed", "common.not_a_tensor",
                                                      "common.kind.additive_mask"]
    assert result.feedback[1].params == {"case": "causal_mask(4)", "expected": "(4, 4)", "got": "MyMask"}
    numpy = judge("lab01", "causal_mask", lambda T: tensor(additive_mask(T), "numpy.float64"))
    assert numpy.feedback[1].key == "common.not_a_tensor"
    assert numpy.feedback[1].params["got"] == "numpy.ndarray float64 (4, 4)"
    ints = judge("lab01", "causal_mask", lambda T: tensor(np.zeros((T, T)), "int64"))  # torch, of the wrong kind
    assert [item.key for item in ints.feedback] == ["common.failed", "common.wrong_kind", "common.kind.additive_mask"]
    assert ints.feedback[1].params == {"case": "causal_mask(4)", "got": "int64"}


def document_parts(doc_ids):
    """(causal (T, T), same document (..., T, T)) for (T,) or (B, T) ids, with loops."""
    ids = np.asarray(doc_ids, dtype=int)
    T = ids.shape[-1]
    causal = np.array([[j <= i for j in range(T)] for i in range(T)])
    rows = ids.reshape(-1, T)
    same = np.array([[[r[i] == r[j] for j in range(T)] for i in range(T)] for r in rows]).reshape(ids.shape + (T,))
    return causal, same


def document_answer(form):
    def answer(doc_ids):
        ids = np.asarray(doc_ids)
        causal, same = document_parts(ids)
        out = form(causal, same)
        if ids.ndim == 2 and out.ndim == 3:
            out = out[:, None]  # (B, 1, T, T), as the exercise asks for batches
        return tensor(out, "bool")
    return answer


@pytest.mark.parametrize("form, diagnosis", [
    (lambda c, s: c & s, None),
    (lambda c, s: np.broadcast_to(c, s.shape), "documents_leak"),
    (lambda c, s: s, "not_causal_in_document"),
    (lambda c, s: ~(c & s), "convention_inverted"),
    (lambda c, s: c & s & ~np.eye(c.shape[0], dtype=bool), "diagonal_masked"),
    (lambda c, s: s & c.T, "wrong_triangle"),
])
def test_lab05_document_mask_slips_for_one_sequence_and_for_a_batch(form, diagnosis):
    result = judge("lab05", "document_causal_mask", document_answer(form))
    if diagnosis is None:
        assert result.status == "passed", result.render("en")
    else:
        assert (result.points, result.diagnosis) == (0.0, diagnosis), result.render("en")


def test_lab05_a_batch_of_document_masks_without_the_heads_axis_or_as_one_causal_mask():
    def no_heads(doc_ids):
        causal, same = document_parts(doc_ids)
        return tensor(causal & same, "bool")  # (B, T, T) for a batch
    result = judge("lab05", "document_causal_mask", no_heads)
    assert (result.points, result.diagnosis) == (0.0, "batch_shape"), result.render("en")
    assert result.feedback[1].params == {"got": "(2, 5, 5)", "expected": "(2, 1, 5, 5)"}

    def one_causal(doc_ids):
        causal, same = document_parts(doc_ids)
        batched = np.asarray(doc_ids).ndim == 2
        return tensor(causal if batched else causal & same, "bool")  # right for one sequence, (T, T) for a batch
    result = judge("lab05", "document_causal_mask", one_causal)
    assert (result.points, result.diagnosis) == (0.0, "documents_leak"), result.render("en")


# ---------------------------------------------------------------- which cases are public, which hidden
@pytest.mark.parametrize("exercise_id", ["causal_mask", "allowed_mask", "blocked_mask"])
def test_lab01_square_masks_show_sizes_4_1_6_and_hide_1_to_12_and_one_of_13_to_32(exercise_id):
    exercise = get_lab("lab01").exercise(exercise_id)
    public = exercise.cases({})
    assert [(c.name, c.call["args"], c.public) for c in public] == [
        (f"{exercise_id}({T})", [T], True) for T in (4, 1, 6)]
    extras = set()
    for seed in range(300):
        hidden = [c for c in exercise.cases({}, seed) if not c.public]
        sizes = [c.call["args"][0] for c in hidden]
        assert sizes[:12] == list(range(1, 13)) and len(sizes) == 13, sizes
        assert all(c.name == f"{exercise_id}({c.call['args'][0]})" for c in hidden)
        extras.add(sizes[12])
    assert extras == set(range(13, 33))  # every size of 13 … 32 is drawn by some seed, no other


def test_lab01_padding_cases_pass_lengths_both_as_a_list_and_as_a_tensor():
    for exercise_id in ("padding_mask", "combined_mask"):
        kinds = {type(c.call["args"][0]).__name__ for c in get_lab("lab01").exercise(exercise_id).cases({}, 3)
                 if c.public}
        assert kinds == {"list", "dict"}, (exercise_id, kinds)  # dict: a tensor argument


def test_lab00_an_answer_of_another_type_says_which_value_and_shape_were_expected():
    for name, value, shape, got in (("causal_mask_T4", "four", "(4, 4)", "str"),
                                    ("causal_mask_T4", [[0.0] * 3] * 3, "(4, 4)", "(3, 3)"),
                                    ("attention_output", 7, "(3, 2)", "int")):
        result = lab00_result(name, value)
        assert (result.points, result.diagnosis) == (0.0, "wrong_shape"), result.render("en")
        assert result.feedback[1].params == {"expected": shape, "got": got}


def test_lab00_an_output_right_for_the_students_own_wrong_weights_is_carried_forward():
    answers = lab00_answers()
    weights = np.round(answers["attention_weights"], 2)
    weights[2] = [0.5, 0.25, 0.25]  # a wrong last row
    output = weights @ answers["V"]
    namespace = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in answers.items()}
    namespace.update(attention_weights=weights.tolist(), attention_output=output.tolist())
    results = {r.exercise: r for r in Lab("lab00").results(namespace)}
    carried = results["attention_output"]
    assert (carried.status, carried.points, carried.diagnosis) == ("passed", 2.0, "carried_forward")
    assert [item.key for item in carried.feedback] == ["common.passed", "lab00.carried_forward"]
    assert results["attention_weights"].points == 0.0


def test_lab04_a_wrong_cache_names_its_case():
    def wrong_cache(q, k, v, past_k=None, past_v=None):
        out = cached_answer()(q, k, v, past_k, past_v)
        k_all = np.array(out["__tuple__"][1]["__tensor__"]) + 1.0
        return {"__tuple__": [out["__tuple__"][0], tensor(k_all), out["__tuple__"][2]]}
    result = judge("lab04", "cached_attention", wrong_cache)
    assert (result.points, result.diagnosis) == (0.0, "wrong_cache")
    assert result.feedback[1].params == {"case": Feedback("lab04.case.no_cache", {"T": 4})}
    assert "ohne Cache, T=4" in result.render("de")  # the case described in the reader's language


def test_lab00_decimal_commas_in_the_output_and_an_inverted_binary_mask_are_named():
    output = np.round(lab00_answers()["attention_output"], 2)  # (3, 2)
    commas = [[float(part) for x in row for part in f"{x:.2f}".split(".")] for row in output]  # (3, 4)
    assert lab00_result("attention_output", commas).diagnosis == "decimal_comma"
    blocked_ones = np.array([[0.0 if j <= i else 1.0 for j in range(4)] for i in range(4)])
    assert lab00_result("causal_mask_T4", blocked_ones).diagnosis == "binary_mask"
    assert lab00_result("causal_mask_T4", 1.0 - blocked_ones).diagnosis == "binary_mask"


def test_lab01_padding_hidden_cases_cover_every_length_up_to_8_and_both_edges():
    for exercise_id in ("padding_mask", "combined_mask"):
        exercise = get_lab("lab01").exercise(exercise_id)
        batches, sizes = set(), []
        for seed in range(60):
            hidden = [c for c in exercise.cases({}, seed) if not c.public]
            assert [c.data["T"] for c in hidden] == [*range(1, 9), 3]
            for case in hidden[:8]:
                T, lengths = case.data["T"], case.data["lengths"]
                batches.add(len(lengths))
                assert lengths[0] == T and all(1 <= n <= T for n in lengths), lengths  # one full sequence
                assert len(lengths) == 1 or lengths[-1] == 1  # and one of length 1 in every batch of two or more
                assert isinstance(case.call["args"][0], dict) is bool(T % 2)  # lists and tensors, in turn
            assert hidden[8].data["lengths"] == [1, 1, 1]
            sizes.append([c.data["lengths"] for c in hidden])
        assert batches == {1, 2, 3, 4}
        assert len({json.dumps(s) for s in sizes}) > 1  # the seed draws the lengths


def test_lab00_every_students_slips_are_told_apart_from_the_answer_and_each_other():
    """No student gets a problem where a classic slip is within the rounding tolerance of the right answer or of
    another slip: a slip must never pass, and a diagnosis must never be a guess (gaps computed here, NaN as NaN)."""
    def apart(a, b):
        a, b = np.asarray(a, float), np.asarray(b, float)
        if a.shape != b.shape:
            return True
        same_nan = np.isnan(a) & np.isnan(b)
        same_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
        with np.errstate(invalid="ignore"):
            far = ~(same_nan | same_inf) & ~(np.abs(a - b) <= 0.04)
        return bool(far.any())

    for number in range(150):
        problem = lab00.variant(f"student-{number}")
        for exercise in (lab00.QKScores(), lab00.ScaledScores(), lab00.AttentionWeights(), lab00.AttentionOutput()):
            right = exercise.reference(problem)
            slips = [slip for _, slip in exercise.slips(problem)]
            for i, slip in enumerate(slips):
                assert apart(slip, right), (number, exercise.id, i)
                for other in slips[i + 1:]:
                    assert apart(slip, other), (number, exercise.id, i)
