"""The evidence rule behind students' tests (autograder/evidence.py), on plain numpy functions.

A verdict "not causal" counts only when two recorded inputs that agree up to some
position give different outputs before it. Each test here builds such pairs by
hand (a base input and a changed one) for functions whose leaks are known by
construction, on both sides of every boundary: the first and the last position,
the output just before the change and the one at it, batches split into
sequences, NaN, shapes that cannot be compared, and the caps on the work.
"""
import numpy as np
import pytest

from autograder import evidence

T, D = 6, 2


def causal(x):
    """Each output is the running sum of the inputs up to it: no leak (works on (..., T, d) and (..., T))."""
    return np.cumsum(x, axis=-2 if x.ndim >= 2 else -1)


def leak(query, key, feature_dims=1):
    """Causal, except that output `query` also reads input `key` (> query): the single leak the grader plants."""
    def run(x):
        y = causal(x).astype(float)
        if feature_dims:
            y[..., query, :] += 10 * x[..., key, :]
        else:
            y[..., query] += 10 * x[..., key]
        return y
    return run


def base(t=T, d=D, start=0.0):
    return np.arange(t * d, dtype=float).reshape(t, d) + start


def changed(x, position, by=1.0):
    y = x.copy()
    y[..., position, :] += by
    return y


# ---------------------------------------------------------------- pairs that do and do not show a leak
@pytest.mark.parametrize("query, key", [(0, 1), (T - 2, T - 1), (0, T - 1), (2, 3)])
def test_a_change_at_the_leaking_key_shows_the_leak(query, key):
    x = base()
    assert evidence.witnessed([x, changed(x, key)], leak(query, key), feature_dims=1)


@pytest.mark.parametrize("position", range(T))
def test_a_causal_function_never_shows_a_leak_whatever_is_changed(position):
    x = base()
    assert not evidence.witnessed([x, changed(x, position)], causal, feature_dims=1)


def test_the_output_just_before_the_change_is_compared_and_the_one_at_it_is_not():
    # leak from key 3 into query 2 only: a change at 3 moves output 2 (compared) and outputs 3.. (not compared)
    x = base()
    assert evidence.witnessed([x, changed(x, 3)], leak(2, 3), feature_dims=1)
    # a change at 3 also moves output 3 of a causal function: that is no leak
    assert not evidence.reveals_leak([(x, causal(x)), (changed(x, 3), causal(changed(x, 3)))])


def test_a_change_after_the_leaking_key_or_before_the_query_shows_nothing():
    x = base()
    run = leak(1, 3)
    assert not evidence.witnessed([x, changed(x, 4)], run, feature_dims=1)  # key 3 unchanged
    assert not evidence.witnessed([x, changed(x, 0)], run, feature_dims=1)  # nothing shared before 0
    assert evidence.witnessed([x, changed(x, 3)], run, feature_dims=1)


def test_one_call_is_never_a_pair():
    x = base()
    assert not evidence.witnessed([x], leak(0, 1), feature_dims=1)
    assert not evidence.witnessed([], leak(0, 1), feature_dims=1)
    assert not evidence.witnessed([x, x.copy()], leak(0, 1), feature_dims=1)  # the same input twice


def test_two_inputs_that_differ_from_the_start_share_no_prefix():
    x = base()
    other = changed(changed(x, 0), 1)
    assert not evidence.witnessed([x, other], leak(0, 1), feature_dims=1)


def test_the_base_is_compared_with_every_later_input_not_only_the_previous_one():
    x = base()
    unrelated = base(start=100.0)
    assert evidence.witnessed([x, unrelated, changed(x, 2)], leak(1, 2), feature_dims=1)


# ---------------------------------------------------------------- prefixes of different lengths (token ids)
def token_causal(ids):
    return np.cumsum(ids, axis=-1).astype(float)


def token_peeking(ids):
    """Output t reads the next token too (the last one reads nothing more)."""
    out = token_causal(ids)
    out[..., :-1] += 100 * ids[..., 1:]
    return out


