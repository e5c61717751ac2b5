"""Grades through the command line, as an instructor runs a term of lab01 (nbgrader layout):

- the seed is part of what a record is kept for: practice with the default seed, then grade
  with the secret one into the same folder, and the hidden cases of the secret seed decide;
- the late penalty is a share of each student's raw score, capped, end to end, with a
  late_days override;
- a time-out or a crash on a hidden case costs that exercise, and the feedback names neither
  the case nor its input.

One small class, graded twice (about a minute on 2 busy cores). Expected grades are worked out
by hand from how each notebook was made.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grader import engine
from autograder.grader.batch import resolve_seed
from autograder.labs import get_lab
from corpus.notebooks import with_definition

ROOT = Path(__file__).resolve().parents[1]
SOLUTION = json.loads((ROOT / "solutions" / "en" / "lab01_masks.ipynb").read_text(encoding="utf-8"))
DUE = "2026-12-10T23:59:00+01:00"  # 22:59 UTC

WRONG_TRIANGLE = '''def causal_mask(T: int) -> torch.Tensor:
    return torch.full((T, T), float("-inf")).tril(diagonal=-1)
'''


def wrong_for(size: int) -> str:
    """Right for every size but one (the secret seed's extra hidden size)."""
    return f'''def causal_mask(T: int) -> torch.Tensor:
    mask = torch.full((T, T), float("-inf")).triu(diagonal=1)
    return mask.T.contiguous() if T == {size} else mask
'''


HANGS = '''def causal_mask(T: int) -> torch.Tensor:
    while T > 12:  # only the hidden sizes above the taught range
        pass
    return torch.full((T, T), float("-inf")).triu(diagonal=1)
'''
CRASHES = '''def causal_mask(T: int) -> torch.Tensor:
    if T > 12:
        import os
        os._exit(3)
    return torch.full((T, T), float("-inf")).triu(diagonal=1)
'''


def extra_hidden_size(seed: int) -> int:
    """The one hidden causal_mask size above 12 that a seed draws (every size 1 … 12 is always there)."""
    exercise = get_lab("lab01").exercise("causal_mask")
    sizes = [case.call["args"][0] for case in exercise.cases({}, engine.case_seed(seed, "lab01")) if not case.public]
    (extra,) = [T for T in sizes if T > 12]
    return extra


def grade(*args):
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_SEED"}
    return subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    base = tmp_path_factory.mktemp("e2e")
    practice = resolve_seed("lab01", None, environ={}).value
    secret = next(seed for seed in range(90210, 90310) if extra_hidden_size(seed) != extra_hidden_size(practice))
    students = {  # student -> (causal_mask's source or None, hand-in time)
        "ontime": (None, "2026-12-10 21:59:00.000000 UTC"),
        "late1": (WRONG_TRIANGLE, "2026-12-11 01:59:00.000000 UTC"),  # 3 h late: 1 day
        "late5": (wrong_for(extra_hidden_size(secret)), "2026-12-15 00:59:00.000000 UTC"),  # 4 d 2 h: 5 days
        "excused": (WRONG_TRIANGLE, "2026-12-13 00:00:00.000000 UTC"),  # 3 days, excused by override
        "hangs": (HANGS, "2026-12-10 10:00:00.000000 UTC"),
        "crashes": (CRASHES, "2026-12-10 10:00:00.000000 UTC"),
    }
    for student, (source, stamp) in students.items():
        folder = base / "submitted" / student / "lab01"
        folder.mkdir(parents=True)
        notebook = with_definition(SOLUTION, "causal_mask", source) if source else SOLUTION
        (folder / "lab01_masks.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
        (folder / "timestamp.txt").write_text(stamp, encoding="utf-8")
    (base / "roster.csv").write_text("student\n" + "\n".join(students) + "\n", encoding="utf-8")
    (base / "overrides.csv").write_text("student,exercise,points,reason\nexcused,late_days,0,doctor's note\n",
                                        encoding="utf-8")
    out = base / "out"
    common = [base / "submitted", "--out", out, "--layout", "nbgrader", "--jobs", 2, "--timeout", 3, "--quiet"]
    first = grade("lab01", *common, "--roster", base / "roster.csv", "--due", DUE, "--late-per-day", 10,
                  "--late-cap", 30, "--overrides", base / "overrides.csv")
    assert first.returncode == 0, first.stdout + first.stderr
    practised = rows(out)
    second = grade("lab01", *common, "--seed", secret)
    if second.returncode == 2 and "seed" in second.stderr:
        # a later version may refuse to mix seeds in one folder: then a regrade is how to change it
        second = grade("lab01", *common, "--seed", secret, "--regrade")
    assert second.returncode == 0, second.stdout + second.stderr
    return {"practised": practised, "graded": rows(out), "out": out, "secret": secret, "practice": practice}


def rows(out: Path) -> dict:
    return {r["student"]: r for r in json.loads((out / "grades.json").read_text(encoding="utf-8"))["submissions"]}


def money(row):
    return (row["raw_score"], row["late"], row["late_days"], row["penalty"], row["score"])


def test_the_practice_seed_lets_through_what_the_secret_seed_catches(term):
    """late5's mask is wrong only for the secret seed's extra size: the practice run cannot see it."""
    assert term["practised"]["late5"]["exercises"]["causal_mask"]["points"] == 2.0
    graded = term["graded"]["late5"]
    assert graded["exercises"]["causal_mask"]["points"] == 0.0, graded["exercises"]["causal_mask"]
    assert "hidden cases" in graded["exercises"]["causal_mask"]["feedback"]


def test_the_late_penalty_is_a_capped_share_of_each_raw_score(term):
    graded = term["graded"]
    assert money(graded["ontime"]) == (10.0, False, 0, 0.0, 10.0)
    assert money(graded["late1"]) == (8.0, True, 1, 0.8, 7.2)  # 10 % of 8, not of 10
    assert money(graded["late5"]) == (8.0, True, 5, 2.4, 5.6)  # capped at 30 % of 8
    assert money(term["practised"]["late5"]) == (10.0, True, 5, 3.0, 7.0)  # the practice run's points
    assert money(graded["excused"]) == (8.0, False, 0, 0.0, 8.0)  # the kept late_days override


@pytest.mark.parametrize("student, status", [("hangs", "timeout"), ("crashes", "error")])
def test_a_time_out_or_a_crash_on_a_hidden_case_names_neither_the_case_nor_the_input(term, student, status):
    row = term["graded"][student]
    item = row["exercises"]["causal_mask"]
    assert (row["status"], item["points"], row["raw_score"]) == (status, 0.0, 8.0), row
    assert "hidden cases" in item["feedback"]
    markdown = (term["out"] / "feedback" / f"{student}.md").read_text(encoding="utf-8")
    for text in (item["feedback"], markdown):
        assert "causal_mask(1" not in text and "causal_mask(2" not in text and "causal_mask(3" not in text, text
