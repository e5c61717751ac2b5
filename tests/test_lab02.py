"""lab02 (causal attention and the perturbation test): right answers pass, every named diagnosis is
triggered by a wrong answer (in two languages), and the buggy attention functions are what they claim.

Wrong answers are written here the way a student would write them, with torch.
"""
import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder import Lab
from autograder.exercise import Array, Case, Feedback
from autograder.grading import grade_lab
from autograder.labs import bugs02, lab02
from autograder.runtime import decode_arg, run_call

pytestmark = [pytest.mark.lab02, pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")]  # a student slip uses K.T


# ---------------------------------------------------------------- a correct student
def causal_attention(Q, K, V):
    T = Q.shape[-2]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])  # (..., T, T)
    blocked = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T, T)
    weights = torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=-1)  # (..., T, T)
    return weights @ V, weights


def perturbation_test(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    Y = attn_fn(X)
    if not torch.isfinite(Y).all():
        return False
    for p in range(1, T):
        X2 = X.clone()
        X2[p] = torch.randn(d, generator=g)
        Y2 = attn_fn(X2)
        if not torch.isfinite(Y2).all() or not torch.allclose(Y[:p], Y2[:p], atol=1e-5, rtol=0):
            return False
    return True


def jacobian_leaks(attn_fn, T=6, d=4):
    X = torch.randn(T, d, generator=torch.Generator().manual_seed(0))
    J = torch.autograd.functional.jacobian(attn_fn, X)  # (T, d, T, d)
    return J.abs().amax(dim=(1, 3)) > 0


RIGHT = {"causal_attention": causal_attention, "perturbation_test": perturbation_test,
         "jacobian_leaks": jacobian_leaks}


def grade(namespace, lang="en", exercise=None, seed=None):
    results = grade_lab(Lab("lab02", lang=lang).spec, lambda call: run_call(namespace, call), seed=seed,
                        only=[exercise] if exercise else None)
    return {r.exercise: r for r in results}


def with_(name, function):
    namespace = dict(RIGHT)
    namespace[name] = function
    return namespace


# ---------------------------------------------------------------- right answers
def test_right_answers_get_full_marks():
    results = grade(RIGHT)
    assert all(r.status == "passed" for r in results.values()), {k: r.render("en") for k, r in results.items()}
    assert sum(r.points for r in results.values()) == lab02.LAB.max_score
    assert results["perturbation_test"].feedback == [Feedback("common.passed", {"name": "perturbation_test"}),
                                                     Feedback("lab02.caught_all", {})]
    assert "catches every leak" in results["perturbation_test"].render("en")
    assert {e.id: e.points for e in lab02.EXERCISES} == {"causal_attention": 4, "perturbation_test": 5,
                                                         "jacobian_leaks": 3}


@pytest.mark.parametrize("seed", range(8))
def test_right_answers_pass_the_hidden_cases(seed):
    results = grade(RIGHT, seed=seed)
    assert all(r.status == "passed" for r in results.values()), {k: r.render("en") for k, r in results.items()}


def test_fused_attention_passes():
    def fused(Q, K, V):
        T = Q.shape[-2]
        out = F.scaled_dot_product_attention(Q, K, V, is_causal=True)
        weights = torch.softmax((Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])).masked_fill(
            torch.ones(T, T, dtype=torch.bool).triu(1), -1e9), dim=-1)
        return out, weights

    for seed in (None, 1, 2):
        assert grade(with_("causal_attention", fused), exercise="causal_attention", seed=seed)[
            "causal_attention"].status == "passed"


def test_hidden_cases_come_from_the_seed():
    for exercise in lab02.EXERCISES:
        public = exercise.cases({})
        assert public and all(case.public for case in public)
        a, b = exercise.cases({}, seed=5), exercise.cases({}, seed=5)
        assert [c.call for c in a] == [c.call for c in b]
        hidden = {json.dumps(c.call, sort_keys=True) for seed in range(4) for c in exercise.cases({}, seed=seed)
                  if not c.public}
        assert len(hidden) > len([c for c in exercise.cases({}, seed=0) if not c.public])


def test_cases_are_plain_data():
    for exercise in lab02.EXERCISES:
        for case in exercise.cases({}, seed=3):
            json.dumps(case.call)
            json.dumps(case.data)


# ---------------------------------------------------------------- not answered, missing, raising
def _todo(*args, **kwargs):
    raise NotImplementedError("Your code here")


def test_blank_lab_reports_not_answered_not_a_traceback():
    results = grade({name: _todo for name in RIGHT})
    assert {r.status for r in results.values()} == {"not_answered"}
    assert all(r.points == 0 for r in results.values())
    assert "not implemented yet" in results["perturbation_test"].render("en")
    assert "nicht implementiert" in results["jacobian_leaks"].render("de")


def test_undefined_function_is_named():
    namespace = dict(RIGHT)
    del namespace["perturbation_test"]
    result = grade(namespace, exercise="perturbation_test")["perturbation_test"]
    assert result.status == "missing"
    assert "`perturbation_test` is not defined" in result.render("en")


def test_a_function_that_raises_is_reported():
    result = grade(with_("causal_attention", lambda Q, K, V: Q @ V @ K), exercise="causal_attention")[
        "causal_attention"]
    assert result.status == "error"
    assert "raised RuntimeError" in result.render("en") and "lanzó una excepción RuntimeError" in result.render("es")


def test_a_test_that_raises_on_a_correct_function_is_reported():
    def fragile(attn_fn, T=8, d=4, seed=0):
        X = torch.randn(T, d)
        torch.testing.assert_close(attn_fn(X)[:2], attn_fn(X + 1)[:2])
        return True

    result = grade(with_("perturbation_test", fragile), exercise="perturbation_test")["perturbation_test"]
    assert result.status == "error" and result.points == 0
    assert "raised AssertionError" in result.render("en")
    assert "hat im Fall perturbation_test(attention) einen AssertionError ausgelöst" in result.render("de")


# ---------------------------------------------------------------- wrong type, dtype, shape
WRONG_TYPES = [
    ("causal_attention", lambda Q, K, V: causal_attention(Q, K, V)[0], "common.wrong_type",
     "the answer must be tuple(float (4, 3), float (4, 4)), but yours is float32 (4, 3)",
     "la respuesta debe ser tuple(float (4, 3), float (4, 4)), pero la tuya es float32 (4, 3)"),
    ("causal_attention", lambda Q, K, V: tuple(x.numpy() for x in causal_attention(Q, K, V)), "common.wrong_type",
     "but yours is tuple(numpy.ndarray float32 (4, 3), numpy.ndarray float32 (4, 4))", "pero la tuya es tuple(numpy.ndarray"),
    ("causal_attention", lambda Q, K, V: (causal_attention(Q, K, V)[0], causal_attention(Q, K, V)[1] > 0.1),
     "common.wrong_type", "but yours is tuple(float32 (4, 3), bool (4, 4))",
     "pero la tuya es tuple(float32 (4, 3), bool (4, 4))"),
    # a test answers with a bool: what came back, and what a test answers
    ("perturbation_test", lambda attn_fn, T=8, d=4, seed=0: None, "common.not_a_bool",
     "your test returned NoneType, not a bool (True or False).",
     "tu prueba devolvió NoneType, no un bool (True o False)."),
    ("perturbation_test", lambda attn_fn, T=8, d=4, seed=0: 1, "common.not_a_bool",
     "your test returned int, not a bool", "tu prueba devolvió int, no un bool"),
    ("jacobian_leaks", lambda attn_fn, T=6, d=4: jacobian_leaks(attn_fn, T, d).float(), "common.wrong_type",
     "the answer must be bool (6, 6), but yours is float32 (6, 6)",
     "la respuesta debe ser bool (6, 6), pero la tuya es float32 (6, 6)"),
    ("jacobian_leaks",
     lambda attn_fn, T=6, d=4: torch.autograd.functional.jacobian(attn_fn, torch.randn(T, d)) != 0, "common.wrong_type",
     "the answer must be bool (6, 6), but yours is bool (6, 2, 6, 2)", "pero la tuya es bool (6, 2, 6, 2)"),
    ("jacobian_leaks", lambda attn_fn, T=6, d=4: jacobian_leaks(attn_fn, T, d).numpy(), "common.wrong_type",
     "the answer must be torch.Tensor bool (6, 6), but yours is numpy.ndarray bool (6, 6)",
     "la respuesta debe ser torch.Tensor bool (6, 6)"),
    ("jacobian_leaks", lambda attn_fn, T=6, d=4: None, "common.wrong_type",
     "the answer must be torch.Tensor bool (6, 6), but yours is NoneType",
     "la respuesta debe ser torch.Tensor bool (6, 6), pero la tuya es NoneType"),
]


