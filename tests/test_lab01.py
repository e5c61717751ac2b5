"""lab01 (masks): right masks pass, every named diagnosis is triggered by a wrong mask, in two languages.

Wrong masks are written here the way a student would write them, with torch,
independently of the exercise definitions (which use numpy).
"""
import json

import pytest
import torch

from autograder import Lab
from autograder.grading import grade_lab
from autograder.labs import lab01
from autograder.runtime import run_call

pytestmark = pytest.mark.lab01

NEG = float("-inf")


# ---------------------------------------------------------------- a correct student
def causal_mask(T):
    return torch.full((T, T), NEG).triu(diagonal=1)


def allowed_mask(T):
    return torch.ones(T, T, dtype=torch.bool).tril()


def blocked_mask(T):
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)


def padding_mask(lengths, T):
    lengths = torch.as_tensor(lengths)
    return (torch.arange(T)[None, :] < lengths[:, None])[:, None, None, :]


def combined_mask(lengths, T):
    return allowed_mask(T) & padding_mask(lengths, T)


def sliding_window_mask(T, W):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    return (j <= i) & (j >= i - W + 1)


RIGHT = {f.__name__: f for f in (causal_mask, allowed_mask, blocked_mask, padding_mask, combined_mask,
                                 sliding_window_mask)}


def grade(namespace, lang="en", exercise=None, seed=None):
    lab = Lab("lab01", lang=lang)
    results = grade_lab(lab.spec, lambda call: run_call(namespace, call), seed=seed,
                        only=[exercise] if exercise else None)
    return {r.exercise: r for r in results}


def with_(name, function):
    namespace = dict(RIGHT)
    namespace[name] = function
    return namespace


# ---------------------------------------------------------------- right answers
def test_right_masks_get_full_marks():
    results = grade(RIGHT)
    assert all(r.status == "passed" for r in results.values()), {k: r.render("en") for k, r in results.items()}
    assert sum(r.points for r in results.values()) == lab01.LAB.max_score


@pytest.mark.parametrize("seed", range(12))
def test_right_masks_pass_the_hidden_cases(seed):
    results = grade(RIGHT, seed=seed)
    assert all(r.status == "passed" for r in results.values()), {k: r.render("en") for k, r in results.items()}


def test_hidden_cases_come_from_the_seed_and_differ_from_the_public_ones():
    for exercise in lab01.EXERCISES:
        public = exercise.cases({})
        assert public and all(case.public for case in public)
        a, b = exercise.cases({}, seed=1), exercise.cases({}, seed=1)
        assert [c.call for c in a] == [c.call for c in b], "the same seed gives the same cases"
        hidden = [c for c in a if not c.public]
        assert hidden, exercise.id
        calls = {json.dumps(c.call, sort_keys=True) for seed in range(6) for c in exercise.cases({}, seed=seed)
                 if not c.public}
        assert len(calls) > 2, f"{exercise.id}: hidden cases do not vary with the seed"


def test_cases_are_plain_data():
    for exercise in lab01.EXERCISES:
        for case in exercise.cases({}, seed=3):
            json.dumps(case.call)
            json.dumps(case.data)


def test_large_negative_numbers_count_as_minus_infinity():
    results = grade(with_("causal_mask", lambda T: torch.ones(T, T).triu(1) * -1e9), exercise="causal_mask")
    assert results["causal_mask"].status == "passed"
    results = grade(with_("causal_mask", lambda T: torch.full((T, T), torch.finfo(torch.float32).min).triu(1)),
                    exercise="causal_mask")
    assert results["causal_mask"].status == "passed"


def test_other_float_dtypes_and_numpy_lengths_are_accepted():
    results = grade(with_("causal_mask", lambda T: causal_mask(T).double()), exercise="causal_mask")
    assert results["causal_mask"].status == "passed"


# ---------------------------------------------------------------- not answered, missing, raising
def _todo(*args):
    raise NotImplementedError("Your code here")


