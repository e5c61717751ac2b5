"""pytest plugin: record what the repository's `check` sees and says on every public grading of a test.

Loaded with `-p release_corpus` while the labs' own tests (tests/test_lab0*.py,
the wrong-answer corpus) run: every `grade_lab` call without a seed is kept as
its outputs (plain data, keyed by call) and its results in every language, and
written to $RELEASE_CORPUS_OUT. tests/test_release_parity.py feeds the same
outputs to the student release's judge and compares.

The release's `check` never grades with a seed, so the tests that grade with
one are left out of the recording run (their names say `seed` or `hidden`),
as are the tests that grade nothing (LEFT_OUT_NO_GRADING) and the slow ones
that only repeat a diagnosis the others record (LEFT_OUT_REPEATING). Every
diagnosis the labs' tests name is still recorded; a name below that no test
has any more stops the run, so the lists cannot go stale.
"""
from __future__ import annotations

import json
import os

import pytest

import autograder.grading as grading
import autograder.notebook as notebook
from autograder.i18n import LANGS

LEFT_OUT_WORDS = ("seed", "hidden")  # seeded gradings: the release never makes one
LEFT_OUT_NO_GRADING = {  # properties of the bug functions and of the labs' tables: no grading at all
    "test_perturbation_behaviour_is_what_the_function_claims", "test_dependence_pattern_is_what_autograd_sees",
    "test_the_faint_leak_is_far_above_rounding_and_below_a_loose_tolerance",
    "test_transformers_position_ids_are_the_reference", "test_diagnoses_point_to_existing_chapter_sections",
}
LEFT_OUT_REPEATING = {  # a second or later grading of a diagnosis or a full mark recorded by other tests
    "test_skipping_any_single_prefix_length_loses_a_point", "test_reference_gets_full_marks",
    "test_right_jacobian_variants_get_full_marks", "test_a_test_that_raises_on_a_correct_function_is_reported",
    "test_other_honest_prefix_tests_keep_full_marks",
}
RECORDS: list[dict] = []
_grade_lab = grading.grade_lab


def key_of(call: dict) -> str:
    return json.dumps(call, sort_keys=True)


def recording_grade_lab(spec, call, seed=None, only=None):
    if seed is not None:
        return _grade_lab(spec, call, seed=seed, only=only)
    outputs: dict[str, dict] = {}

    def spy(spec_of_call):
        output = call(spec_of_call)
        outputs[key_of(spec_of_call)] = output
        return output

    results = _grade_lab(spec, spy, seed=None, only=only)
    record = {"lab": spec.id, "only": only, "outputs": outputs,
              "results": [{lang: result.to_plain(lang) for lang in LANGS} for result in results]}
    try:
        json.dumps(record)
    except (TypeError, ValueError):  # a test that hands the judge something other than plain data
        return results
    RECORDS.append(record)
    return results


grading.grade_lab = recording_grade_lab
notebook.grade_lab = recording_grade_lab


def left_out(name: str) -> bool:
    return any(word in name for word in LEFT_OUT_WORDS) or name in LEFT_OUT_NO_GRADING | LEFT_OUT_REPEATING


def pytest_collection_modifyitems(config, items):
    names = {getattr(item, "originalname", item.name) for item in items}
    stale = sorted((LEFT_OUT_NO_GRADING | LEFT_OUT_REPEATING) - names)
    if stale:
        raise pytest.UsageError(f"release_corpus: no test is named {', '.join(stale)} any more: update the lists")
    dropped = [item for item in items if left_out(getattr(item, "originalname", item.name))]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [item for item in items if item not in dropped]


def pytest_sessionfinish(session):
    with open(os.environ["RELEASE_CORPUS_OUT"], "w", encoding="utf-8") as handle:
        json.dump(RECORDS, handle)