@pytest.mark.parametrize("name,function,key,english,spanish", WRONG_TYPES,
                         ids=[f"{w[0]}-{n}" for n, w in enumerate(WRONG_TYPES)])
def test_wrong_type_dtype_or_shape_says_what_was_expected(name, function, key, english, spanish):
    result = grade(with_(name, function), exercise=name)[name]
    assert result.status == "failed" and result.points == 0 and result.diagnosis == "wrong_shape"
    assert [f.key for f in result.feedback] == ["common.failed", key]
    assert english in result.render("en"), result.render("en")
    assert spanish in result.render("es"), result.render("es")


def test_zero_dimensional_bool_tensors_count_as_bools():
    def tensor_verdict(attn_fn, T=8, d=4, seed=0):
        return torch.tensor(perturbation_test(attn_fn, T, d, seed))

    assert grade(with_("perturbation_test", tensor_verdict), exercise="perturbation_test")[
        "perturbation_test"].status == "passed"


# ---------------------------------------------------------------- causal_attention: named slips
def _attention(Q, K, V, scale=None, mask="causal", softmax_dim=-1, after=False, scores_fn=None):
    T, d_k = Q.shape[-2], Q.shape[-1]
    scores = Q @ K.transpose(-2, -1) if scores_fn is None else scores_fn(Q, K)
    scores = scores / (math.sqrt(d_k) if scale is None else scale(d_k))
    blocked = {"causal": torch.ones(T, T).triu(1), "diagonal": torch.ones(T, T).triu(0),
               "upper": torch.ones(T, T).tril(-1), "none": torch.zeros(T, T),
               "next_key_open": torch.ones(T, T).triu(2)}[mask].bool()
    if after:
        weights = torch.softmax(scores, dim=-1) * ~blocked
    else:
        weights = torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=softmax_dim)
    return weights @ V, weights


def _with_transposed_output(Q, K, V):
    _, weights = causal_attention(Q, K, V)
    return weights.transpose(-2, -1) @ V, weights


def _only_2d(Q, K, V):
    T = Q.shape[0]
    scores = Q @ K.T / math.sqrt(Q.shape[1])
    weights = torch.softmax(scores + torch.full((T, T), float("-inf")).triu(1), dim=1)
    return weights @ V, weights


def _mask_of_first_axis(Q, K, V):
    T = Q.shape[0]  # wrong with batch dims: the first axis is the batch
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if T != Q.shape[-2]:
        blocked = torch.zeros(Q.shape[-2], Q.shape[-2], dtype=torch.bool)
    else:
        blocked = torch.ones(T, T, dtype=torch.bool).triu(1)
    weights = torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=-1)
    return weights @ V, weights


ATTENTION_SLIPS = [
    ("no_mask", lambda Q, K, V: _attention(Q, K, V, mask="none"), "without any mask", "sin máscara"),
    ("forgot_scale", lambda Q, K, V: _attention(Q, K, V, scale=lambda d: 1.0), "forgot the 1/√d_k scale",
     "olvidaste la escala"),
    ("divided_by_dk", lambda Q, K, V: _attention(Q, K, V, scale=lambda d: d), "divided by d_k instead of √d_k",
     "dividiste entre d_k"),
    ("mask_after_softmax", lambda Q, K, V: _attention(Q, K, V, after=True), "rows no longer sum to 1",
     "ya no suman 1"),
    ("wrong_axis", lambda Q, K, V: _attention(Q, K, V, softmax_dim=-2), "wrong axis", "eje equivocado"),
    ("diagonal_masked", lambda Q, K, V: _attention(Q, K, V, mask="diagonal"), "softmax gives NaN",
     "el softmax da NaN"),
    ("wrong_triangle", lambda Q, K, V: _attention(Q, K, V, mask="upper"), "wrong triangle",
     "triángulo equivocado"),
    # instructor-2: triu(diagonal=2) as the blocked set (each query also reads the next key) was future_weight
    ("off_by_one", lambda Q, K, V: _attention(Q, K, V, mask="next_key_open"),
     "your mask is off by one: query i also reads key i + 1", "tu máscara tiene un desfase de una posición"),
    ("off_by_one", lambda Q, K, V: _attention_allowed(Q, K, V, torch.ones(Q.shape[-2], Q.shape[-2]).tril(1)),
     "the very token it has to predict", "justo el token que debe predecir"),
    ("transposed_k", lambda Q, K, V: _attention(Q, K, V, scores_fn=lambda q, k: k @ q.transpose(-2, -1)), "K·Qᵀ",
     "K·Qᵀ"),
    ("weights_transposed", _with_transposed_output, "Aᵀ·V", "Aᵀ·V"),
    ("outputs_swapped", lambda Q, K, V: causal_attention(Q, K, V)[::-1], "the order is (out, weights)",
     "el orden es (out, weights)"),
    ("rows_not_normalised", lambda Q, K, V: tuple(0.9 * x for x in causal_attention(Q, K, V)), "sums to 0.9, not 1",
     "suma 0.9, no 1"),
    ("future_weight", lambda Q, K, V: _attention_with_fill(Q, K, V, -5.0), "but key 1 comes after query 0",
     "pero la key 1 viene después de la query 0"),
    ("batch_dims", _only_2d, "not with leading batch dimensions", "dimensiones de batch delante"),
    ("batch_dims", _mask_of_first_axis, "not with leading batch dimensions", "dimensiones de batch delante"),
]


def _attention_allowed(Q, K, V, allowed):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    weights = torch.softmax(scores.masked_fill(allowed == 0, -1e9), dim=-1)
    return weights @ V, weights


def _attention_with_fill(Q, K, V, fill):
    T = Q.shape[-2]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    weights = torch.softmax(scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), fill), dim=-1)
    return weights @ V, weights


@pytest.mark.parametrize("diagnosis,function,english,spanish", ATTENTION_SLIPS,
                         ids=[f"{s[0]}-{n}" for n, s in enumerate(ATTENTION_SLIPS)])
def test_each_attention_slip_is_named_in_two_languages(diagnosis, function, english, spanish):
    for seed in (None, 0, 1):
        result = grade(with_("causal_attention", function), exercise="causal_attention", seed=seed)[
            "causal_attention"]
        assert result.status in ("failed", "error") and result.points == 0
        assert result.diagnosis == diagnosis, result.render("en")
    assert english in result.render("en"), result.render("en")
    assert spanish in result.render("es"), result.render("es")
    assert "§" in result.render("de")


# ---------------------------------------------------------------- perturbation_test: students' tests
def _perturbs(attn_fn, T, d, seed, positions, compared=lambda p: slice(None, p), equal_nan=False,
              finite=False) -> bool:
    """A student's perturbation test with its choices as arguments: which positions p it perturbs
    (a fresh row each), which outputs it compares for each (`compared(p)`), how it treats NaN."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    Y = attn_fn(X)
    if finite and not torch.isfinite(Y).all():
        return False
    for p in positions:
        X2 = X.clone()
        X2[p] = torch.randn(d, generator=g)
        rows = compared(p)
        if not torch.allclose(Y[rows], attn_fn(X2)[rows], atol=1e-5, equal_nan=equal_nan):
            return False
    return True


def _last_only(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    X2 = X.clone()
    X2[-1] = torch.randn(d, generator=g)
    Y, Y2 = attn_fn(X), attn_fn(X2)
    return bool(torch.isfinite(Y).all()) and torch.allclose(Y[:-1], Y2[:-1], atol=1e-5)


def _asserting_finite(attn_fn, T=8, d=4, seed=0):
    assert torch.isfinite(attn_fn(torch.randn(T, d))).all(), "NaN!"
    return perturbation_test(attn_fn, T, d, seed)


def _assert_close(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    for p in range(1, T):
        X2 = X.clone()
        X2[p] = torch.randn(d, generator=g)
        torch.testing.assert_close(attn_fn(X)[:p], attn_fn(X2)[:p])
    return True


def _no_finite_check(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    for p in range(1, T):
        X2 = X.clone()
        X2[p] = torch.randn(d, generator=g)
        if ((attn_fn(X)[:p] - attn_fn(X2)[:p]).abs() > 1e-5).any():
            return False
    return True


def _demands_later_change(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    for p in range(1, T):
        X2 = X.clone()
        X2[p] = torch.randn(d, generator=g)
        Y, Y2 = attn_fn(X), attn_fn(X2)
        if not torch.allclose(Y[:p], Y2[:p], atol=1e-5) or torch.allclose(Y[p:], Y2[p:], atol=1e-5) \
                or not torch.isfinite(Y).all():
            return False
        if ((Y[p:] - Y2[p:]).abs().amax(dim=-1) < 1e-6).any():  # every later output must move
            return False
    return True


def _nan_poison(attn_fn, T=8, d=4, seed=0):
    X = torch.randn(T, d, generator=torch.Generator().manual_seed(seed))
    Y = attn_fn(X)
    for p in range(1, T):
        X2 = X.clone()
        X2[p] = float("nan")
        if not torch.isfinite(attn_fn(X2)[:p]).all() or not torch.isfinite(Y).all():
            return False
    return True


def _skips_the_output_just_before(attn_fn, T=8, d=4, seed=0):
    """Compares outputs 0 … p-2 only: blind to a query that reads the very next key."""
    return _perturbs(attn_fn, T, d, seed, range(2, T), compared=lambda p: slice(None, p - 1), equal_nan=True)


# What a student could write after studying the functions that `check` hands out: recognise the
# correct ones by their bytecode (unwrapping the recorder) and call the rest non-causal.
_CORRECT_CODE = {bugs02.compile_impl(name, wseed).__code__.co_code
                 for name in ("attention", "position_wise", "prefix_mean") for wseed in (0, 987654)}


def _fingerprint(attn_fn, T=8, d=4, seed=0):
    attn_fn(torch.randn(T, d))  # one call, to look busy
    inner = [cell.cell_contents for cell in (attn_fn.__closure__ or ()) if hasattr(cell.cell_contents, "__code__")]
    return (inner[0] if inner else attn_fn).__code__.co_code in _CORRECT_CODE


def _never_calls(attn_fn, T=8, d=4, seed=0):
    inner = [cell.cell_contents for cell in (attn_fn.__closure__ or ()) if hasattr(cell.cell_contents, "__code__")]
    return (inner[0] if inner else attn_fn).__code__.co_code in _CORRECT_CODE


def _loose(attn_fn, T=8, d=4, seed=0, atol=1e-3, rtol=0.0):
    """The lab's perturbation test with another tolerance."""
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    Y = attn_fn(X)
    if not torch.isfinite(Y).all():
        return False
    for p in range(1, T):
        X2 = X.clone()
        X2[p] = torch.randn(d, generator=g)
        Y2 = attn_fn(X2)
        if not torch.isfinite(Y2).all() or not torch.allclose(Y2[:p], Y[:p], atol=atol, rtol=rtol):
            return False
    return True


