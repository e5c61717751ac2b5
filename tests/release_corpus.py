"""pytest plugin: record what the repository's `check` sees and says on every public grading of a test.

Loaded with `-p release_corpus` while the labs' own tests (tests/test_lab0*.py,
the wrong-answer corpus) run: every `grade_lab` call without a seed is kept as
its outputs (plain data, keyed by call) and its results in every language, and
written to $RELEASE_CORPUS_OUT. tests/test_release_parity.py feeds the same
outputs to the student release's judge and compares.
"""
from __future__ import annotations

import json
import os

import autograder.grading as grading
import autograder.notebook as notebook
from autograder.i18n import LANGS

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


def pytest_sessionfinish(session):
    with open(os.environ["RELEASE_CORPUS_OUT"], "w", encoding="utf-8") as handle:
        json.dump(RECORDS, handle)
