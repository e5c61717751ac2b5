"""lab00 (attention by hand): every diagnosis is triggered by a wrong answer, in two languages.

Wrong answers are built here with plain numpy, independently of the exercise
definitions, the way a student would get them on paper.
"""
import itertools
import math
import warnings

import numpy as np
import pytest

from autograder import Lab
from autograder.labs import lab00

pytestmark = pytest.mark.lab00

STUDENT = "s1234567"
NEG = -math.inf


def problem(student=STUDENT):
    p = lab00.variant(student)
    return p["Q"], p["K"], p["V"]


def softmax(x, axis=-1):
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def mask(T):
    return np.array([[0.0 if j <= i else NEG for j in range(T)] for i in range(T)])


def right_answers(student=STUDENT):
    Q, K, V = problem(student)
    scores = Q @ K.T
    scaled = scores / math.sqrt(2)
    weights = softmax(scaled + mask(3))
    return {
        "STUDENT_ID": student,
        "qk_scores": scores.tolist(),
        "scaled_scores": np.round(scaled, 2).tolist(),
        "causal_mask_T4": mask(4).tolist(),
        "attention_weights": np.round(weights, 2).tolist(),
        "attention_output": np.round(np.round(weights, 2) @ V, 2).tolist(),
    }


def grade(namespace, lang="en", exercise=None):
    lab = Lab("lab00", lang=lang)
    results = lab.results(namespace, only=[exercise] if exercise else None)
    return {r.exercise: r for r in results}, lab


def test_right_answers_get_full_marks():
    results, lab = grade(right_answers())
    assert all(r.status == "passed" for r in results.values()), {k: r.render("en") for k, r in results.items()}
    assert sum(r.points for r in results.values()) == lab.spec.max_score


def test_right_answers_pass_for_many_students():
    for number in range(25):
        results, _ = grade(right_answers(f"student-{number}"))
        assert all(r.status == "passed" for r in results.values()), number


def test_variants_differ_between_students_and_are_stable():
    seen = {tuple(np.concatenate([m.ravel() for m in problem(f"id{n}")])) for n in range(50)}
    assert len(seen) >= 45
    assert np.array_equal(problem("Ana")[0], problem(" ana ")[0]), "ids are trimmed and case-folded"


def test_blank_lab_reports_not_answered_not_a_traceback():
    namespace = {"STUDENT_ID": STUDENT, **{name: ... for name in right_answers() if name != "STUDENT_ID"}}
    results, _ = grade(namespace)
    assert {r.status for r in results.values()} == {"not_answered"}
    assert all(r.points == 0 for r in results.values())
    assert "not answered yet" in results["qk_scores"].render("en")
    assert "todavía sin responder" in results["qk_scores"].render("es")


def test_missing_student_id_is_asked_for():
    namespace = right_answers()
    namespace["STUDENT_ID"] = ""
    results, _ = grade(namespace)
    assert all(r.status == "not_answered" for r in results.values())
    assert "student id" in results["qk_scores"].render("en")
    assert "Matrikelnummer" in results["qk_scores"].render("de")


def test_undefined_variable_is_named():
    namespace = right_answers()
    del namespace["scaled_scores"]
    results, _ = grade(namespace, exercise="scaled_scores")
    assert results["scaled_scores"].status == "missing"
    assert "`scaled_scores` is not defined" in results["scaled_scores"].render("en")


@pytest.mark.parametrize("answer, table", [([[1, 2], [3, 4]], True), ("four", False), (7, False),
                                           ([[1, 2, 3], [4, 5]], False)])
