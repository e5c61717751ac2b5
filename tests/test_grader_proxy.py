"""Students' tests earn points only by testing: the functions they probe run in the grader, not beside them.

Two batches through the command line (lab02 and lab03, run at the same time)
grade, beside honest notebooks, attackers that read the functions they are
handed instead of testing them (bytecode, constants, closure, source, frames,
gc), that look for the hidden cases' functions before any call, and that carry
an earlier exercise's hidden inputs into a later exercise's error message.

Before the grader ran these functions itself (grader/remote.py) the reader got
5/5 and 3/3, the hidden functions' seeds were printed by a cell, and the hidden
kwargs of perturbation_test reached jacobian_leaks' feedback. Every honest way
of testing (tests/corpus/probes.py, the alternatives of the expert review) keeps
full marks through the remote functions.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from corpus import attacks, probes
from corpus.lab00 import notebook

from autograder.grader.engine import case_seed
from autograder.labs import get_lab

ROOT = Path(__file__).resolve().parents[1]
SEED = 5_316_027_441_889  # above 2^40: no warning about a seed one can guess
STUDENT_TESTS = {"lab02": ("perturbation_test", "jacobian_leaks"), "lab03": ("prefix_test",)}
RETURN_TRUE = {"lab02": ["def perturbation_test(attn_fn, T=8, d=4, seed=0):\n    return True\n",
                         "def jacobian_leaks(attn_fn, T=6, d=4):\n    return True\n"],
               "lab03": ["def prefix_test(model_fn, vocab_size, T=8, seed=0):\n    return True\n"]}


def write(folder: Path, student: str, cells: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{student}.ipynb").write_text(json.dumps(notebook(cells)))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("proxy")
    subs = {lab: base / lab / "subs" for lab in STUDENT_TESTS}
    for student, (perturbation, jacobian) in probes.LAB02.items():
        write(subs["lab02"], student, [probes.IMPORTS, probes.PERTURBATION[perturbation], probes.JACOBIAN[jacobian]])
    write(subs["lab02"], "x_fingerprint", [attacks.hidden_seed_reader(), *attacks.fingerprinter("lab02")])
    write(subs["lab02"], "x_state", [probes.IMPORTS, *attacks.state_carrier()])
    for variant, source in probes.PREFIX.items():
        write(subs["lab03"], f"h_{variant}", [probes.IMPORTS, source])
    write(subs["lab03"], "x_fingerprint", attacks.fingerprinter("lab03"))
    for lab, cells in RETURN_TRUE.items():
        write(subs[lab], "return_true", cells)
    runs = {lab: subprocess.Popen([sys.executable, "-m", "autograder", "grade", lab, str(subs[lab]), "--out",
                                   str(base / lab / "out"), "--jobs", "1", "--seed", str(SEED), "--quiet"],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for lab in STUDENT_TESTS}
    found = {}
    for lab, run in runs.items():
        stdout, stderr = run.communicate(timeout=600)
        assert run.returncode == 0, stderr[-3000:] + stdout
        out = base / lab / "out"
        book = json.loads((out / "grades.json").read_text())
        records = [json.loads(p.read_text()) for p in (out / ".autograder" / "records").glob("*.json")]
        found[lab] = {"entries": {e["student"]: e for e in book["submissions"]},
                      "outputs": {r["student"]: r.get("output", "") for r in records}}
    return found


def points(entry, exercise) -> float:
    return entry["exercises"][exercise]["points"]


@pytest.mark.parametrize("lab,student", [("lab02", s) for s in probes.LAB02] + [("lab03", f"h_{v}") for v in probes.PREFIX])
def test_every_honest_way_of_testing_keeps_full_marks(graded, lab, student):
    entry = graded[lab]["entries"][student]
    spec = get_lab(lab)
    for exercise in STUDENT_TESTS[lab]:
        item = entry["exercises"][exercise]
        assert item["points"] == spec.exercise(exercise).points, (student, exercise, item["feedback"])


@pytest.mark.parametrize("lab", sorted(STUDENT_TESTS))
def test_a_test_that_reads_the_function_earns_what_return_true_earns(graded, lab):
    entries = graded[lab]["entries"]
    for exercise in STUDENT_TESTS[lab]:
        assert points(entries["x_fingerprint"], exercise) <= points(entries["return_true"], exercise), \
            (exercise, entries["x_fingerprint"]["exercises"][exercise]["feedback"])


def test_no_child_holds_the_hidden_functions_before_their_case(graded):
    output = graded["lab02"]["outputs"]["x_fingerprint"]
    assert "SEEDS" in output, output
    hidden = {case.data["wseed"] for exercise in get_lab("lab02").exercises if exercise.id in STUDENT_TESTS["lab02"]
              for case in exercise.cases({}, case_seed(SEED, "lab02")) if not case.public}
    printed = output.split("SEEDS", 1)[1].splitlines()[0]
    assert hidden and not any(str(wseed) in printed for wseed in hidden), printed


def test_an_earlier_exercises_hidden_inputs_never_reach_a_later_ones_feedback(graded):
    feedback = graded["lab02"]["entries"]["x_state"]["exercises"]["jacobian_leaks"]["feedback"]
    exercise = get_lab("lab02").exercise("perturbation_test")
    hidden = {f"<{c.call['kwargs']['T']}|{c.call['kwargs']['d']}|{c.call['kwargs']['seed']}>"
              for c in exercise.cases({}, case_seed(SEED, "lab02")) if not c.public}
    assert "seen <6|4|0>" in feedback, feedback  # the public inputs: the channel itself works
    assert hidden and not any(mark in feedback for mark in hidden), feedback


@pytest.mark.parametrize("raw,warned", [("12345", True), ("-99", True), (str((1 << 40) - 1), True),
                                        (str(1 << 40), False), (str(SEED), False), ("0x1234567890abcdef", False)])
def test_a_seed_that_trying_every_smaller_one_would_find_is_warned_about(raw, warned):
    """A small --seed was recovered in 4 s from one hidden input: the summary says so below 2^40."""
    from autograder.grader.batch import resolve_seed, seed_warning

    for environ, given in (({}, raw), ({"AUTOGRADER_SEED": raw}, None)):
        text = seed_warning(resolve_seed("lab02", given, environ))
        assert bool(text) == warned and ("2^40" in text) == warned, (raw, text)
    assert seed_warning(resolve_seed("lab02", None, {})) == ""  # the default seed has its own warning
