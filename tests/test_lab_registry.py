"""The lab registry: which labs exist, how a lab finds its exercises, and the maximum a lab is worth.

Expected values are the course's grading scheme written out by hand, not read back from the
registry: a changed point value or a lost exercise must be a deliberate edit of both.
"""
import pytest

from autograder.exercise import Exercise
from autograder.labs import LAB_IDS, LabSpec, UnknownLab, get_lab

# lab id -> (exercise ids in order, points each)
BY_HAND = {
    "lab00": [("qk_scores", 2), ("scaled_scores", 2), ("causal_mask_T4", 2), ("attention_weights", 2),
              ("attention_output", 2)],
    "lab01": [("causal_mask", 2), ("allowed_mask", 1), ("blocked_mask", 1), ("padding_mask", 2),
              ("combined_mask", 2), ("sliding_window_mask", 2)],
    "lab02": [("causal_attention", 4), ("perturbation_test", 5), ("jacobian_leaks", 3)],
    "lab03": [("CausalSelfAttention", 5), ("prefix_test", 5)],
    "lab04": [("kv_cache_mask", 3), ("cached_attention", 5)],
    "lab05": [("document_causal_mask", 2), ("packed_position_ids", 1), ("position_ids_from_mask", 2),
              ("sink_window_mask", 2), ("packed_attention", 3)],
}
MAX_BY_HAND = {"lab00": 10.0, "lab01": 10.0, "lab02": 12.0, "lab03": 10.0, "lab04": 8.0, "lab05": 10.0}


def test_the_registry_lists_exactly_the_six_labs_in_order():
    assert LAB_IDS == ("lab00", "lab01", "lab02", "lab03", "lab04", "lab05")


@pytest.mark.parametrize("lab_id", sorted(BY_HAND))
def test_each_lab_has_its_exercises_points_and_maximum(lab_id):
    lab = get_lab(lab_id)
    assert lab.id == lab_id
    assert [(e.id, e.points) for e in lab.exercises] == BY_HAND[lab_id]
    assert all(e.lab == lab_id for e in lab.exercises)  # feedback and records name the lab
    assert lab.max_score == MAX_BY_HAND[lab_id] and isinstance(lab.max_score, float)
    for exercise_id, _ in BY_HAND[lab_id]:
        assert lab.exercise(exercise_id).id == exercise_id


def test_an_unknown_exercise_or_lab_is_named_in_the_error():
    with pytest.raises(KeyError) as caught:
        get_lab("lab01").exercise("no_such_exercise")
    assert caught.value.args == ("no_such_exercise",)
    for wrong in ("lab06", "lab1", "bugs02", "tensors", "../lab00", ""):
        with pytest.raises(UnknownLab) as caught:
            get_lab(wrong)
        assert caught.value.args == (wrong,)
    assert issubclass(UnknownLab, KeyError)  # callers that catch KeyError still catch it


def test_a_lab_without_context_or_hand_graded_parts_has_empty_defaults():
    lab = LabSpec("lab99", [])
    assert lab.make_context({"anything": 1}) == ({}, None)
    assert lab.context_names == () and lab.hand_graded == {} and lab.title_key is None and lab.show_context is None
    assert lab.max_score == 0.0
    # the default dict is not shared between labs
    lab.hand_graded["essay"] = 2.0
    assert LabSpec("lab98", []).hand_graded == {}