@pytest.mark.parametrize("cut", [1, 2, 4, 5])
def test_a_prefix_of_the_input_is_a_pair_with_it(cut):
    ids = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])
    assert evidence.witnessed([ids, ids[:cut]], token_peeking, feature_dims=0)
    assert evidence.witnessed([ids[:cut], ids], token_peeking, feature_dims=0)  # either order
    assert not evidence.witnessed([ids, ids[:cut]], token_causal, feature_dims=0)


def test_a_prefix_of_length_one_compares_the_first_output():
    ids = np.array([2.0, 7.0, 1.0])
    first_only = lambda x: np.where(np.arange(x.shape[-1]) == 0, 100 * x[..., -1], x)  # noqa: E731
    assert evidence.witnessed([ids, ids[:1]], first_only, feature_dims=0)


# ---------------------------------------------------------------- batches become sequences
def test_a_batch_is_split_into_its_sequences():
    x = base()
    batch = np.stack([x, changed(x, 4)])  # (2, T, d): the pair inside one call
    assert evidence.witnessed([batch], leak(3, 4), feature_dims=1)
    assert not evidence.witnessed([batch], causal, feature_dims=1)
    deeper = np.stack([np.stack([base(start=50.0), x]), np.stack([base(start=70.0), changed(x, 4)])])  # (2, 2, T, d)
    assert evidence.witnessed([deeper], leak(3, 4), feature_dims=1)


def test_token_batches_split_on_the_last_axis():
    ids = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 9.0]])  # (2, T): differ at the last token
    assert evidence.witnessed([ids], token_peeking, feature_dims=0)
    assert not evidence.witnessed([ids], token_causal, feature_dims=0)


def test_split_sequences_by_hand():
    x = np.arange(2 * 3 * 4 * 5, dtype=float).reshape(2, 3, 4, 5)
    y = np.arange(2 * 3 * 4 * 7, dtype=float).reshape(2, 3, 4, 7)
    pieces = evidence.split_sequences(x, y, feature_dims=1)
    assert len(pieces) == 6
    assert all(a.shape == (4, 5) and b.shape == (4, 7) for a, b in pieces)
    assert np.array_equal(pieces[4][0], x[1, 1]) and np.array_equal(pieces[4][1], y[1, 1])
    tokens = np.arange(12, dtype=float).reshape(3, 4)
    pieces = evidence.split_sequences(tokens, np.zeros((3, 4, 2)), feature_dims=0)
    assert len(pieces) == 3 and np.array_equal(pieces[2][0], [8, 9, 10, 11]) and pieces[2][1].shape == (4, 2)
    one = evidence.split_sequences(np.ones((4, 5)), np.ones((4, 5)), feature_dims=1)
    assert len(one) == 1 and one[0][0].shape == (4, 5)
    single = evidence.split_sequences(np.ones(4), np.ones(4), feature_dims=0)
    assert len(single) == 1 and single[0][0].shape == (4,)


@pytest.mark.parametrize("x_shape, y_shape, feature_dims", [
    ((4, 5), (3, 5), 1),  # the output has another length
    ((2, 4, 5), (3, 4, 5), 1),  # another batch
    ((2, 4, 5), (2, 5), 1),  # the output lost the time axis
    ((5,), (5,), 1),  # no time axis before the features
    ((2, 4), (4,), 0),  # the output lost the batch
])
def test_outputs_that_do_not_line_up_with_their_inputs_are_no_sequences(x_shape, y_shape, feature_dims):
    assert evidence.split_sequences(np.zeros(x_shape), np.zeros(y_shape), feature_dims) == []


def test_a_function_whose_output_does_not_line_up_is_no_evidence():
    x = base()
    assert not evidence.witnessed([x, changed(x, 3)], lambda v: v[..., :-1, :] * 0 + v.sum(), feature_dims=1)