def test_blank_lab_reports_not_answered_not_a_traceback():
    results = grade({name: _todo for name in RIGHT})
    assert {r.status for r in results.values()} == {"not_answered"}
    assert all(r.points == 0 for r in results.values())
    assert "not implemented yet" in results["causal_mask"].render("en")
    assert "todavía sin implementar" in results["padding_mask"].render("es")


def test_undefined_function_is_named():
    namespace = dict(RIGHT)
    del namespace["combined_mask"]
    result = grade(namespace, exercise="combined_mask")["combined_mask"]
    assert result.status == "missing"
    assert "`combined_mask` is not defined" in result.render("en")


def test_a_function_that_raises_is_reported_with_its_error():
    result = grade(with_("allowed_mask", lambda T: torch.ones(T, T).tril(-T - 1)[T]), exercise="allowed_mask")
    result = result["allowed_mask"]
    assert result.status == "error" and result.points == 0
    assert "raised IndexError" in result.render("en")
    assert "lanzó una excepción IndexError" in result.render("es")


# ---------------------------------------------------------------- wrong type, dtype, shape
WRONG_TYPES = [
    # the kind is wrong, the shape right: say so, and what the kind means in this exercise
    ("allowed_mask", lambda T: allowed_mask(T).float(),
     "the shape is right, but your tensor holds float32. Here the answer is a boolean mask (dtype torch.bool",
     "la forma es correcta, pero tu tensor es de tipo float32. Aquí se pide una máscara booleana"),
    ("causal_mask", lambda T: allowed_mask(T),
     "the shape is right, but your tensor holds bool. You returned a boolean mask (True/False says which keys may be "
     "read); this exercise wants the additive mask: float, 0 where a key may be read and -inf where it is blocked",
     "Devolviste una máscara booleana (True/False dice qué keys se pueden leer); este ejercicio pide la máscara aditiva"),
    ("padding_mask", lambda lengths, T: padding_mask(lengths, T).long(),
     "the shape is right, but your tensor holds int64. Here the answer is a boolean mask",
     "la forma es correcta, pero tu tensor es de tipo int64"),
    # not a tensor at all
    ("blocked_mask", lambda T: blocked_mask(T).numpy(),
     "your function must return a torch.Tensor of shape (4, 4), but it returned numpy.ndarray bool (4, 4)",
     "tu función debe devolver un torch.Tensor de forma (4, 4), pero devolvió numpy.ndarray bool (4, 4)"),
    ("blocked_mask", lambda T: blocked_mask(T).tolist(),
     "your function must return a torch.Tensor of shape (4, 4), but it returned list[4]",
     "tu función debe devolver un torch.Tensor de forma (4, 4), pero devolvió list[4]"),
    ("sliding_window_mask", lambda T, W: None,
     "your function must return a torch.Tensor of shape (6, 6), but it returned NoneType",
     "tu función debe devolver un torch.Tensor de forma (6, 6)"),
    # the shape is wrong, the kind right: the shapes only, no word about the kind
    ("sliding_window_mask", lambda T, W: sliding_window_mask(T, W)[None],
     "the answer must have shape (6, 6), but yours has shape (1, 6, 6).",
     "la respuesta debe tener forma (6, 6), pero la tuya tiene forma (1, 6, 6)."),
]


@pytest.mark.parametrize("name,function,english,spanish", WRONG_TYPES, ids=[f"{w[0]}-{n}" for n, w in enumerate(WRONG_TYPES)])
def test_wrong_type_dtype_or_shape_says_what_was_expected_and_what_came_back(name, function, english, spanish):
    result = grade(with_(name, function), exercise=name)[name]
    assert result.status == "failed" and result.points == 0 and result.diagnosis == "wrong_shape"
    assert english in result.render("en")
    assert spanish in result.render("es")


def test_a_wrong_shape_of_the_right_kind_does_not_explain_the_kind():
    result = grade(with_("sliding_window_mask", lambda T, W: sliding_window_mask(T, W)[None]),
                   exercise="sliding_window_mask")["sliding_window_mask"]
    assert [item.key for item in result.feedback] == ["common.failed", "common.wrong_shape"]