def test_wrong_shape_or_type_says_what_was_expected(answer, table):
    namespace = right_answers()
    namespace["qk_scores"] = answer
    results, _ = grade(namespace, exercise="qk_scores")
    result = results["qk_scores"]
    assert result.status == "failed" and result.diagnosis == "wrong_shape"
    if table:  # numbers of the wrong shape: both shapes
        assert "your answer must have shape (3, 3) (rows, columns), but yours is (2, 2)" in result.render("en")
        assert "tu respuesta debe tener forma (3, 3) (filas, columnas), pero la tuya es (2, 2)" in result.render("es")
    else:  # not a table of numbers at all: what to type, and what it is instead
        assert "your answer must be numbers of shape (3, 3) (rows, columns), typed as a list of lists" \
            in result.render("en")
        assert "tu respuesta debe ser una tabla de números con forma (3, 3)" in result.render("es")
        assert "shape (3, 3) (rows, columns), but yours is" not in result.render("en")
    # a table of numbers is described by its shape, not by the dtype Python gave it
    assert "float64" not in result.render("en")


def test_unexplained_wrong_entry_points_at_it_without_the_answer():
    namespace = right_answers()
    scores = np.array(namespace["qk_scores"])
    scores[1, 2] += 5
    namespace["qk_scores"] = scores.tolist()
    results, _ = grade(namespace, exercise="qk_scores")
    text = results["qk_scores"].render("en")
    assert results["qk_scores"].diagnosis == "wrong_values"
    assert "[1, 2]" in text


def test_rounding_within_one_hundredth_is_accepted_but_not_more():
    namespace = right_answers()
    scaled = np.array(namespace["scaled_scores"])
    namespace["scaled_scores"] = (scaled + 0.01).tolist()
    assert grade(namespace, exercise="scaled_scores")[0]["scaled_scores"].status == "passed"
    namespace["scaled_scores"] = (scaled + 0.03).tolist()
    assert grade(namespace, exercise="scaled_scores")[0]["scaled_scores"].status == "failed"


def slips():
    """(exercise, diagnosis, wrong answer) as a student would compute them."""
    Q, K, V = problem()
    scores = Q @ K.T
    scaled = scores / math.sqrt(2)
    weights = softmax(scaled + mask(3))
    r = lambda x: np.round(x, 2).tolist()  # noqa: E731
    strict_lower = np.array([[0.0 if j < i else NEG for j in range(3)] for i in range(3)])
    with np.errstate(invalid="ignore"):
        diag_weights = softmax(scaled + strict_lower)
    return [
        ("qk_scores", "transposed_k", (K @ Q.T).tolist()),
        ("scaled_scores", "forgot_scale", scores.tolist()),
        ("scaled_scores", "divided_by_dk", r(scores / 2)),
        ("scaled_scores", "transposed_k", r((K @ Q.T) / math.sqrt(2))),
        ("causal_mask_T4", "wrong_triangle", [[0, 0, 0, 0], [NEG, 0, 0, 0], [NEG, NEG, 0, 0], [NEG, NEG, NEG, 0]]),
        ("causal_mask_T4", "diagonal_masked",
         [[NEG, NEG, NEG, NEG], [0, NEG, NEG, NEG], [0, 0, NEG, NEG], [0, 0, 0, NEG]]),
        ("causal_mask_T4", "zero_inf_swapped", [[NEG, 0, 0, 0], [NEG, NEG, 0, 0], [NEG, NEG, NEG, 0], [NEG] * 4]),
        ("causal_mask_T4", "binary_mask", [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]),
        ("attention_weights", "no_mask", r(softmax(scaled))),
        ("attention_weights", "mask_after_softmax", r(softmax(scaled) * np.tril(np.ones((3, 3))))),
        ("attention_weights", "forgot_scale", r(softmax(scores + mask(3)))),
        ("attention_weights", "wrong_triangle", r(softmax(scaled + mask(3).T))),
        ("attention_weights", "diagonal_masked", [[0, 0, 0]] + r(diag_weights[1:])),
        ("attention_weights", "transposed_k", r(softmax((K @ Q.T) / math.sqrt(2) + mask(3)))),
        ("attention_weights", "wrong_axis", r(softmax(scaled + mask(3), axis=0))),
        ("attention_output", "weights_transposed", r(np.round(weights, 2).T @ V)),
        ("attention_output", "no_mask", r(softmax(scaled) @ V)),
    ]