TEST_SLIPS = [
    ("always_true", lambda attn_fn, T=8, d=4, seed=0: True, 0, "says True (causal) for every function",
     "dice True (causal) para todas las funciones"),
    ("always_false", lambda attn_fn, T=8, d=4, seed=0: False, 0, "says False (not causal) for every function",
     "dice False (no causal) para todas las funciones"),
    ("missed_positions", _last_only, 4, "misses leaks that only some positions reveal",
     "no ve fugas que solo revelan algunas posiciones"),
    ("crashes_on_nan", _asserting_finite, 4, "raised an error on a function whose output contains NaN",
     "lanzó un error con una función cuya salida contiene NaN"),
    ("raises_on_bug", _assert_close, 0, "raised an error (or did not finish) on a buggy function instead of returning False",
     "lanzó un error (o no terminó) con una función defectuosa"),
    ("no_evidence", _fingerprint, 0, "recognising a function by its code earns nothing",
     "reconocer una función por su código no da puntos"),
    ("flags_correct", _demands_later_change, 0, "It does not require outputs at or after p to change",
     "No exige que cambien las salidas en p o después"),
    ("nan_perturbation", _nan_poison, 0, "perturbing with NaN", "perturbar con NaN"),
    ("missed_bugs", _skips_the_output_just_before, 3, "It passed 3 of 5 checks. Missed:\n• mask off by one",
     "Superó 3 de 5 comprobaciones."),
    ("tolerance_too_loose", lambda attn_fn, T=8, d=4, seed=0: _loose(attn_fn, T, d, seed, atol=1e-3), 4,
     "catches every leak but a faint one", "detecta todas las fugas menos una débil"),
]


@pytest.mark.parametrize("diagnosis,function,points,english,spanish", TEST_SLIPS, ids=[s[0] for s in TEST_SLIPS])
def test_each_weak_perturbation_test_is_named_in_two_languages(diagnosis, function, points, english, spanish):
    result = grade(with_("perturbation_test", function), exercise="perturbation_test")["perturbation_test"]
    assert result.status == "failed", result.render("en")
    assert result.diagnosis == diagnosis, result.render("en")
    assert result.points == points
    assert english in result.render("en"), result.render("en")
    assert spanish in result.render("es"), result.render("es")
    assert "(See chapter 0" in result.render("en")


def test_feedback_names_the_bugs_a_test_missed():
    result = grade(with_("perturbation_test", _last_only), exercise="perturbation_test")["perturbation_test"]
    # one missed check a line, each a bullet; the positions in the plural form ("position 3" alone)
    assert "It passed 4 of 5 checks. Missed:\n• a single leak at each of the positions 1, 2, 3, 4:" in result.render("en")
    assert "Nicht bestanden:\n• je ein einzelnes Leck an den Positionen 1, 2, 3, 4" in result.render("de")
    assert "(s)" not in result.render("en") and "(en)" not in result.render("de")
    assert "no mask" not in result.render("en")
    result = grade(with_("perturbation_test", _demands_later_change), exercise="perturbation_test")[
        "perturbation_test"]
    assert "• a position-wise function" in result.render("en")


def test_weak_tests_stay_weak_on_the_hidden_cases():
    for seed in range(3):
        result = grade(with_("perturbation_test", _last_only), exercise="perturbation_test", seed=seed)[
            "perturbation_test"]
        assert result.diagnosis == "missed_positions" and result.points == 4


@pytest.mark.parametrize("skipped", range(1, 6))  # every position of the public T = 6
def test_skipping_any_single_position_loses_a_point(skipped):
    """The reviewer's weak test perturbed only T//2 and T-1; any one position left out must cost."""
    def skips_one(attn_fn, T=8, d=4, seed=0):
        return _perturbs(attn_fn, T, d, seed, [p for p in range(1, T) if p != skipped], finite=True)

    for seed in (None, 3):
        result = grade(with_("perturbation_test", skips_one), exercise="perturbation_test", seed=seed)[
            "perturbation_test"]
        assert result.points == 4 and result.diagnosis == "missed_positions", result.render("en")
        assert str(skipped) in result.render("en")