def test_unexplained_wrong_entry_points_at_it():
    def almost(T):
        mask = allowed_mask(T)
        if T > 3:
            mask[3, 1] = False
        return mask

    result = grade(with_("allowed_mask", almost), exercise="allowed_mask")["allowed_mask"]
    assert result.diagnosis == "wrong_values"
    assert "[3, 1]" in result.render("en")


# ---------------------------------------------------------------- named diagnoses
def _window_band(T, W, lo, hi):
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    return (j >= i - lo) & (j <= i + hi)


def _pad(lengths, T):
    return torch.arange(T)[None, :] < torch.as_tensor(lengths)[:, None]  # (B, T)


SLIPS = [
    # causal_mask
    ("causal_mask", "wrong_triangle", lambda T: torch.full((T, T), NEG).tril(-1),
     "wrong triangle (the transpose)", "triángulo equivocado"),
    ("causal_mask", "diagonal_masked", lambda T: torch.full((T, T), NEG).triu(0),
     "also blocks the diagonal", "bloquea la diagonal"),
    ("causal_mask", "off_by_one", lambda T: torch.full((T, T), NEG).triu(2),
     "your mask is off by one: query i also reads key i + 1", "tu máscara tiene un desfase de una posición"),
    ("causal_mask", "zero_inf_swapped", lambda T: torch.zeros(T, T).masked_fill(allowed_mask(T), NEG),
     "0 and -inf are swapped", "0 y -inf están intercambiados"),
    ("causal_mask", "binary_mask", lambda T: torch.ones(T, T).tril(), "0/1 mask", "máscara 0/1"),
    ("causal_mask", "binary_mask", lambda T: torch.ones(T, T).triu(1), "0/1 mask", "máscara 0/1"),
    ("causal_mask", "nan_in_mask", lambda T: torch.ones(T, T).triu(1) * NEG, "(-inf) · 0 is NaN",
     "(-inf) · 0 es NaN"),
    # allowed_mask / blocked_mask
    ("allowed_mask", "convention_inverted", blocked_mask, "True and False are swapped",
     "True y False están intercambiados"),
    ("allowed_mask", "diagonal_masked", lambda T: torch.ones(T, T, dtype=torch.bool).tril(-1),
     "also blocks the diagonal", "bloquea la diagonal"),
    ("allowed_mask", "wrong_triangle", lambda T: torch.ones(T, T, dtype=torch.bool).triu(),
     "wrong triangle", "triángulo equivocado"),
    ("allowed_mask", "off_by_one", lambda T: torch.ones(T, T, dtype=torch.bool).tril(1),
     "the very token it has to predict", "justo el token que debe predecir"),
    ("blocked_mask", "convention_inverted", allowed_mask, "you returned the allowed mask",
     "devolviste la máscara de lo permitido"),
    ("blocked_mask", "diagonal_masked", lambda T: torch.ones(T, T, dtype=torch.bool).triu(0),
     "also blocks the diagonal", "bloquea la diagonal"),
    ("blocked_mask", "wrong_triangle", lambda T: torch.ones(T, T, dtype=torch.bool).tril(-1),
     "wrong triangle", "triángulo equivocado"),
    ("blocked_mask", "off_by_one", lambda T: torch.ones(T, T, dtype=torch.bool).triu(2),
     "Block every key j > i", "Bloquea toda key j > i"),
    # padding_mask
    ("padding_mask", "padding_shape", _pad, "shape (3, 5) broadcasts wrongly; it must be (3, 1, 1, 5)",
     "la forma (3, 5) hace un broadcasting equivocado"),
    ("padding_mask", "padding_shape", lambda lengths, T: _pad(lengths, T)[:, None, :, None],
     "shape (3, 1, 5, 1) broadcasts wrongly", "la forma (3, 1, 5, 1)"),
    ("padding_mask", "padding_shape", lambda lengths, T: _pad(lengths, T)[:, None, :],
     "shape (3, 1, 5) broadcasts wrongly", "la forma (3, 1, 5)"),
    ("padding_mask", "convention_inverted", lambda lengths, T: ~padding_mask(lengths, T),
     "key_padding_mask uses the opposite, True = padding", "True y False están intercambiados: aquí True marca un token real"),
    ("padding_mask", "length_off_by_one",
     lambda lengths, T: (torch.arange(T)[None, :] <= torch.as_tensor(lengths)[:, None])[:, None, None, :],
     "one token too many", "sobra un token"),
    # combined_mask
    ("combined_mask", "combined_with_or", lambda lengths, T: allowed_mask(T) | padding_mask(lengths, T),
     "combined the masks with OR", "combinaste las máscaras con OR"),
    ("combined_mask", "convention_inverted", lambda lengths, T: blocked_mask(T) | ~padding_mask(lengths, T),
     "True and False are swapped", "True y False están intercambiados"),
    ("combined_mask", "padding_shape", lambda lengths, T: allowed_mask(T) & _pad(lengths, T)[:, None, :],
     "shape (3, 5, 5) broadcasts wrongly; it must be (3, 1, 5, 5)", "la forma (3, 5, 5)"),
    ("combined_mask", "padding_queries",
     lambda lengths, T: allowed_mask(T) & padding_mask(lengths, T) & _pad(lengths, T)[:, None, :, None],
     "blocked the rows of padded queries", "bloqueaste las filas de las queries de padding"),
    ("combined_mask", "padding_missing", lambda lengths, T: allowed_mask(T)[None, None].expand(len(lengths), 1, T, T),
     "the causal mask alone", "solo la máscara causal"),
    ("combined_mask", "causal_missing", lambda lengths, T: padding_mask(lengths, T).expand(-1, 1, T, T),
     "the padding mask alone", "solo la máscara de padding"),
    ("combined_mask", "off_by_one", lambda lengths, T: torch.ones(T, T, dtype=torch.bool).tril(1)
     & padding_mask(lengths, T), "query i also reads key i + 1", "la query i lee también la key i + 1"),
    # sliding_window_mask
    ("sliding_window_mask", "window_too_wide", lambda T, W: _window_band(T, W, W, 0),
     "W + 1 keys (i - W … i: 4 keys for W = 3)", "W + 1 keys (i - W … i: 4 keys para W = 3)"),
    ("sliding_window_mask", "window_too_narrow", lambda T, W: _window_band(T, W, W - 2, 0),
     "only W - 1 keys", "solo W - 1 keys"),
    ("sliding_window_mask", "window_not_causal", lambda T, W: _window_band(T, W, W - 1, W - 1),
     "symmetric", "simétrica"),
    ("sliding_window_mask", "convention_inverted", lambda T, W: ~sliding_window_mask(T, W),
     "True and False are swapped", "True y False están intercambiados"),
    ("sliding_window_mask", "wrong_triangle", lambda T, W: _window_band(T, W, 0, W - 1),
     "wrong triangle", "triángulo equivocado"),
    ("sliding_window_mask", "diagonal_masked", lambda T, W: _window_band(T, W, W - 1, -1),
     "also blocks the diagonal", "bloquea la diagonal"),
    # the diagonal dropped but W keys kept: the window slid one key back (i - W … i - 1)
    ("sliding_window_mask", "diagonal_masked", lambda T, W: _window_band(T, W, W, -1),
     "also blocks the diagonal", "bloquea la diagonal"),
    ("sliding_window_mask", "off_by_one", lambda T, W: _window_band(T, W, W - 2, 1),
     "query i also reads key i + 1", "la query i lee también la key i + 1"),
]