SLIPS = slips()
MESSAGES = {
    "transposed_k": ("K·Qᵀ", "K·Qᵀ"),
    "forgot_scale": ("forgot the 1/√d_k scale", "olvidaste la escala"),
    "divided_by_dk": ("divided by d_k instead of √d_k", "dividiste entre d_k"),
    "wrong_triangle": ("wrong triangle", "triángulo equivocado"),
    "diagonal_masked": ("also blocks the diagonal, so row 0 has no allowed key and softmax gives NaN", "bloquea la diagonal"),
    "zero_inf_swapped": ("0 and -inf are swapped", "0 y -inf están intercambiados"),
    "binary_mask": ("0/1 mask", "máscara 0/1"),
    "no_mask": ("without any mask", "sin máscara"),
    "mask_after_softmax": ("after the softmax", "después del softmax"),
    "wrong_axis": ("wrong axis", "eje equivocado"),
    "weights_transposed": ("Aᵀ·V", "Aᵀ·V"),
}


@pytest.mark.parametrize("exercise,diagnosis,answer", SLIPS, ids=[f"{e}-{d}" for e, d, _ in SLIPS])
def test_each_slip_is_named_in_two_languages(exercise, diagnosis, answer):
    namespace = right_answers()
    namespace[exercise] = answer
    if exercise == "attention_output":
        del namespace["attention_weights"]  # no error to carry forward
    results, _ = grade(namespace, exercise=exercise)
    result = results[exercise]
    assert result.status == "failed" and result.points == 0
    assert result.diagnosis == diagnosis, result.render("en")
    english, spanish = MESSAGES[diagnosis]
    assert english in result.render("en")
    assert spanish in result.render("es")
    assert "03 §" in result.render("de")


def test_every_diagnosis_of_lab00_is_covered_here():
    named = {name for exercise in lab00.EXERCISES for name in exercise.diagnosis_names()}
    assert named == {d for _, d, _ in SLIPS} | {"decimal_comma"}


def test_decimal_comma_is_named():
    namespace = right_answers()
    namespace["scaled_scores"] = [[1, 41, 9, 19, 0, 0], [0, 0, 6, 36, 0, 0], [2, 12, 4, 24, 0, 0]]
    result = grade(namespace, exercise="scaled_scores")[0]["scaled_scores"]
    assert result.diagnosis == "decimal_comma"
    assert "Dezimalkomma" in result.render("de") and "coma decimal" in result.render("es")


def test_output_right_for_wrong_weights_is_carried_forward():
    Q, K, V = problem()
    namespace = right_answers()
    bad_weights = np.round(softmax((Q @ K.T) + mask(3)), 2)  # forgot the scale
    namespace["attention_weights"] = bad_weights.tolist()
    namespace["attention_output"] = np.round(bad_weights @ V, 2).tolist()
    results, _ = grade(namespace)
    assert results["attention_weights"].diagnosis == "forgot_scale"
    output = results["attention_output"]
    assert output.status == "passed" and output.diagnosis == "carried_forward"
    assert "error carried forward" in output.render("en")


def test_large_negative_number_counts_as_minus_infinity():
    namespace = right_answers()
    namespace["causal_mask_T4"] = np.where(np.isinf(mask(4)), -1e9, 0.0).tolist()
    assert grade(namespace, exercise="causal_mask_T4")[0]["causal_mask_T4"].status == "passed"


# ---------------------------------------------------------------- error carried forward: only from weights that could be right
def _carried(weights, output):
    namespace = right_answers()
    namespace["attention_weights"] = weights
    namespace["attention_output"] = output
    return grade(namespace, exercise="attention_output")[0]["attention_output"]


