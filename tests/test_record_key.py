"""The key of a stored record (grader/gradebook.py): a rerun reuses a record only for the same lab,
student, file contents and seed, and for a record written by this version of the grader.

An instructor who practises with the default seed and then grades with the secret one must not
get the practice grades back: the seed's fingerprint is part of the key
(tests/test_grades_end_to_end.py shows it through the command line).
"""
import re

import pytest

from autograder.grader import gradebook

BASE = ("lab01", "ana", "a" * 64, "f1f2f3f4f5f6")


def test_the_same_inputs_give_the_same_key():
    assert gradebook.record_key(*BASE) == gradebook.record_key(*BASE)
    assert re.fullmatch(r"[0-9a-f]{24}", gradebook.record_key(*BASE))


@pytest.mark.parametrize("position, other", [(0, "lab02"), (1, "ana-2"), (2, "b" * 64), (3, "000000000000")])
def test_each_part_changes_the_key(position, other):
    changed = list(BASE)
    changed[position] = other
    assert gradebook.record_key(*changed) != gradebook.record_key(*BASE)


def test_parts_cannot_run_into_each_other():
    """("lab0", "1ana") and ("lab01", "ana") are different records."""
    assert gradebook.record_key("lab0", "1ana", "x", "y") != gradebook.record_key("lab01", "ana", "x", "y")
    assert gradebook.record_key("lab01", "an", "ax", "y") != gradebook.record_key("lab01", "ana", "x", "y")
    assert gradebook.record_key("lab01", "ana", "xy", "") != gradebook.record_key("lab01", "ana", "x", "y")


def test_a_new_record_version_makes_new_keys(monkeypatch):
    before = gradebook.record_key(*BASE)
    monkeypatch.setattr(gradebook, "RECORD_VERSION", gradebook.RECORD_VERSION + 1)
    assert gradebook.record_key(*BASE) != before