@pytest.mark.parametrize("exercise,diagnosis,function,english,spanish", SLIPS,
                         ids=[f"{s[0]}-{s[1]}-{n}" for n, s in enumerate(SLIPS)])
def test_each_slip_is_named_in_two_languages(exercise, diagnosis, function, english, spanish):
    result = grade(with_(exercise, function), exercise=exercise)[exercise]
    assert result.status == "failed" and result.points == 0
    assert result.diagnosis == diagnosis, result.render("en")
    assert english in result.render("en")
    assert spanish in result.render("es")
    assert "§" in result.render("de") and "Kapitel" in result.render("de")
    assert "Chapter" in result.render("hi-Latn")


@pytest.mark.parametrize("exercise,diagnosis,function,english,spanish", SLIPS[:3],
                         ids=[f"{s[0]}-{s[1]}" for s in SLIPS[:3]])
def test_slips_are_named_on_hidden_cases_too(exercise, diagnosis, function, english, spanish):
    for seed in range(4):
        assert grade(with_(exercise, function), exercise=exercise, seed=seed)[exercise].diagnosis == diagnosis


def test_every_diagnosis_of_lab01_is_covered_here():
    named = {(exercise.id, name) for exercise in lab01.EXERCISES for name in exercise.diagnosis_names()}
    covered = {(exercise, diagnosis) for exercise, diagnosis, *_ in SLIPS}
    assert named == covered


