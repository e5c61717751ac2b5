"""bugs02, the attention functions that grade lab02's student tests: the single-position leaks say truly
what they are (name, dependence pattern, causality, faintness, the exercises that use them), and
compile_impl, as_arg and source build, with their defaults, the very function the worker builds.

The functions of bugs02.IMPLS themselves are checked in tests/test_lab02.py.
"""
import numpy as np
import pytest
import torch

from autograder.labs import bugs02, lab02
from autograder.runtime import compile_function, decode_arg

pytestmark = [pytest.mark.lab02, pytest.mark.usefixtures("one_torch_thread")]

LEAKS = [bugs02.position_leak, bugs02.faint_leak]




def _worker_function(impl, wseed=0):
    """The callable the student's test receives, built the way the sandboxed worker builds it."""
    return decode_arg(bugs02.as_arg(impl, wseed))


def _autograd_pattern(f, T, d=3):
    X = torch.randn(T, d, dtype=torch.float64, generator=torch.Generator().manual_seed(T))
    blocks = torch.autograd.functional.jacobian(f, X).abs().amax(dim=(1, 3))  # (T, T): output i, input j
    return (blocks > 0).numpy()


# ---------------------------------------------------------------- single-position leaks
@pytest.mark.parametrize("make", LEAKS, ids=["position_leak", "faint_leak"])
@pytest.mark.parametrize("query,key,T", [(0, 1, 4), (2, 5, 8), (3, 4, 5),
                                         (2, 5, 5), (1, 6, 3)])  # the key beyond the last position: no leak
def test_a_leak_pattern_is_what_autograd_sees(make, query, key, T):
    impl = make(query, key)
    pattern = impl.pattern(T)
    assert pattern.dtype == bool and pattern.shape == (T, T)
    assert np.array_equal(pattern, _autograd_pattern(_worker_function(impl, wseed=4), T))
    if key < T:  # the leak itself, where the sequence reaches the key
        assert pattern[query, key]


@pytest.mark.parametrize("make", LEAKS, ids=["position_leak", "faint_leak"])
def test_a_leak_is_named_after_its_query_and_key(make):
    # lab02 keeps one trusted copy per name (and wseed): two leaks must never share a name
    kind = {bugs02.position_leak: "position_leak", bugs02.faint_leak: "faint_leak"}[make]
    assert make(2, 5).name == f"{kind}_2_5" and make(0, 1).name == f"{kind}_0_1"


@pytest.mark.parametrize("make", LEAKS, ids=["position_leak", "faint_leak"])
@pytest.mark.parametrize("query,key", [(0, 0), (3, 3), (4, 2), (-1, 2)])
def test_a_leak_needs_an_earlier_query_than_its_key(make, query, key):
    with pytest.raises(AssertionError):
        make(query, key)


@pytest.mark.parametrize("make", LEAKS, ids=["position_leak", "faint_leak"])
def test_a_leak_says_how_a_perturbation_shows_it(make):
    """forward_causal: no earlier output ever moves; faint: the earlier output moves by less than 1e-3."""
    query, key, T = 1, 4, 6
    impl = make(query, key)
    f = _worker_function(impl, wseed=2)
    X = torch.randn(T, 4, generator=torch.Generator().manual_seed(0))
    X2 = X.clone()
    X2[key] += 1.0
    moved = float((f(X2)[:key] - f(X)[:key]).abs().max())  # earlier outputs
    assert moved > 0 and impl.forward_causal is False
    assert impl.faint == (moved < 1e-3), moved


def test_each_leak_says_which_exercises_grade_with_it():
    """`perturbation`/`jacobian`: the function grades perturbation_test / jacobian_leaks (lab02's case lists)."""
    def bases(exercise_id):
        return {case.data.get("base") for case in lab02.LAB.exercise(exercise_id).cases({}, seed=3)}

    for make, base in ((bugs02.position_leak, bugs02.POSITION_LEAK), (bugs02.faint_leak, bugs02.FAINT_LEAK)):
        impl = make(1, 4)
        assert impl.perturbation == (base in bases("perturbation_test")), base
        assert impl.jacobian == (base in bases("jacobian_leaks")), base
    assert (bugs02.position_leak(1, 4).jacobian, bugs02.faint_leak(1, 4).jacobian) == (True, False)


# ---------------------------------------------------------------- the function as the worker builds it
@pytest.mark.parametrize("name", [impl.name for impl in bugs02.IMPLS])
def test_compile_impl_is_the_function_the_worker_builds(name):
    X = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    for wseed in (0, 7):
        assert torch.equal(bugs02.compile_impl(name, wseed)(X).nan_to_num(), _worker_function(name, wseed)(X).nan_to_num())
    assert torch.equal(bugs02.compile_impl(name)(X).nan_to_num(), _worker_function(name, 0)(X).nan_to_num())


def test_compile_impl_gives_the_names_the_worker_gives():
    """torch, F, nn and math at hand, as runtime.compile_function gives them: a body may use any of the four."""
    ours = bugs02.compile_impl("attention", 3).__globals__
    worker = compile_function(bugs02.source("attention", 3), bugs02.FUNCTION_NAME).__globals__
    for name in ("torch", "F", "nn", "math"):
        assert ours[name] is worker[name], name


def test_the_weights_come_from_wseed_and_default_to_0():
    X = torch.randn(5, 3, generator=torch.Generator().manual_seed(1))
    outputs = {wseed: _worker_function("attention", wseed)(X) for wseed in (0, 1, 7)}
    assert not torch.equal(outputs[0], outputs[1]) and not torch.equal(outputs[0], outputs[7])
    assert torch.equal(decode_arg(bugs02.as_arg("attention"))(X), outputs[0])
    assert torch.equal(compile_function(bugs02.source("attention"), "attn_fn")(X), outputs[0])
    assert torch.equal(compile_function(bugs02.as_arg("attention", 7)["__function__"], "attn_fn")(X), outputs[7])
    assert torch.equal(bugs02.compile_impl("attention", 7)(X), outputs[7])


def test_as_arg_records_the_inputs_only_when_asked():
    assert bugs02.as_arg("attention") == {"__function__": bugs02.source("attention", 0), "name": "attn_fn"}
    assert bugs02.as_arg("attention", 3, record=True) == {"__function__": bugs02.source("attention", 3),
                                                          "name": "attn_fn", "record": True}
