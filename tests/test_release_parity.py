"""The student release's `check` says what the repository's says, on the labs' whole wrong-answer corpus.

The labs' own tests (tests/test_lab0*.py) run once with the release_corpus
plugin, which keeps every public grading: the outputs the judge saw and the
results it gave. The same outputs go to the installed release's judge in a
fresh venv; verdict, points, diagnosis and feedback text must be identical, in
every language.

The recording run leaves out the labs' tests that grade with a seed (named
`seed` or `hidden`: the release's `check` never does), those that grade
nothing, and the slowest that only repeat a diagnosis others record (the
lists are in tests/release_corpus.py, which fails on a name no test has).
That keeps about 90% of the public gradings and every diagnosis for a third
of the time.
"""
from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from collections import Counter

import pytest

from autograder.labs import LAB_IDS

from labbook.references import read_document
from release_bundle import ROOT, SHARED, bundle, json_from, run_in_venv

LAB_TESTS = [f"tests/test_{lab}.py" for lab in LAB_IDS]

REPLAY = r'''
import json, sys
import autograder
from autograder.grading import grade_lab
from autograder.labs import get_lab
assert "/release" in autograder.__file__ or "venv" in autograder.__file__, autograder.__file__
records = json.load(open(sys.argv[1], encoding="utf-8"))
out = []
for record in records:
    outputs = record["outputs"]
    def call(spec):
        return outputs[json.dumps(spec, sort_keys=True)]
    try:
        results = grade_lab(get_lab(record["lab"]), call, only=record["only"])
        out.append([{lang: r.to_plain(lang) for lang in record["results"][0]} for r in results])
    except KeyError as missing:  # the release made a call the repository did not
        out.append({"unrecorded_call": str(missing)})
print(json.dumps(out))
'''


@functools.lru_cache(maxsize=None)
def corpus(path: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": f"{SHARED}{os.pathsep}{ROOT / 'tests'}", "RELEASE_CORPUS_OUT": path}
    # nbval is not needed here and its import (nbformat, jsonschema's format checkers) costs seconds
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:nbval",
                          "-o", "addopts=", "-p", "release_corpus", "-q", *LAB_TESTS], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:]
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("corpus") / "corpus.json")
    records = corpus(path)
    replayed = json_from(run_in_venv(REPLAY, path, timeout=300))
    return records, replayed


def _differences(records, replayed, lab):
    differ = []
    for record, mine in zip(records, replayed):
        if record["lab"] != lab:
            continue
        if mine != record["results"]:
            differ.append((record["only"], record["results"], mine))
    return differ


def test_the_corpus_is_large_and_covers_every_lab(compared):
    records, replayed = compared
    assert len(records) == len(replayed)
    per_lab = Counter(record["lab"] for record in records)
    assert all(per_lab[lab] >= 10 for lab in LAB_IDS), per_lab
    named = {result["en"]["diagnosis"] for record in records for result in record["results"]}
    assert len(named) > 30  # the corpus names many different mistakes, not just right and wrong


@pytest.mark.parametrize("lab", LAB_IDS)
def test_same_verdict_points_and_feedback_as_the_repository(compared, lab):
    records, replayed = compared
    differ = _differences(records, replayed, lab)
    assert not differ, f"{len(differ)} gradings differ, first: {differ[0]}"


def test_a_changed_recording_is_caught(compared):
    """The comparison bites: one recorded slip's feedback changed, one grading differs."""
    records, replayed = compared
    changed = json.loads(json.dumps(replayed))
    for mine in changed:
        if isinstance(mine, list) and mine and mine[0]["en"]["diagnosis"] == "wrong_triangle":
            mine[0]["en"]["feedback"] += " (changed)"
            break
    lab = next(r["lab"] for r, m in zip(records, changed) if m != r["results"])
    assert len(_differences(records, changed, lab)) == 1


def test_the_installed_release_links_feedback_to_its_own_chapters():
    """`check` in a lab of the installed release links a chapter reference to the release's chapter notebook."""
    code = (
        "import json\n"
        "from autograder import book_links\n"
        "from autograder.notebook import Lab\n"
        "print(json.dumps(book_links.to_html('Consulta el capítulo 03 §3.', Lab('lab01', 'es')._chapter_links)))\n"
    )
    page = json_from(run_in_venv(code, cwd=bundle() / "labs" / "es"))
    (href,) = re.findall(r'href="([^"]+)"', page)
    path, _, fragment = href.partition("#")
    chapter = (bundle() / "labs" / "es" / path).resolve()
    assert chapter.is_file() and chapter.is_relative_to(bundle().resolve()), href
    assert fragment in read_document(chapter).anchors, href