def test_the_issue_diagnoses_exist():
    """The issue names these for lab01; each maps to a diagnosis of an exercise."""
    named = {name for exercise in lab01.EXERCISES for name in exercise.diagnosis_names()}
    for wanted in ("diagonal_masked", "wrong_triangle", "convention_inverted", "zero_inf_swapped", "padding_shape",
                   "window_too_wide", "combined_with_or"):
        assert wanted in named


# ---------------------------------------------------------------- discrimination and fairness of the hidden cases
@pytest.mark.parametrize("fill", [
    lambda T: torch.full((T, T), -1e9, dtype=torch.bfloat16).triu(1),  # -1e9 in bf16 is -998244352
    lambda T: torch.full((T, T), -1e4).triu(1),  # BERT's fill
    lambda T: torch.full((T, T), torch.finfo(torch.float16).min, dtype=torch.float16).triu(1),
], ids=["bf16-1e9", "fp32-1e4", "fp16-finfo-min"])
def test_large_negative_fills_block_like_minus_infinity(fill):
    for seed in (None, 7):
        result = grade(with_("causal_mask", fill), exercise="causal_mask", seed=seed)["causal_mask"]
        assert result.status == "passed", result.render("en")


def _wrong_only_for(exercise, bad):
    """The right function, except for the arguments `bad` accepts: there it returns the transposed mask."""
    right = RIGHT[exercise]

    def function(*args):
        mask = right(*args)
        return mask.transpose(-2, -1).contiguous() if bad(*args) else mask
    return function


@pytest.mark.parametrize("exercise,bad", [
    ("causal_mask", lambda T: T == 11),
    ("allowed_mask", lambda T: T == 2),
    ("blocked_mask", lambda T: T in (7, 9)),
    ("sliding_window_mask", lambda T, W: (T, W) == (9, 4)),
    ("sliding_window_mask", lambda T, W: W == T + 1 and T > 4),
    ("combined_mask", lambda lengths, T: T == 7),
])
def test_a_mask_wrong_for_one_size_of_the_taught_range_fails_for_every_seed(exercise, bad):
    for seed in range(4):
        result = grade(with_(exercise, _wrong_only_for(exercise, bad)), exercise=exercise, seed=seed)[exercise]
        assert result.points == 0, (seed, result.render("en"))
    assert grade(with_(exercise, _wrong_only_for(exercise, bad)), exercise=exercise)[exercise].points > 0


def test_hidden_cases_depend_on_the_seed_and_the_exercise_only():
    for exercise in lab01.EXERCISES:
        assert [c.call for c in exercise.cases({}, 5)] == [c.call for c in exercise.cases({"anything": 1}, 5)]


def test_every_case_is_either_public_or_hidden():
    # The grader runs the cases whose `public == True`, then those whose `public == False`:
    # a case flagged with anything else (None, say) would never be run.
    for exercise in lab01.EXERCISES:
        for seed in (None, 3):
            flags = {type(case.public) for case in exercise.cases({}, seed)}
            assert flags == {bool}, (exercise.id, seed, flags)