# ---------------------------------------------------------------- NaN, shapes, inputs the function refuses
def test_nan_in_one_output_and_not_the_other_is_a_change():
    a, b = np.array([[1.0], [2.0]]), np.array([[1.0], [2.0]])
    ya, yb = np.array([[np.nan], [0.0]]), np.array([[5.0], [0.0]])
    assert evidence.reveals_leak([(a, ya), (np.r_[b, [[3.0]]], np.r_[yb, [[0.0]]])])
    assert evidence.reveals_leak([(a, yb), (np.r_[b, [[3.0]]], np.r_[ya, [[0.0]]])])


def test_nan_in_both_outputs_at_the_same_place_is_no_change():
    ya = np.array([[np.nan], [1.0]])
    x = np.array([[1.0], [2.0]])
    assert not evidence.reveals_leak([(x, ya), (np.r_[x, [[3.0]]], np.r_[ya, [[7.0]]])])


def test_an_output_that_is_nan_everywhere_shows_no_leak():
    x = base()
    assert not evidence.witnessed([x, changed(x, 3)], lambda v: np.full(v.shape, np.nan), feature_dims=1)


def test_changes_within_the_tolerance_are_no_leak():
    x = np.array([[1.0], [2.0], [3.0]])
    y = np.array([[1.0], [2.0], [3.0]])
    nudged = (np.r_[x[:2], [[9.0]]], y + np.array([[5e-10], [0.0], [0.0]]))
    assert not evidence.reveals_leak([(x, y), nudged])
    assert evidence.reveals_leak([(x, y), nudged], atol=1e-10)
    moved = (nudged[0], y + np.array([[2e-9], [0.0], [0.0]]))
    assert evidence.reveals_leak([(x, y), moved])


def test_a_change_of_exactly_the_tolerance_is_no_leak():
    x = np.array([[1.0], [2.0]])
    y = np.array([[0.0], [0.0]])
    assert not evidence.reveals_leak([(x, y), (np.r_[x[:1], [[5.0]]], np.array([[1e-9], [0.0]]))])
    assert evidence.reveals_leak([(x, y), (np.r_[x[:1], [[5.0]]], np.array([[1.5e-9], [0.0]]))])