def test_all_zero_weights_carry_no_error_forward():
    """issue 21: zeros typed for the weights, and zeros as their output, earned the output's 2 points."""
    zeros = [[0.0] * 3 for _ in range(3)]
    result = _carried(zeros, [[0.0, 0.0] for _ in range(3)])
    assert result.points == 0 and result.diagnosis != "carried_forward", result.render("en")


def test_nan_weights_carry_no_error_forward():
    """NaN weights were read as zeros: the zero output they 'give' earned the output's points."""
    nan = float("nan")
    result = _carried([[nan] * 3 for _ in range(3)], [[0.0, 0.0] for _ in range(3)])
    assert result.points == 0 and result.diagnosis != "carried_forward", result.render("en")
    row0_nan = right_answers()["attention_weights"]
    row0_nan = [[nan, nan, nan]] + row0_nan[1:]  # the diagonal-masked row 0, the rest right
    Q, K, V = problem()
    output = np.round(np.nan_to_num(np.array(row0_nan)) @ V, 2).tolist()
    assert _carried(row0_nan, output).points == 0


def test_weights_that_are_no_causal_weights_carry_no_error_forward():
    Q, K, V = problem()
    scaled = Q @ K.T / math.sqrt(2)
    no_mask = np.round(softmax(scaled), 2)  # rows sum to 1, but weight on future keys
    after = np.round(softmax(scaled) * np.tril(np.ones((3, 3))), 2)  # causal, rows no longer sum to 1
    negative = np.array([[1.0, 0, 0], [1.3, -0.3, 0], [0.5, 0.25, 0.25]])  # rows sum to 1, a negative weight
    for weights in (no_mask, after, negative):
        result = _carried(weights.tolist(), np.round(weights @ V, 2).tolist())
        assert result.points == 0 and result.diagnosis != "carried_forward", (weights, result.render("en"))


def test_wrong_but_possible_weights_still_carry_their_error_forward():
    """Causal, non-negative rows that sum to 1 up to rounding: an output right for them is credited."""
    Q, K, V = problem()
    transposed_k = np.round(softmax((K @ Q.T) / math.sqrt(2) + mask(3)), 2)  # the K·Qᵀ slip: causal weights
    uniform = np.round(np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None], 2)  # 0.33 · 3 = 0.99
    for weights in (transposed_k, uniform):
        assert np.abs(weights.sum(axis=1) - 1).max() <= 0.011
        result = _carried(weights.tolist(), np.round(weights @ V, 2).tolist())
        assert result.points == 2 and result.diagnosis == "carried_forward", (weights, result.render("en"))


# ---------------------------------------------------------------- the helpers a grade rests on, at their edges
def test_could_be_weights_at_the_edges_of_rounding():
    """HALF_HUNDREDTH = 0.0051: a negative or a future weight of exactly that still rounds from 0; more does not.
    Each row below sums to exactly 1.0 in floating point (1.0051 - 0.0051, 0.9949 + 0.0051)."""
    rest = [[0.5, 0.5, 0.0], [0.5, 0.25, 0.25]]
    assert lab00.could_be_weights([[1.0, 0.0, 0.0], [1.0051, -0.0051, 0.0], rest[1]])
    assert not lab00.could_be_weights([[1.0, 0.0, 0.0], [1.0052, -0.0052, 0.0], rest[1]])
    assert lab00.could_be_weights([[0.9949, 0.0051, 0.0], *rest])
    assert not lab00.could_be_weights([[0.9948, 0.0052, 0.0], *rest])
    # weight on a key just above the diagonal only (k=1, not k=2): entries (0, 1) and (1, 2)
    assert not lab00.could_be_weights([[0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.5, 0.25, 0.25]])