def _wrong_dtype_for_tensor_lengths(lengths, T):
    mask = padding_mask(lengths, T)
    return mask.long() if torch.is_tensor(lengths) else mask


def _wrong_dtype_for_list_lengths(lengths, T):
    mask = padding_mask(lengths, T)
    return mask if torch.is_tensor(lengths) else mask.long()


def _window_wrong_shape_at(size):
    def function(T, W):
        mask = sliding_window_mask(T, W)
        return mask[None] if (T, W) == size else mask
    return function


# The public cases a student's own check runs, named in its feedback as the student would call them.
PUBLIC_CALLS = [
    ("padding_mask", _wrong_dtype_for_list_lengths, "for padding_mask([3, 5, 1], 5) the shape is right, but your tensor holds"),
    ("padding_mask", _wrong_dtype_for_tensor_lengths, "for padding_mask(torch.tensor([2, 4]), 4) the shape is right, but your tensor holds"),
    ("sliding_window_mask", _window_wrong_shape_at((6, 3)), "for sliding_window_mask(6, 3) the answer must have shape (6, 6)"),
    ("sliding_window_mask", _window_wrong_shape_at((5, 1)), "for sliding_window_mask(5, 1) the answer must have shape (5, 5)"),
    ("sliding_window_mask", _window_wrong_shape_at((4, 4)), "for sliding_window_mask(4, 4) the answer must have shape (4, 4)"),
    ("sliding_window_mask", _window_wrong_shape_at((3, 5)), "for sliding_window_mask(3, 5) the answer must have shape (3, 3)"),
]


@pytest.mark.parametrize("exercise,function,english", PUBLIC_CALLS, ids=[p[2][4:p[2].index(")") + 1] for p in PUBLIC_CALLS])
def test_each_public_case_is_checked_and_named_as_called(exercise, function, english):
    result = grade(with_(exercise, function), exercise=exercise)[exercise]
    assert result.status == "failed" and result.diagnosis == "wrong_shape"
    assert english in result.render("en")


def test_the_hidden_windows_are_every_window_of_the_taught_range():
    # Chapter 09's windows: T = 1 … 10 and W = 1 … T + 1 (W = T + 1 is wider than the sequence: causal).
    taught = {(T, W) for T in range(1, 11) for W in range(1, T + 2)}
    assert len(taught) == 65  # 2 + 3 + … + 11
    exercise = next(e for e in lab01.EXERCISES if e.id == "sliding_window_mask")
    for seed in (0, 9):
        hidden = [tuple(case.call["args"]) for case in exercise.cases({}, seed) if not case.public]
        assert sorted(hidden) == sorted(taught)


@pytest.mark.parametrize("exercise", ["padding_mask", "combined_mask"])
def test_hidden_lengths_include_a_tensor_batch_padded_down_to_one_token(exercise):
    # every sequence holds one real token and T > 1: the mask of each row is a single True
    exercise = next(e for e in lab01.EXERCISES if e.id == exercise)
    for seed in (0, 9):
        tensors = [(case.call["args"][0]["__tensor__"], case.call["args"][1])
                   for case in exercise.cases({}, seed) if not case.public and isinstance(case.call["args"][0], dict)]
        assert any(T > 1 and len(lengths) > 1 and set(lengths) == {1} for lengths, T in tensors), tensors


@pytest.mark.parametrize("narrow_at,seed", [(1, None), (2, 0)], ids=["W=1-public", "W=2-hidden"])
def test_a_window_too_narrow_for_the_smallest_windows_is_named(narrow_at, seed):
    # W = 1 too narrow keeps no key at all (an all-False mask); W = 2 too narrow keeps the diagonal alone.
    def function(T, W):
        return _window_band(T, W, W - 2, 0) if W == narrow_at else sliding_window_mask(T, W)

    result = grade(with_("sliding_window_mask", function), exercise="sliding_window_mask", seed=seed)
    result = result["sliding_window_mask"]
    assert result.diagnosis == "window_too_narrow", result.render("en")
    assert f"with W = {narrow_at}," in result.render("en")