def test_infinite_outputs_compare_quietly():
    """The same infinity in both outputs is no change, opposite ones are; numpy's inf - inf warns nothing."""
    import warnings

    x = np.array([[1.0], [2.0]])
    changed_x = np.r_[x[:1], [[5.0]]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not evidence.reveals_leak([(x, np.array([[np.inf], [0.0]])), (changed_x, np.array([[np.inf], [1.0]]))])
        assert evidence.reveals_leak([(x, np.array([[np.inf], [0.0]])), (changed_x, np.array([[-np.inf], [1.0]]))])


def test_boolean_and_integer_outputs_are_compared_as_numbers():
    """A function may return a mask or token ids: the re-run compares them as floats (bool - bool is no number)."""
    x = base()
    flags = lambda v: np.cumsum(v, axis=-2) > 100  # noqa: E731  causal, boolean
    peeking_flags = lambda v: leak(1, 3)(v) > 100  # noqa: E731  output 1 flips when input 3 grows
    for key in (None, ("test_evidence_rule", "bool outputs")):
        assert not evidence.witnessed([x, changed(x, 3, by=50.0)], flags, feature_dims=1, key=key)
        peek_key = key and (*key, "peeking")
        assert evidence.witnessed([x, changed(x, 3, by=50.0)], peeking_flags, feature_dims=1, key=peek_key)


def test_the_trusted_outputs_of_two_functions_never_mix():
    x = base()
    inputs = [x, changed(x, 3)]
    assert not evidence.witnessed(inputs, causal, feature_dims=1, key=("test_evidence_rule", "causal"))
    assert evidence.witnessed(inputs, leak(2, 3), feature_dims=1, key=("test_evidence_rule", "leaky"))


def test_sequences_of_other_widths_are_not_compared():
    x = base()
    wider = np.concatenate([changed(x, 3), np.zeros((T, 1))], axis=1)  # (T, d + 1): shares no comparable prefix
    assert not evidence.reveals_leak([(x, leak(2, 3)(x)), (wider, np.zeros((T, D)))])
    y = leak(2, 3)(x)
    other_width_out = np.zeros((T, D + 1))
    assert not evidence.reveals_leak([(x, y), (changed(x, 3), other_width_out)])


def test_empty_sequences_are_skipped():
    empty = np.zeros((0, D))
    x = base()
    run = leak(2, 3)
    assert not evidence.reveals_leak([(empty, empty), (x, causal(x))])
    assert evidence.reveals_leak([(empty, empty), (x, run(x)), (changed(x, 3), run(changed(x, 3)))])
    assert evidence.reveals_leak([(x, run(x)), (empty, empty), (changed(x, 3), run(changed(x, 3)))])


def test_a_sequence_that_cannot_be_compared_does_not_stop_the_comparisons_after_it():
    x = base()
    run = leak(2, 3)
    wider = np.zeros((T, D + 1))
    assert evidence.reveals_leak([(x, run(x)), (wider, wider), (changed(x, 3), run(changed(x, 3)))])
    assert evidence.reveals_leak([(x, run(x)), (x, np.zeros((T, D + 1))), (changed(x, 3), run(changed(x, 3)))])


def test_inputs_the_function_refuses_are_skipped_not_fatal():
    x = base()

    def picky(v):
        if v.shape[-2] != T:
            raise ValueError("not an input of this exercise")
        return leak(2, 3)(v)

    assert evidence.witnessed([np.ones((3, D)), x, np.ones((9, D)), changed(x, 3)], picky, feature_dims=1)


# ---------------------------------------------------------------- the caps
def filler(n):
    """An input that shares no prefix with any other: its first row is its own."""
    return base(start=1000.0 * (n + 1))


def test_reveals_leak_looks_at_the_first_512_sequences_only():
    run = leak(2, 3)
    x = base()
    pair = [(x, run(x)), (changed(x, 3), run(changed(x, 3)))]
    # fillers of other widths than the pair's and each other's: compared with nothing, so the test stays fast
    fillers = [(np.zeros((T, width)), np.zeros((T, width))) for width in range(3, 3 + evidence.MAX_SEQUENCES)]
    assert evidence.MAX_SEQUENCES == 512
    assert evidence.reveals_leak(fillers[:510] + pair)  # the pair is sequences 511 and 512
    assert not evidence.reveals_leak(fillers[:511] + pair)  # 512 and 513


def test_witnessed_stops_after_8192_pairs():
    """128 inputs seen: 8128 pairs; the next input's comparison with the 64th is pair 8192, with the 65th 8193."""
    assert evidence.MAX_PAIRS == 8192
    run = leak(2, 3)
    x = base()
    for partner, expected in ((63, True), (64, False)):
        seen = [filler(n) for n in range(128)]
        seen[partner] = x
        assert evidence.witnessed([*seen, changed(x, 3)], run, feature_dims=1) is expected, partner


# ---------------------------------------------------------------- what the worker recorded
def tensor(values, dtype="float32"):
    values = np.asarray(values)
    return {"__tensor__": values.tolist(), "dtype": dtype, "shape": list(values.shape)}


def test_recorded_inputs_are_the_arrays_of_the_chosen_function():
    output = {"ok": False, "calls": [[tensor([[1, 2], [3, 4]]), tensor(5.0), {"__shape__": [2, 2]}, "text",
                                      {"__tensor__": None, "dtype": "float32", "shape": [9, 9]}, tensor([7, 8]),
                                      tensor([True, False], "bool")],
                                     [tensor([[9.0]])]]}
    first = evidence.recorded_inputs(output)
    # 0-d, shapes, text, too large: out; a boolean input becomes numbers
    assert [a.tolist() for a in first] == [[[1.0, 2.0], [3.0, 4.0]], [7.0, 8.0], [1.0, 0.0]]
    assert all(a.dtype == float for a in first)
    assert [a.tolist() for a in evidence.recorded_inputs(output, which=1)] == [[[9.0]]]
    assert evidence.recorded_inputs(output, which=2) == []


@pytest.mark.parametrize("output", [{}, {"calls": None}, {"calls": "x"}, {"calls": [None]}, {"calls": [{"a": 1}]}])
def test_no_recorded_calls_no_inputs(output):
    assert evidence.recorded_inputs(output) == []
    assert evidence.recorded_shapes(output) == []


def test_recorded_shapes_take_values_and_shape_only_records():
    output = {"calls": [[tensor(np.zeros((2, 3))), {"__shape__": [4, 5, 6]}, {"__shape__": ["x"]}, {"shape": 3},
                         "text", {"__shape__": [1.5]}], [{"__shape__": [7]}]]}
    assert evidence.recorded_shapes(output) == [(2, 3), (4, 5, 6)]
    assert evidence.recorded_shapes(output, which=1) == [(7,)]
    assert evidence.recorded_shapes(output, which=2) == []


# ---------------------------------------------------------------- the trusted re-run
def test_trusted_outputs_are_computed_once_per_key_and_input():
    calls = []

    def run(x):
        calls.append(x.shape)
        return causal(x)

    x = base()
    key = ("test_evidence_rule", "once")
    assert evidence.witnessed([x, changed(x, 3), x.copy()], run, feature_dims=1, key=key) is False
    assert len(calls) == 2  # the repeated base was remembered
    assert evidence.witnessed([x, changed(x, 3)], run, feature_dims=1, key=key) is False
    assert len(calls) == 2
    evidence.witnessed([x, x], run, feature_dims=1)  # without a key: every input runs
    assert len(calls) == 4
    other = ("test_evidence_rule", "other function")
    evidence.trusted_output(other, x, lambda v: v * 0)
    assert np.array_equal(evidence.trusted_output(other, x, run), x * 0)  # the key tells functions apart


def test_the_trusted_cache_stays_bounded():
    for n in range(4200):
        evidence.trusted_output(("test_evidence_rule", "bound"), np.array([float(n)]), lambda v: v)
    assert len(evidence._OUTPUTS) <= 4097


def test_the_re_run_uses_one_torch_thread():
    import torch

    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        evidence.witnessed([base()], causal, feature_dims=1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


# ---------------------------------------------------------------- a student's test that also uses torch.func
def test_a_perturbation_test_that_vmaps_the_function_is_judged_not_a_grader_failure():
    """torch.func hands the function a wrapper whose values cannot be read: the worker records its shape only.
    Such a record is no evidence, and must not crash the judge (it did: 'the grader itself failed')."""
    import torch

    from autograder.grading import grade_lab
    from autograder.labs import get_lab
    from autograder.runtime import run_call

    def perturbation_test(attn_fn, T=8, d=4, seed=0):
        torch.manual_seed(seed)
        X = torch.randn(T, d)
        torch.func.vmap(attn_fn)(X[None])  # recorded as a shape only
        base = attn_fn(X)
        for p in range(1, T):
            Y = X.clone()
            Y[p] += 1.0
            if not torch.allclose(attn_fn(Y)[:p], base[:p], atol=1e-5):
                return False
        return True

    namespace = {"perturbation_test": perturbation_test, "torch": torch}
    (result,) = grade_lab(get_lab("lab02"), lambda call: run_call(namespace, call), only=["perturbation_test"])
    assert (result.status, result.points) == ("passed", 5.0), result.render("en")


def test_the_graders_own_numpy_log_keeps_numeric_arrays_of_one_dimension_or_more():
    """grader/remote.py logs numpy arrays: 1-D and up, of bool, int, uint or float, become float64 inputs."""
    output = {"calls": [[np.array([[1.5, 2.0]], dtype=np.float32), np.array([3, 4], dtype=np.int64),
                         np.array([5], dtype=np.uint8), np.array([True, False]), np.array(6.0),
                         np.array([1 + 2j]), np.array(["a", "b"]), np.array([None], dtype=object)]]}
    found = evidence.recorded_inputs(output)
    assert [a.tolist() for a in found] == [[[1.5, 2.0]], [3.0, 4.0], [5.0], [1.0, 0.0]]
    assert all(a.dtype == np.float64 for a in found)
