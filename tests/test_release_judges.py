"""One judge per exercise: labs 02-04 are judged by the classes of labs/judging*.py, here and in the release.

The lab modules' classes add only where the reference comes from (cases and
the three reference methods); the release ships the judging modules and
records the references (tests/test_release_parity.py holds the two to the same
feedback). These tests hold the split itself: the judging modules pull in no
reference code, the release build refuses a lab class that changes its judge,
and the references survive their trip through JSON.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from autograder.exercise import first_difference, first_wrong_entry
from autograder.labs import LabSpec, get_lab, judging, lab03, lab04
from autograder.release import replay
from release_bundle import SHARED

JUDGED_LABS = ("lab02", "lab03", "lab04")


def test_every_exercise_of_labs_02_to_04_is_judged_by_a_judging_class_it_leaves_alone():
    for lab_id in JUDGED_LABS:
        for exercise in get_lab(lab_id).exercises:
            judge = judging.judge_class(exercise)
            assert judge is not None and judge.__module__ == f"autograder.labs.judging{lab_id[-2:]}", exercise.id
            assert replay.redefined(exercise, judge) == [], exercise.id


@pytest.mark.parametrize("change", [{"points": 4}, {"section": "01 §1"},
                                    {"judge_outputs": lambda self, ctx, cases, values: self.passed()}])
def test_the_release_refuses_a_lab_class_that_changes_its_judge(monkeypatch, change):
    kind = type("Changed", (lab04.KVCacheMaskExercise,), change)
    monkeypatch.setattr(replay, "get_lab", lambda lab_id: LabSpec(id=lab_id, exercises=[kind()]))
    with pytest.raises(SystemExit, match=f"redefines {next(iter(change))} of KVCacheMaskJudge"):
        replay.record_lab("lab04")


def test_a_lab_class_may_give_its_cases_and_references():
    kind = type("Smaller", (lab04.KVCacheMaskExercise,),
                {"cases": lambda self, ctx, seed=None: lab04.KVCacheMaskExercise.cases(self, ctx, seed)[:1]})
    recorded = replay.record_judge(kind())
    assert recorded["judge"] == "judging04.KVCacheMaskJudge" and len(recorded["cases"]) == 1


IMPORT_JUDGES = r'''
import json, sys
import autograder.labs.judging02, autograder.labs.judging03, autograder.labs.judging04
print(json.dumps(sorted(name for name in sys.modules if name.startswith("autograder"))))
'''


def test_the_judging_modules_import_no_reference_code():
    run = subprocess.run([sys.executable, "-c", IMPORT_JUDGES], capture_output=True, text=True,
                         env={"PYTHONPATH": str(SHARED), "PATH": ""}, check=True)
    imported = set(json.loads(run.stdout))
    assert {"autograder.labs.judging", "autograder.labs.judging02", "autograder.labs.judging04"} <= imported
    assert not [name for name in imported if name.rsplit(".", 1)[-1] in ("lab02", "lab03", "lab04", "bugs02",
                                                                         "tensors", "grader", "runtime")]


def test_references_survive_json():
    reference = {"out": np.array([[0.5, np.nan], [-np.inf, np.inf]]), "mask": np.array([True, False]),
                 "slips": [("no_mask", np.zeros((1, 2, 2))), ("none", None)], "T_past": np.int64(3),
                 "swapped": (np.ones(2), np.arange(3.0))}
    back = judging.from_plain(json.loads(json.dumps(judging.to_plain(reference))))
    np.testing.assert_array_equal(back["out"], reference["out"])
    assert back["mask"].dtype == bool and back["mask"].tolist() == [True, False]
    assert back["slips"][0][0] == "no_mask" and back["slips"][0][1].shape == (1, 2, 2) and back["slips"][1] == ["none", None]
    assert back["T_past"] == 3 and type(back["T_past"]) is int
    assert [a.tolist() for a in back["swapped"]] == [[1.0, 1.0], [0.0, 1.0, 2.0]]


def test_the_judges_try_the_slips_the_lab_modules_compute():
    """The judges name slips by the order of the references they get: the lab modules draw that order."""
    assert [name for name, _ in lab04.ATTENTION_SLIPS] == list(lab04.CachedAttentionExercise.diagnoses[:6])
    assert all(lab04.cache_mask(2, 3, slip).shape == (2, 5) for slip in lab04.MASK_SLIPS)
    names = [name for name, _ in lab03.SLIPS]
    assert set(lab03.PADDING_SLIPS) <= set(names) and set(names) <= set(lab03.CausalSelfAttentionExercise.diagnoses)


def test_the_first_wrong_entry_is_named_even_where_every_gap_lies_just_above_the_tolerance():
    want = np.zeros((2, 3))
    got = want.copy()
    got[1, 2] = 0.5
    assert first_wrong_entry(got, want, 1e-5) == (1, 2)
    barely = want + 1e-5 + 5e-13  # wrong for close (atol), right for first_difference (atol + 1e-12)
    assert first_difference(barely, want, 1e-5) is None
    assert first_wrong_entry(barely, want, 1e-5) == (0, 0)
    assert first_wrong_entry(np.zeros((1, 2, 2)) + 1e-5 + 5e-13, np.zeros((1, 2, 2)), 1e-5) == (0, 0, 0)


def test_the_plain_form_of_an_array_is_exact_and_typed():
    # what the release records: booleans stay booleans, every other number becomes a float, shape kept
    boolean = np.array([[True, False, False], [False, True, True]])
    plain = judging.to_plain(boolean)
    assert plain == {"__array__": [True, False, False, False, True, True], "bool": True, "shape": [2, 3]}
    assert all(type(x) is bool for x in plain["__array__"])
    counts = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64)
    plain = judging.to_plain(counts)
    assert plain == {"__array__": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "bool": False, "shape": [2, 3]}
    assert all(type(x) is float for x in plain["__array__"])
    back = judging.from_plain(json.loads(json.dumps(plain)))
    assert back.dtype == np.float64 and back.shape == (2, 3) and np.array_equal(back, counts)
    assert judging.from_plain(json.loads(json.dumps(judging.to_plain(boolean)))).dtype == bool