@pytest.mark.parametrize("weights", [
    [[1.0, 0.0], [0.5, 0.5], [0.5, 0.5]],  # 3 x 2: non-negative, zero above the diagonal, rows sum to 1
    [[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]],  # 2 x 4, the same
    [1.0, 0.0, 0.0],  # one row, not a matrix
    [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [float("nan")] * 3],
    [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [math.inf, 0.0, 0.0]],
], ids=["3x2", "2x4", "1-D", "nan", "inf"])
def test_could_be_weights_refuses_what_is_no_square_finite_matrix(weights):
    assert lab00.could_be_weights(weights) is False


@pytest.mark.parametrize("a,b", [
    ([[math.nan] * 3], [[0.0] * 3]),  # the diagonal_masked weights' row 0 against a row of (almost) zeros
    ([[math.nan, 0.0]], [[0.0, 0.0]]),
    ([[-math.inf]], [[math.inf]]),
    ([[-math.inf]], [[0.0]]),
    ([[math.inf]], [[0.0]]),
], ids=["nan-row", "nan-entry", "-inf-inf", "-inf-0", "inf-0"])
def test_max_gap_keeps_nan_and_infinities_far_from_every_answer(a, b):
    # every answer here is within +-100, so "far" is a gap above 1000, either way round
    assert lab00._max_gap(a, b) > 1000
    assert lab00._max_gap(b, a) > 1000


@pytest.mark.parametrize("student,closest_is_a_slip_pair", [("s0", False), ("s5", True)])
def test_a_gap_of_exactly_distinct_is_not_well_separated(monkeypatch, student, closest_is_a_slip_pair):
    """_well_separated refuses a problem whose closest answers differ by DISTINCT or less, not only by less.

    The gaps are the problem's inputs here (taken from the exercises' own slips); what is checked is the
    boundary: DISTINCT set to the closest gap refuses the problem, one float below accepts it. For s0 the
    closest gap is between the right answer and a slip, for s5 between two slips (measured: 0.0893 < 0.164
    and 0.0554 < 0.0596)."""
    problem = lab00.variant(student)
    to_right, between = [], []
    for exercise in (lab00.QKScores(), lab00.ScaledScores(), lab00.AttentionWeights(), lab00.AttentionOutput()):
        right = exercise.reference(problem)
        slipped = [slip for _, slip in exercise.slips(problem)]
        to_right += [np.abs(np.nan_to_num(s, nan=1e6) - right).max() for s in slipped]
        between += [np.abs(np.nan_to_num(x, nan=1e6) - np.nan_to_num(y, nan=1e6)).max()
                    for x, y in itertools.combinations(slipped, 2)]
    assert (min(between) < min(to_right)) == closest_is_a_slip_pair
    closest = min(to_right + between)
    monkeypatch.setattr(lab00, "DISTINCT", closest)
    assert lab00._well_separated(problem) is False
    monkeypatch.setattr(lab00, "DISTINCT", np.nextafter(closest, 0))
    assert lab00._well_separated(problem) is True


def test_softmax_rows_is_stable_for_large_and_far_apart_rows():
    """As torch.softmax: each row is shifted by its own maximum, so large scores neither overflow nor underflow."""
    got = lab00.softmax_rows(np.array([[1000.0, 1000.0], [-1000.0, -1000.0], [0.0, NEG]]))
    assert np.array_equal(got, [[0.5, 0.5], [0.5, 0.5], [1.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and silently: no RuntimeWarning in the student's notebook
        assert np.isnan(lab00.softmax_rows(np.array([[NEG, NEG]]))).all()  # an all-blocked row gives NaN


def test_the_context_keeps_the_typed_id_trimmed(capsys):
    """The grader compares ctx["student_id"] with the submitter (id mismatch) and show_problem prints it."""
    ctx, problem_ = lab00.make_context({"STUDENT_ID": "  Ana  "})
    assert problem_ is None and ctx["student_id"] == "Ana"
    Lab("lab00", lang="en").show_problem({"STUDENT_ID": "  Ana  "})
    assert "Ana" in capsys.readouterr().out