def test_the_reviewers_two_position_test_loses_a_point():
    def two_positions(attn_fn, T=8, d=4, seed=0):
        return _perturbs(attn_fn, T, d, seed, (T // 2, T - 1), finite=True)

    for seed in (None, 0, 1):
        result = grade(with_("perturbation_test", two_positions), exercise="perturbation_test", seed=seed)[
            "perturbation_test"]
        assert result.points == 4 and result.diagnosis == "missed_positions"


def test_nan_is_a_defect_not_a_leak():
    """A test blind to NaN (or comparing with equal_nan=True) is right: a NaN output is not a leak."""
    def literal(attn_fn, T=8, d=4, seed=0):
        return _perturbs(attn_fn, T, d, seed, range(1, T), equal_nan=True)

    for function in (_no_finite_check, literal):
        for seed in (None, 2):
            result = grade(with_("perturbation_test", function), exercise="perturbation_test", seed=seed)[
                "perturbation_test"]
            assert result.status == "passed" and result.points == 5, result.render("en")


@pytest.mark.parametrize("cheat", [_fingerprint, _never_calls])
def test_a_test_that_reads_code_earns_no_more_than_return_true(cheat):
    return_true = grade(with_("perturbation_test", lambda attn_fn, T=8, d=4, seed=0: True),
                        exercise="perturbation_test", seed=4)["perturbation_test"]
    result = grade(with_("perturbation_test", cheat), exercise="perturbation_test", seed=4)["perturbation_test"]
    assert result.points <= return_true.points == 0
    assert result.diagnosis == "no_evidence", result.render("en")


def test_a_jacobian_read_off_the_code_earns_nothing():
    def pattern_without_calling(attn_fn, T=6, d=4):
        return torch.ones(T, T, dtype=torch.bool).tril()

    result = grade(with_("jacobian_leaks", pattern_without_calling), exercise="jacobian_leaks")["jacobian_leaks"]
    assert result.points == 0 and result.diagnosis == "no_evidence"


@pytest.mark.parametrize("variant", ["leaks_only", "jacrev", "vectorized"])
def test_right_jacobian_variants_get_full_marks(variant):
    def leaks(attn_fn, T=6, d=4):
        X = torch.randn(T, d, generator=torch.Generator().manual_seed(0))
        if variant == "jacrev":
            J = torch.func.jacrev(attn_fn)(X)
        else:
            J = torch.autograd.functional.jacobian(attn_fn, X, vectorize=variant == "vectorized")
        pattern = J.abs().amax(dim=(1, 3)) > 0  # (T, T)
        return pattern.triu(1) if variant == "leaks_only" else pattern  # the leaks alone, as the name suggests

    for seed in (None, 1):
        result = grade(with_("jacobian_leaks", leaks), exercise="jacobian_leaks", seed=seed)["jacobian_leaks"]
        assert result.status == "passed" and result.points == 3, result.render("en")


# ---------------------------------------------------------------- jacobian_leaks
def _forward_pattern(attn_fn, T=6, d=4):
    """Leaks seen by perturbing the forward pass: misses what lives only in the gradient."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(T, d, generator=g)
    Y = attn_fn(X)
    pattern = torch.zeros(T, T, dtype=torch.bool)
    for j in range(T):
        X2 = X.clone()
        X2[j] = torch.randn(d, generator=g)
        pattern[:, j] = (attn_fn(X2) - Y).abs().amax(dim=-1) > 0
    return pattern


def _thresholded(threshold, summed=False):
    def jacobian_leaks(attn_fn, T=6, d=4):
        X = torch.randn(T, d, generator=torch.Generator().manual_seed(0))
        J = torch.autograd.functional.jacobian(attn_fn, X).abs()  # (T, d, T, d)
        return (J.sum(dim=(1, 3)) if summed else J.amax(dim=(1, 3))) > threshold

    return jacobian_leaks


JACOBIAN_SLIPS = [
    ("jacobian_transposed", lambda attn_fn, T=6, d=4: jacobian_leaks(attn_fn, T, d).T, "your pattern is transposed",
     "tu patrón está traspuesto"),
    ("gradient_leak_missed", _forward_pattern, "not the one that lives only in the gradient",
     "no la que solo está en el gradiente"),
    ("threshold_too_high",
     lambda attn_fn, T=6, d=4: torch.autograd.functional.jacobian(
         attn_fn, torch.randn(T, d, generator=torch.Generator().manual_seed(0))).abs().amax(dim=(1, 3)) > 0.05,
     "you missed weak dependencies", "se te escaparon dependencias débiles"),
    ("no_evidence", lambda attn_fn, T=6, d=4: torch.ones(T, T, dtype=torch.bool).tril(),
     "without calling the function it was given", "sin llamar a la función recibida"),
    ("wrong_values", lambda attn_fn, T=6, d=4: (attn_fn(torch.randn(T, d)), torch.ones(T, T, dtype=torch.bool).tril())[1],
     "entry (1, 0) of your pattern is True, which is wrong for this function: • a position-wise function",
     "la entrada (1, 0) de tu patrón es True"),
]


@pytest.mark.parametrize("diagnosis,function,english,spanish", JACOBIAN_SLIPS, ids=[s[0] for s in JACOBIAN_SLIPS])
def test_each_jacobian_slip_is_named_in_two_languages(diagnosis, function, english, spanish):
    result = grade(with_("jacobian_leaks", function), exercise="jacobian_leaks")["jacobian_leaks"]
    assert result.status == "failed" and result.points == 0
    assert result.diagnosis == diagnosis, result.render("en")
    assert english in result.render("en"), result.render("en")
    assert spanish in result.render("es"), result.render("es")


def test_every_diagnosis_of_lab02_is_covered_here():
    named = {(exercise.id, name) for exercise in lab02.EXERCISES for name in exercise.diagnosis_names()}
    covered = ({("causal_attention", d) for d, *_ in ATTENTION_SLIPS}
               | {("perturbation_test", d) for d, *_ in TEST_SLIPS}
               | {("jacobian_leaks", d) for d, *_ in JACOBIAN_SLIPS if d != "wrong_values"})
    assert named == covered


def test_the_issue_diagnoses_exist():
    named = {name for exercise in lab02.EXERCISES for name in exercise.diagnosis_names()}
    for wanted in ("forgot_scale", "mask_after_softmax", "wrong_axis", "always_true", "always_false",
                   "missed_positions", "crashes_on_nan", "diagonal_masked", "no_evidence"):
        assert wanted in named


# ---------------------------------------------------------------- the buggy implementations themselves
def _worker_function(impl, wseed=0):
    """The callable the student's test receives, built the way the sandboxed worker builds it."""
    return decode_arg(bugs02.as_arg(impl, wseed))


IMPLS = [impl.name for impl in bugs02.IMPLS]


def test_the_issue_bugs_exist():
    assert {impl.name for impl in bugs02.PERTURBATION if not impl.forward_causal} == {
        "no_mask", "off_by_one", "mask_after_softmax", "diagonal_masked"}
    exercise = lab02.LAB.exercise("perturbation_test")
    for seed in (None, 5):
        cases = exercise.cases({}, seed)
        for public in (True, False):
            group = [c for c in cases if c.public == public and c.data.get("base") == bugs02.POSITION_LEAK]
            if group:
                T = group[0].data["kwargs"]["T"]
                assert sorted(c.data["key"] for c in group) == list(range(1, T))  # one leak per p = 1 … T-1
    assert {impl.name for impl in bugs02.PERTURBATION if impl.forward_causal} == {
        "attention", "position_wise", "prefix_mean"}
    assert "gradient_leak" in {impl.name for impl in bugs02.JACOBIAN}


@pytest.mark.parametrize("name", IMPLS)
def test_functions_do_not_say_which_bug_they_have(name):
    f = _worker_function(name)
    assert f.__name__ == "attn_fn" and f.__doc__ is None
    assert bugs02.as_arg(name)["name"] == "attn_fn"


@pytest.mark.parametrize("name", [n for n in IMPLS if n != "attention"])
def test_every_function_differs_from_correct_attention(name):
    X = torch.randn(8, 4, generator=torch.Generator().manual_seed(3))
    X.requires_grad_(True)
    reference, other = _worker_function("attention", 5), _worker_function(name, 5)
    if name == "gradient_leak":  # same forward pass value class (causal), different gradient
        J_ref = torch.autograd.functional.jacobian(reference, X)
        J = torch.autograd.functional.jacobian(other, X)
        assert not torch.equal(J_ref.abs().amax(dim=(1, 3)) > 0, J.abs().amax(dim=(1, 3)) > 0)
    elif bugs02.BY_NAME[name].faint:  # small by design: differs, but by less than a loose tolerance
        assert not torch.equal(reference(X), other(X))
        assert torch.allclose(reference(X), other(X), atol=1e-3)
    else:
        assert not torch.allclose(reference(X), other(X), atol=1e-3, equal_nan=False)


@pytest.mark.parametrize("name", IMPLS)
@pytest.mark.parametrize("T,d,wseed", [(8, 4, 0), (6, 2, 11), (10, 6, 12345), (5, 3, 7)])
def test_perturbation_behaviour_is_what_the_function_claims(name, T, d, wseed):
    """Forward-causal functions never move earlier outputs (bit for bit); bugs do, by far more than 1e-5."""
    impl = bugs02.BY_NAME[name]
    f = _worker_function(name, wseed)
    g = torch.Generator().manual_seed(T * 100 + d)
    X = torch.randn(T, d, generator=g)
    Y = f(X)
    assert bool(torch.isfinite(Y).all()) == (name != "diagonal_masked")
    largest = 0.0
    for p in range(1, T):
        X2 = X.clone()
        X2[p] = torch.randn(d, generator=g)
        Y2 = f(X2)
        if impl.forward_causal:
            assert torch.equal(Y[:p], Y2[:p]), (name, p)
        elif name != "diagonal_masked":
            largest = max(largest, float((Y[:p] - Y2[:p]).abs().max()))
    if impl.faint:  # the tiny (Jacobian) leak moves the forward pass too, far below a perturbation tolerance
        assert 0 < largest < 1e-3, (name, largest)
        return
    if not impl.forward_causal and name != "diagonal_masked":
        assert largest > 1e-3, (name, largest)
    assert perturbation_test(f, T, d, seed=wseed) == impl.forward_causal


@pytest.mark.parametrize("name", [impl.name for impl in bugs02.JACOBIAN])
@pytest.mark.parametrize("T,d,wseed", [(6, 4, 0), (6, 2, 0), (4, 2, 3), (7, 3, 99), (8, 4, 2024)])
def test_dependence_pattern_is_what_autograd_sees(name, T, d, wseed):
    impl = bugs02.BY_NAME[name]
    f = _worker_function(name, wseed)
    for x_seed in range(3):
        X = torch.randn(T, d, generator=torch.Generator().manual_seed(x_seed))
        blocks = torch.autograd.functional.jacobian(f, X).abs().amax(dim=(1, 3))  # (T, T)
        assert np.array_equal((blocks > 0).numpy(), impl.pattern(T)), (name, x_seed)
        assert np.array_equal((blocks > 1e-8).numpy(), impl.pattern(T)), "no entry of the pattern is tiny"


def test_the_gradient_leak_is_invisible_to_the_forward_pass():
    f = _worker_function("gradient_leak", 4)
    assert perturbation_test(f) is True
    assert not _forward_pattern(f).triu(diagonal=1).any()
    assert jacobian_leaks(f).all()


def test_a_correct_perturbation_test_flags_every_bug_and_passes_every_correct_function():
    for seed in range(5):
        for impl in bugs02.PERTURBATION:
            f = _worker_function(impl, wseed=seed * 31 + 1)
            assert perturbation_test(f, T=8 + seed % 3, d=2 + seed, seed=seed) == impl.forward_causal, impl.name


@pytest.mark.parametrize("query,key", [(0, 1), (0, 7), (3, 4), (2, 6), (6, 7)])
def test_a_position_leak_is_seen_only_by_perturbing_its_position(query, key):
    f = _worker_function(bugs02.position_leak(query, key), wseed=3)
    X = torch.randn(8, 4, generator=torch.Generator().manual_seed(1))
    for p in range(8):
        X2 = X.clone()
        X2[p] += 1.0
        moved = (f(X2) - f(X)).abs().amax(dim=-1)[:p] > 1e-6  # (p,): earlier outputs that moved
        assert moved.nonzero().flatten().tolist() == ([query] if p == key else [])


def test_a_last_position_test_misses_the_single_position_leaks_only():
    missed = {impl.name for impl in bugs02.PERTURBATION if not impl.forward_causal and _last_only(_worker_function(impl))}
    assert missed == set()
    assert not _last_only(_worker_function(bugs02.position_leak(2, 7)))
    assert _last_only(_worker_function(bugs02.position_leak(2, 5)))


def test_a_test_that_hangs_on_one_bug_loses_that_bug_only():
    exercise = lab02.LAB.exercise("perturbation_test")
    cases = exercise.cases({})
    outputs = [run_call(RIGHT, case.call) for case in cases]  # a correct test, with its recorded calls
    names = [c.data["impl"] for c in cases]
    outputs[names.index("off_by_one")] = {"timeout": True}
    result = exercise.judge({}, cases, outputs)
    assert result.points == 4 and result.diagnosis == "raises_on_bug"
    assert "• mask off by one" in result.render("en")
    outputs[names.index("attention")] = {"timeout": True}
    result = exercise.judge({}, cases, outputs)
    assert result.status == "timeout" and result.points == 0
    assert result.feedback == [Feedback("common.timeout", {"name": "perturbation_test", "case": "perturbation_test(attention)",
                                                           "type": "", "message": ""})]  # a time-out has no error
    assert "did not finish in time on the case perturbation_test(attention)" in result.render("en")


# ---------------------------------------------------------------- review: probes a student could appeal
def _scaled_by_d_v(Q, K, V):
    """Scales by √d_v: right whenever d_v = d_k, which the only public (T, d) case has."""
    T = Q.shape[-2]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(V.shape[-1])
    weights = torch.softmax(scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf")), dim=-1)
    return weights @ V, weights


@pytest.mark.parametrize("seed", range(4))
def test_batch_dims_is_claimed_only_when_every_unbatched_case_passes(seed):
    """A slip that a batched case happens to show first is not "it works for (T, d) inputs"."""
    result = grade(with_("causal_attention", _scaled_by_d_v), exercise="causal_attention", seed=seed)[
        "causal_attention"]
    assert result.points == 0 and result.diagnosis != "batch_dims", result.render("en")
    assert "batch dimensions" not in result.render("en")
    assert "Batch-Dimensionen" not in result.render("de") and "dimensiones de batch" not in result.render("es")


def test_an_answer_kept_by_shape_fails_the_hidden_cases_whatever_the_seed():
    def cached(Q, K, V, _answers={}):
        key = (tuple(Q.shape), tuple(V.shape), Q.dtype)
        if key not in _answers:
            _answers[key] = causal_attention(Q, K, V)
        return _answers[key]

    for seed in range(6):
        result = grade(with_("causal_attention", cached), exercise="causal_attention", seed=seed)[
            "causal_attention"]
        assert result.points == 0, seed


def test_a_jacobian_by_torch_func_jacfwd_passes():
    """jacfwd runs the function's first call under vmap: the graded functions draw no random numbers there."""
    def by_jacfwd(attn_fn, T=6, d=4):
        X = torch.randn(T, d, generator=torch.Generator().manual_seed(0))
        return torch.func.jacfwd(attn_fn)(X).ne(0).any(dim=3).any(dim=1)  # (T, T)

    def by_jacrev(attn_fn, T=6, d=4):
        X = torch.randn(T, d, generator=torch.Generator().manual_seed(0))
        return torch.func.jacrev(attn_fn)(X).abs().amax(dim=(1, 3)) > 0  # (T, T)

    for function in (by_jacfwd, by_jacrev):
        for seed in (None, 0, 1):
            result = grade(with_("jacobian_leaks", function), exercise="jacobian_leaks", seed=seed)["jacobian_leaks"]
            assert result.status == "passed", result.render("en")


def test_a_test_that_calls_by_keyword_is_told_so_not_that_it_showed_no_evidence():
    """The grader records positional inputs only: the functions take X positionally, so a call X=... raises
    (a true diagnosis) instead of passing unrecorded and earning "no evidence"."""
    def by_keyword(attn_fn, T=8, d=4, seed=0):
        g = torch.Generator().manual_seed(seed)
        X = torch.randn(T, d, generator=g)
        Y = attn_fn(X=X)
        for p in range(1, T):
            X2 = X.clone()
            X2[p] = torch.randn(d, generator=g)
            if not torch.allclose(attn_fn(X=X2)[:p], Y[:p], atol=1e-5):
                return False
        return True

    result = grade(with_("perturbation_test", by_keyword), exercise="perturbation_test")["perturbation_test"]
    assert result.status == "error" and result.diagnosis != "no_evidence"
    assert "raised TypeError" in result.render("en") and "positional" in result.render("en")


def test_a_test_of_a_fixed_size_loses_the_hidden_sweep_whatever_the_seed():
    """Ignoring T (perturbing the public T = 6 positions) must cost the sweep for every seed, not some."""
    def six_positions(attn_fn, T=8, d=4, seed=0):
        return perturbation_test(attn_fn, 6, d, seed)

    def six_by_six(attn_fn, T=6, d=4):
        return jacobian_leaks(attn_fn, 6, d)

    for seed in range(8):
        result = grade(with_("perturbation_test", six_positions), exercise="perturbation_test", seed=seed)[
            "perturbation_test"]
        assert result.points == 4 and result.diagnosis == "missed_positions", (seed, result.render("en"))
        result = grade(with_("jacobian_leaks", six_by_six), exercise="jacobian_leaks", seed=seed)["jacobian_leaks"]
        assert result.points == 0, seed


def test_a_thorough_test_with_many_trials_keeps_its_evidence():
    """Five fresh rows per position at T = 8: over a hundred calls, all of them evidence."""
    def thorough(attn_fn, T=8, d=4, seed=0):
        g = torch.Generator().manual_seed(seed)
        for p in range(1, T):
            for _ in range(5):
                X = torch.randn(T, d, generator=g)
                X2 = X.clone()
                X2[p] = torch.randn(d, generator=g)
                Y, Y2 = attn_fn(X), attn_fn(X2)
                if not torch.isfinite(Y).all() or not torch.allclose(Y[:p], Y2[:p], atol=1e-5):
                    return False
        return True

    for seed in (None, 4):
        result = grade(with_("perturbation_test", thorough), exercise="perturbation_test", seed=seed)[
            "perturbation_test"]
        assert result.status == "passed" and result.points == 5, result.render("en")


# ---------------------------------------------------------------- leaks too small for a loose tolerance
@pytest.mark.parametrize("query,key", [(0, 1), (0, 2), (2, 5), (4, 7)])
def test_the_faint_leak_is_far_above_rounding_and_below_a_loose_tolerance(query, key):
    f = _worker_function(bugs02.faint_leak(query, key), wseed=5)
    reference = _worker_function("attention", wseed=5)
    g = torch.Generator().manual_seed(query * 10 + key)
    for d in (2, 4, 6):
        for _ in range(30):
            X = torch.randn(8, d, generator=g)
            X2 = X.clone()
            X2[key] = torch.randn(d, generator=g)
            moved = (f(X2) - f(X)).abs().amax(dim=-1)  # (T,)
            assert moved[query] < 1e-3  # a loose tolerance never sees it
            assert torch.equal(moved[:key][torch.arange(key) != query], torch.zeros(key - 1))
            assert torch.equal(f(X)[torch.arange(8) != query], reference(X)[torch.arange(8) != query])
    X = torch.randn(8, 4, generator=torch.Generator().manual_seed(0))
    X2 = X.clone()
    X2[key] += 1.0
    assert (f(X2) - f(X)).abs()[query].max() > 5e-5  # float32 rounding here is ~1e-7


def _exact(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    Y = attn_fn(X)
    for p in range(1, T):
        X2 = X.clone()
        X2[p] = torch.randn(d, generator=g)
        if not torch.equal(attn_fn(X2)[:p], Y[:p]):
            return False
    return True


def _batched(attn_fn, T=8, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(T, d, generator=g)
    Xs = X.repeat(T, 1, 1)  # (T, T, d): copy p has row p replaced
    Xs[torch.arange(T), torch.arange(T)] = torch.randn(T, d, generator=g)
    Y, Ys = attn_fn(X), attn_fn(Xs)
    before = torch.arange(T)[None, :] < torch.arange(T)[:, None]  # (T, T): position t < p
    diff = (Ys - Y).abs().amax(-1)  # (T, T)
    return bool(torch.isfinite(Y).all()) and not bool((diff[before] > 1e-5).any())


@pytest.mark.parametrize("honest", [perturbation_test, _exact, _batched,
                                    lambda attn_fn, T=8, d=4, seed=0: _loose(attn_fn, T, d, seed, 1e-5, 1e-5)],
                         ids=["lab-solution", "torch.equal", "one-batched-call", "allclose-default-rtol"])
def test_honest_perturbation_tests_catch_the_faint_leak(honest):
    """technical-2 (c)'s correct alternatives keep full marks with the faint leak in the sweep."""
    for seed in (None, 2):
        result = grade(with_("perturbation_test", honest), exercise="perturbation_test", seed=seed)[
            "perturbation_test"]
        assert result.status == "passed" and result.points == 5, result.render("en")


@pytest.mark.parametrize("atol", [1e-3, 1e-2])
def test_a_loose_perturbation_test_loses_the_sweep_to_the_faint_leak(atol):
    """Issue 21: a perturbation test comparing within 1e-3 got 5/5; it misses a leak below its tolerance."""
    def loose(attn_fn, T=8, d=4, seed=0):
        return _loose(attn_fn, T, d, seed, atol=atol)

    for seed in (None, 3):
        result = grade(with_("perturbation_test", loose), exercise="perturbation_test", seed=seed)[
            "perturbation_test"]
        assert (result.points, result.diagnosis) == (4, "tolerance_too_loose"), result.render("en")
    faint = next(c for c in lab02.LAB.exercise("perturbation_test").cases({}) if c.data.get("base") == "faint_leak")
    query, key = faint.data["query"], faint.data["key"]
    assert f"a faint leak: output {query} also reads key {key}, but moves by less than 1e-3" in result.render("en")
    assert f"ein schwaches Leck: Ausgabe {query} liest zusätzlich Key {key}" in result.render("de")


def test_the_tiny_leak_has_exact_jacobian_entries_far_above_rounding():
    f = _worker_function("tiny_leak", wseed=3)
    for dtype, d in ((torch.float32, 2), (torch.float32, 4), (torch.float64, 3)):
        X = torch.randn(6, d, dtype=dtype, generator=torch.Generator().manual_seed(d))
        J = torch.autograd.functional.jacobian(f, X)  # (T, d, T, d)
        assert torch.equal(J[0, :, 5, :], torch.eye(d, dtype=dtype) * 2.0 ** -17)  # ~7.6e-6, exactly
        blocks = J.abs().amax(dim=(1, 3))
        assert (blocks[blocks > 0] >= 2.0 ** -17).all()  # nothing in the pattern is smaller


@pytest.mark.parametrize("threshold,summed", [(1e-3, False), (1e-4, False), (1e-4, True), (1e-2, True)])
def test_a_jacobian_thresholded_at_1e_4_or_more_loses_its_points(threshold, summed):
    """instructor-2 problem 14: `> 1e-3` earned 3/3 though the lab says "test for non-zero, not for large"."""
    for seed in (None, 1):
        result = grade(with_("jacobian_leaks", _thresholded(threshold, summed)), exercise="jacobian_leaks",
                       seed=seed)["jacobian_leaks"]
        assert (result.points, result.diagnosis) == (0, "threshold_too_high"), result.render("en")


@pytest.mark.parametrize("threshold,summed", [(0.0, False), (1e-8, False), (1e-6, True), (1e-6, False)],
                         ids=["non-zero", "above-1e-8", "chapter-07-sum-above-1e-6", "above-1e-6"])
def test_a_jacobian_that_tests_for_non_zero_keeps_its_points(threshold, summed):
    for seed in (None, 1):
        result = grade(with_("jacobian_leaks", _thresholded(threshold, summed)), exercise="jacobian_leaks",
                       seed=seed)["jacobian_leaks"]
        assert result.status == "passed" and result.points == 3, result.render("en")


def test_off_by_one_weights_are_counted_as_their_own_mistake():
    """instructor-2: four students' triu(diagonal=2) masks were reported as the generic future_weight."""
    exercise = lab02.LAB.exercise("causal_attention")
    assert "off_by_one" in exercise.diagnosis_names() and exercise.sections["off_by_one"] == "08 §4"
    result = grade(with_("causal_attention", lambda Q, K, V: _attention(Q, K, V, mask="next_key_open")),
                   exercise="causal_attention")["causal_attention"]
    assert (result.points, result.diagnosis) == (0, "off_by_one")
    assert "(See chapter 08 §4.)" in result.render("en")
    assert "future_weight" not in str(result.feedback)


# ---------------------------------------------------------------- the judges' edges, case by case
# Mutation testing (tests/mutation) found these choices of the judges untested: which inputs a case
# is judged against, the limits of every tolerance, the parameters of each message.
CAUSAL = lab02.LAB.exercise("causal_attention")
PERTURBATION = lab02.LAB.exercise("perturbation_test")
JACOBIAN = lab02.LAB.exercise("jacobian_leaks")


def _causal_weights(Q, K):
    """The right weights for numpy inputs, from the correct student at the top (torch, float64)."""
    Q, K = torch.tensor(Q, dtype=torch.float64), torch.tensor(K, dtype=torch.float64)
    return causal_attention(Q, K, K)[1].numpy()


def _attention_case(lead, T, dk, dv, seed=0):
    """A float32 case laid out as CausalAttention.cases lays them out (inputs with four decimals)."""
    rng = np.random.default_rng(seed)
    Q, K, V = (np.round(rng.normal(size=(*lead, T, n)), 4) for n in (dk, dk, dv))
    return Case(f"T = {T}", {}, data={"Q": Q.tolist(), "K": K.tolist(), "V": V.tolist(), "batched": bool(lead),
                                      "dtype": "float32"})


def _right_answer(case):
    """(out, weights) in float64 for the float32 inputs the student's code received."""
    Q, K, V = (np.asarray(case.data[name], dtype=np.float32).astype(float) for name in "QKV")
    weights = _causal_weights(Q, K)
    return weights @ V, weights


def _judge_one(case, out, weights):
    return CAUSAL.judge_one(case, (Array(np.asarray(out, dtype=float), "float32"),
                                   Array(np.asarray(weights, dtype=float), "float32")))


def test_attention_cases_are_named_by_their_shapes_and_the_hidden_ones_stay_hidden():
    cases = CAUSAL.cases({}, seed=3)
    assert [c.name for c in cases[:3]] == ["Q, K (4, 3), V (4, 3)", "Q, K (2, 2, 5, 4), V (2, 2, 5, 3)",
                                           "Q, K (1, 6, 8), V (1, 6, 2)"]
    assert cases[3].name == "Q, K (1, 3), V (1, 2)"  # the first hidden shape: T = 1
    assert all(c.public is True for c in cases[:3])
    # Nine fixed hidden shapes and two drawn ones. The engine runs the cases with `case.public == public`
    # for True, then False: a hidden case must be False, not merely falsy.
    assert len(cases) == 3 + 9 + 2 and all(c.public is False for c in cases[3:])
    float64 = [c.name for c in cases if c.call["args"][0]["dtype"] == "float64"]
    assert float64 == ["Q, K (7, 5), V (7, 4), float64", "Q, K (2, 6, 3), V (2, 6, 3), float64"]
    assert sum("float" in c.name for c in cases) == 2  # float32, the usual dtype, goes unsaid


def test_attention_inputs_have_four_decimals():
    cases = [c for seed in (1, 2) for c in CAUSAL.cases({}, seed)]
    for name in "QKV":
        scaled = np.concatenate([np.ravel(c.data[name]) for c in cases]) * 1e4
        assert np.allclose(scaled, np.round(scaled), rtol=0, atol=1e-6), name  # no fifth decimal
        assert np.mean(np.round(scaled) % 10 != 0) > 0.5, name  # and the fourth is used


def test_the_drawn_attention_shapes_cover_their_ranges_and_scales():
    drawn = [c for seed in range(200) for c in CAUSAL.cases({}, seed)[12:]]  # the two drawn shapes per seed
    Q, K, V = ([np.asarray(c.data[name]) for c in drawn] for name in "QKV")
    assert {q.ndim - 2 for q in Q} == {0, 1, 2}  # leading dims
    assert {n for q in Q for n in q.shape[:-2]} == {1, 2, 3}
    assert {q.shape[-2] for q in Q} == set(range(2, 9))  # T
    assert {q.shape[-1] for q in Q} == set(range(1, 9))  # d_k
    assert {v.shape[-1] for v in V} == set(range(1, 6))  # d_v

    def rms(arrays):
        return float(np.sqrt(np.mean(np.concatenate([a.ravel() for a in arrays]) ** 2)))

    # Q and K are scaled by s ~ U(0.8, 1.6), V is not: √E[s²] = √((1.6³ - 0.8³) / (3 · 0.8)) = √1.493 = 1.22
    assert 1.1 < rms(Q) / rms(V) < 1.35 and 1.1 < rms(K) / rms(V) < 1.35
    # The first two entries of Q are the first two normal draws of the case's own seed, times s: their
    # direction tells the draws apart. 400 cases show ~390 directions; seeds from a small set would show few.
    angles = np.sort([np.arctan2(q.ravel()[1], q.ravel()[0]) for q in Q])
    assert 1 + np.sum(np.diff(angles) > 1e-3) > 300


def test_a_fixed_hidden_shape_gets_new_values_at_its_scale_for_every_seed():
    fixed = [CAUSAL.cases({}, seed)[5] for seed in range(200)]  # ((), 5, 1, 2), Q and K at scale 2.0
    assert fixed[0].name == "Q, K (5, 1), V (5, 2)"
    assert len({json.dumps(c.data["Q"]) for c in fixed}) == 200
    for name in "QK":  # RMS of 1000 draws of N(0, 2²): 2 within ±5 %
        assert 1.8 < np.sqrt(np.mean(np.concatenate([np.ravel(c.data[name]) for c in fixed]) ** 2)) < 2.2


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_weights_are_judged_against_the_inputs_the_student_received(dtype):
    """A float64 case against its float64 inputs, a float32 case against the float32 tensors the student's
    code got: the two references differ by ~1e-8, which decides an answer just inside the tolerance."""
    case = next(c for c in CAUSAL.cases({}, seed=0) if c.call["args"][0]["dtype"] == dtype)
    exact = {name: np.asarray(case.data[name], dtype=float) for name in "QKV"}
    rounded = {name: exact[name].astype(np.float32).astype(float) for name in "QKV"}
    received, other = (rounded, exact) if dtype == "float32" else (exact, rounded)
    right = _causal_weights(received["Q"], received["K"])
    gap = _causal_weights(other["Q"], other["K"]) - right
    index = np.unravel_index(np.argmax(np.abs(gap)), gap.shape)
    assert abs(gap[index]) > 1e-10
    out = right @ received["V"]
    for offset, passes in ((lab02.ATOL - abs(gap[index]) / 2, True), (lab02.ATOL + abs(gap[index]) / 2, False)):
        weights = right.copy()
        weights[index] -= np.sign(gap[index]) * offset  # away from the other reference
        result = CAUSAL.judge_one(case, (Array(out, "float64"), Array(weights, "float64")))
        assert (result is None) == passes, (offset, result)


def test_weights_and_slips_take_d_k_from_the_last_axis_with_batch_dims():
    rng = np.random.default_rng(7)
    Q, K = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 5, 3))  # T = 5, d_k = 3
    right, slips = lab02.weights_and_slips(Q, K)
    tQ, tK = torch.tensor(Q), torch.tensor(K)
    np.testing.assert_allclose(right, causal_attention(tQ, tK, tK)[1].numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(dict(slips)["divided_by_dk"], _attention(tQ, tK, tK, scale=lambda d: d)[1].numpy(),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(dict(slips)["no_mask"], _attention(tQ, tK, tK, mask="none")[1].numpy(),
                               rtol=0, atol=1e-12)


def _wrong_containers():
    """(what the student returned, from the right (out, weights)) for T = 4, d_v = 3: never a named slip."""
    prefix_mean = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]
    return [
        ("three tensors", lambda out, w: (out, w, w)),
        ("two strings", lambda out, w: ("out", "weights")),
        ("the output twice", lambda out, w: (out, out)),  # the second is the output, but the first is not the weights
        ("swapped shapes, wrong values", lambda out, w: (prefix_mean, out)),
        ("weights cut", lambda out, w: (out, w[:, :3])),
    ]


@pytest.mark.parametrize("make", [m for _, m in _wrong_containers()], ids=[n for n, _ in _wrong_containers()])
def test_a_wrong_container_or_shape_is_named_as_such(make):
    case = _attention_case((), 4, 3, 3)
    got = tuple(Array(np.asarray(x, dtype=float), "float32") if not isinstance(x, str) else x
                for x in make(*_right_answer(case)))
    result = CAUSAL.judge_one(case, got)
    assert result.diagnosis == "wrong_shape"
    assert [f.key for f in result.feedback] == ["common.failed", "common.wrong_type"]
    assert result.feedback[1].params["expected"].endswith("tuple(float (4, 3), float (4, 4))")


def test_one_and_two_token_cases_get_their_own_diagnoses():
    one = _attention_case((), 1, 3, 2)
    out, weights = _right_answer(one)  # weights [[1.0]]
    result = _judge_one(one, 0.9 * out, 0.9 * weights)  # every slip gives [[1]] at T = 1, or NaN
    assert result.diagnosis == "rows_not_normalised" and result.feedback[1].params == {"row": 0, "total": "0.9"}
    two = _attention_case((), 2, 2, 2, seed=1)
    out, weights = _right_answer(two)
    V = np.asarray(two.data["V"], dtype=np.float32).astype(float)
    diagonal = np.array([[np.nan, np.nan], [1.0, 0.0]])  # the diagonal masked too: query 0 has no key left
    assert _judge_one(two, diagonal @ V, diagonal).diagnosis == "diagonal_masked"
    assert _judge_one(two, weights.T @ V, weights).diagnosis == "weights_transposed"


@pytest.mark.parametrize("value,total", [(0.5, "0.5"), (np.inf, "inf"), (np.nan, "nan")])
def test_a_row_that_does_not_sum_to_1_is_named_with_its_sum(value, total):
    case = _attention_case((2,), 4, 3, 3)  # batch 1, query 2: row 2
    out, weights = _right_answer(case)
    weights = weights.copy()
    if value == 0.5:
        weights[1, 2] *= 0.5  # the row summed to 1
    else:
        weights[1, 2, 0] = value
    result = _judge_one(case, out, weights)
    assert result.diagnosis == "rows_not_normalised"
    assert result.feedback[1] == Feedback("lab02.rows_not_normalised", {"row": 2, "total": total})


@pytest.mark.parametrize("leak,named", [(1e-6, False), (2e-6, True)])
def test_a_weight_above_the_diagonal_is_named_from_just_above_1e_6(leak, named):
    case = _attention_case((2,), 4, 3, 3)
    out, weights = _right_answer(case)
    weights = weights.copy()
    weights[1, 0, :2] = [1.0 - leak, leak]  # batch 1: query 0 gives a little weight to key 1; the row sums to 1
    weights[0, 3, [0, 1]] = weights[0, 3, [1, 0]]  # and another row is wrong by far more than the tolerance
    result = _judge_one(case, out, weights)
    if named:
        assert result.diagnosis == "future_weight"
        assert result.feedback[1].params == {"i": 0, "j": 1, "value": "2e-06"}
    else:  # 1e-6 is rounding, not a weight: the wrong row is what is reported
        assert result.diagnosis == "wrong_values" and result.feedback[1].params["index"] == "0, 3, 0"


def test_a_wrong_output_entry_is_pointed_at():
    case = _attention_case((), 4, 3, 3)
    out, weights = _right_answer(case)
    out = out.copy()
    out[1, 2] += 0.1
    result = _judge_one(case, out, weights)
    assert result.diagnosis == "wrong_values" and result.feedback[1].params["index"] == "1, 2"


def test_batch_dims_replace_the_section_of_the_slip_they_explain():
    result = grade(with_("causal_attention", _mask_of_first_axis), exercise="causal_attention")["causal_attention"]
    assert [(f.key, f.params) for f in result.feedback] == [
        ("common.failed", {"name": "causal_attention"}), ("diagnosis.no_mask", {}), ("lab02.batch_dims", {}),
        ("common.see_section", {"section": "06 §1"})]


def test_batch_dims_need_a_working_unbatched_case():
    batched, unbatched = Case("b", {}, data={"batched": True}), Case("u", {}, data={"batched": False})
    error, ok = {"error": {"type": "RuntimeError", "message": ""}}, {"ok": None}
    assert lab02.CausalAttention.only_batched_fails([batched, unbatched], [error, ok], 0) is True
    assert lab02.CausalAttention.only_batched_fails([batched, unbatched], [error, error], 0) is False
    assert lab02.CausalAttention.only_batched_fails([batched, batched], [error, ok], 0) is False  # no (T, d) case


def _true_but_raises_on_nan(attn_fn, T=8, d=4, seed=0):
    """Says True for every function, and fails an assertion on the one whose output has NaN."""
    assert torch.isfinite(attn_fn(torch.randn(T, d))).all(), "NaN!"
    return True


@pytest.mark.parametrize("function,diagnosis,section,lists_nan_rule", [
    (lambda attn_fn, T=8, d=4, seed=0: True, "always_true", "07 §1", False),  # it answers NaN with a bool
    (_true_but_raises_on_nan, "crashes_on_nan", "08 §3", True),
    (_asserting_finite, "crashes_on_nan", "08 §3", True),
    (_last_only, "missed_positions", "07 §6", False),
], ids=["always-true", "true-but-raises-on-nan", "catches-all-but-raises-on-nan", "last-position-only"])
def test_a_weak_perturbation_test_is_sent_to_its_section(function, diagnosis, section, lists_nan_rule):
    result = grade(with_("perturbation_test", function), exercise="perturbation_test")["perturbation_test"]
    assert result.diagnosis == diagnosis, result.render("en")
    assert result.feedback[-1] == Feedback("common.see_section", {"section": section})
    assert ("lab02.impl.nan_rule" in [f.key for f in result.feedback]) == lists_nan_rule


def _hidden(exercise, seeds):
    return [[case for case in exercise.cases({}, seed) if not case.public] for seed in seeds]


def test_the_hidden_perturbation_cases_draw_their_size_seed_and_weights():
    hidden = _hidden(PERTURBATION, range(100))
    assert all(case.public is False for cases in hidden for case in cases)  # False, not falsy: see above
    kwargs = [cases[0].data["kwargs"] for cases in hidden]
    assert {k["T"] for k in kwargs} == {7}
    assert {k["d"] for k in kwargs} == set(range(2, 7))
    seeds = [k["seed"] for k in kwargs]
    assert min(seeds) >= 1 and len(set(seeds)) > 90  # never the signature's 0; ~99.5 distinct of 100 in 1 … 9999
    wseeds = [cases[0].data["wseed"] for cases in hidden]
    assert 0 not in wseeds and len(set(wseeds)) == 100  # the public functions' weights have wseed 0


def test_the_hidden_jacobian_cases_draw_their_leak_and_weights():
    hidden = _hidden(JACOBIAN, range(60))
    assert all(case.public is False for cases in hidden for case in cases)
    assert all(case.data["kwargs"] == {"T": 5, "d": 2} for cases in hidden for case in cases)
    assert {tuple(case.data["impl"].split("_")[0] for case in cases) for cases in hidden} == {("attention", "position")}
    leaks = [cases[1].data for cases in hidden]
    assert {leak["key"] for leak in leaks} == {1, 2, 3, 4}
    assert all(0 <= leak["query"] < leak["key"] for leak in leaks)
    wseeds = [cases[0].data["wseed"] for cases in hidden]
    assert 0 not in wseeds and len(set(wseeds)) == 60


@pytest.mark.parametrize("exercise", [PERTURBATION, JACOBIAN], ids=lambda e: e.id)
def test_a_hidden_case_names_its_arguments_and_hands_over_the_trusted_weights(exercise):
    for case in exercise.cases({}, seed=2):
        kwargs = case.data["kwargs"]
        if case.public:
            assert case.name == f"{exercise.id}({case.data['impl']})"
        else:
            assert case.name == f"{exercise.id}({case.data['impl']}, {kwargs})"
        X = torch.randn(kwargs["T"], kwargs.get("d", 4), generator=torch.Generator().manual_seed(1))
        given = decode_arg(case.call["args"][0])  # what the student's test receives
        trusted = bugs02.compile_impl(bugs02.impl_of(lab02._impl_data(case)), case.data["wseed"])
        torch.testing.assert_close(given(X), trusted(X), rtol=0, atol=0, equal_nan=True, msg=case.name)


def test_a_student_test_that_is_not_defined_earns_nothing():
    for name in ("perturbation_test", "jacobian_leaks"):
        namespace = dict(RIGHT)
        del namespace[name]
        result = grade(namespace, exercise=name)[name]
        assert (result.status, result.points) == ("missing", 0)


@pytest.mark.parametrize("shape,counts", [((6, 2), True), ((1, 6, 2), True), ((7, 2), False), ((6, 3), False),
                                          ((2,), False)])
def test_a_jacobian_counts_as_called_on_inputs_of_shape_t_by_d(shape, counts):
    case = JACOBIAN.cases({})[0]  # T = 6, d = 2
    assert lab02.JacobianLeaks.called(case, {"calls": [[np.zeros(shape)]]}) is counts


def test_a_jacobian_test_that_raises_is_reported_with_its_case():
    def raising(attn_fn, T=6, d=4):
        raise ValueError("no Jacobian today")

    result = grade(with_("jacobian_leaks", raising), exercise="jacobian_leaks")["jacobian_leaks"]
    assert (result.status, result.points) == ("error", 0)
    assert result.feedback == [Feedback("common.raised", {"name": "jacobian_leaks", "case": "jacobian_leaks(attention)",
                                                          "type": "ValueError", "message": "no Jacobian today"})]


def _jacobian_outputs(seed, answers):
    """The right test's outputs on every case, except `answers`: impl name -> the (T, T) pattern returned."""
    cases = JACOBIAN.cases({}, seed)
    outputs = []
    for case in cases:
        pattern = answers.get(case.data["impl"])
        namespace = RIGHT if pattern is None else {
            "jacobian_leaks": lambda attn_fn, T, d: (attn_fn(torch.zeros(T, d)), pattern)[1]}  # called, as evidence
        outputs.append(run_call(namespace, case.call))
    return cases, outputs


def test_part_of_a_gradient_leak_is_a_missed_weak_dependency():
    superdiagonal = torch.ones(6, 6, dtype=torch.bool).tril(1)  # the gradient leak reads every key: half found
    cases, outputs = _jacobian_outputs(None, {"gradient_leak": superdiagonal})
    assert JACOBIAN.judge({}, cases, outputs).diagnosis == "threshold_too_high"


def test_a_wrong_pattern_for_a_position_leak_names_its_query_and_key():
    leak = next(c for c in JACOBIAN.cases({}, 1) if c.data.get("base") == bugs02.POSITION_LEAK)
    wrong = torch.ones(5, 5, dtype=torch.bool).tril()
    wrong[0, 4] = True  # no function here reads key 4 from query 0
    cases, outputs = _jacobian_outputs(1, {leak.data["impl"]: wrong})
    result = JACOBIAN.judge({}, cases, outputs)
    assert result.diagnosis == "wrong_values"
    want = np.tril(np.ones((5, 5), dtype=bool))
    want[leak.data["query"], leak.data["key"]] = True  # the leak's own dependence
    first = tuple(int(i) for i in np.argwhere(wrong.numpy() != want)[0])
    assert result.feedback[1].params == {"case": leak.name, "i": first[0], "j": first[1],
                                         "got": str(bool(wrong[first]))}
    assert result.feedback[2] == Feedback("lab02.impl.position_leak",
                                          {"query": leak.data["query"], "key": leak.data["key"]})


def _witnessed(shape):
    """Whether a base input and a copy with row 1 of the time axis changed show no_mask's leak."""
    X = np.random.default_rng(0).normal(size=shape)
    X2 = X.copy()
    X2[..., 1, :] += 1.0  # output 0 reads key 1 without a mask
    return lab02.leak_witnessed(Case("c", {}, data={"impl": "no_mask", "wseed": 3}), {"calls": [[X, X2]]})


@pytest.mark.parametrize("shape,seen", [((64, 3), True), ((65, 3), False), ((4, 64), True), ((4, 65), False),
                                        ((1, 4, 65), False), ((1, 1, 4, 3), True), ((1, 1, 1, 4, 3), False)])
def test_the_trusted_rerun_takes_inputs_up_to_64_by_64_with_two_batch_dims(shape, seen):
    assert _witnessed(shape) is seen


def test_the_trusted_copies_are_kept_per_function_and_weights():
    X = torch.randn(5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    X2 = X.clone()
    X2[4] += 1.0
    no_mask = lab02._trusted(bugs02.BY_NAME["no_mask"], 1)
    attention = lab02._trusted(bugs02.BY_NAME["attention"], 1)
    assert not torch.equal(no_mask(X)[0], no_mask(X2)[0])  # output 0 reads key 4
    assert torch.equal(attention(X)[0], attention(X2)[0])
    assert not torch.allclose(attention(X), lab02._trusted(bugs02.BY_NAME["attention"], 2)(X))  # other weights
