"""OVERRIDES.csv: `student,exercise,points,reason`, applied after grading, on every run.

`exercise` is an exercise id (its points replace the grader's), a hand-graded
part id (its points are added; see handgrading.py), or `late_days` (the number
of late days, which replaces what the layout said; 0 excuses lateness).
A line with empty points overrides nothing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..grader.submissions import UsageError
from . import names
from .roster import read_csv_rows

HEADER = ("student", "exercise", "points", "reason")
LATE_DAYS = "late_days"


@dataclass(frozen=True)
class Override:
    student: str
    exercise: str
    points: float
    reason: str
    line: int


def load(path: Path, students: set[str], maxima: dict[str, float]) -> dict[tuple[str, str], Override]:
    """Each line checked against the roster and the lab: `maxima` maps every exercise or part id to its points."""
    header, rows = read_csv_rows(path, "overrides")
    missing = [name for name in HEADER[:3] if name not in header]
    if missing:
        raise UsageError(f"overrides {names.shown(path)} line 1: the header must be {','.join(HEADER)}; "
                         f"missing {', '.join(missing)}")
    found: dict[tuple[str, str], Override] = {}
    for line, row in rows:
        student, exercise = names.ident(row.get("student", "")), names.ident(row.get("exercise", ""))
        raw = row.get("points", "")
        if student not in students:
            raise UsageError(f"overrides {names.shown(path)} line {line}: unknown student {student!r} (not on the roster "
                             "and not in the gradebook)")
        if exercise != LATE_DAYS and exercise not in maxima:
            raise UsageError(f"overrides {names.shown(path)} line {line}: unknown exercise {exercise!r}; this lab has "
                             f"{', '.join(sorted(maxima))} and {LATE_DAYS}")
        if raw == "":
            continue  # no points given: no override (the hand-grading sheet's lines start so)
        try:
            points = float(raw)
        except ValueError:
            points = math.nan
        limit = 366 if exercise == LATE_DAYS else maxima.get(exercise, 0)
        if not math.isfinite(points) or points < 0 or points > limit:
            raise UsageError(f"overrides {names.shown(path)} line {line}: points {raw!r} for {exercise} must be a number "
                             f"between 0 and {limit:g}")
        if exercise == LATE_DAYS and points != int(points):
            raise UsageError(f"overrides {names.shown(path)} line {line}: late_days must be a whole number, not {raw!r}")
        if (student, exercise) in found:
            raise UsageError(f"overrides {names.shown(path)} line {line}: {student} {exercise} is already set on line "
                             f"{found[(student, exercise)].line}")
        found[(student, exercise)] = Override(student, exercise, points, names.name(row.get("reason", ""), 500), line)
    return found
