"""What the term keeps of each hand-in besides its grade: its graded code, parsed, never run.

Runs after the engine, on the intake's submissions (already owned, already
clean). Every analysis of a student's code (the normalised graded code for
the similarity groups, the forbidden APIs, the hand-graded answers) is total:
whatever the student wrote, a failure (nesting that exhausts the parser or
Python's stack, a notebook too large to look at) makes that part "not
analysed" for that student, with a note in their row, and never stops the
class. The work is bounded per byte (code.py's limits).
"""
from __future__ import annotations

import json
from pathlib import Path

from ..grader.submissions import Submission as EngineSubmission, read
from . import code, files, handgrading

NOT_ANALYSED = "not_analysed"


def _total(function, *args):
    """(result, None) or (None, why): an analysis of student code never raises."""
    try:
        return function(*args), None
    except code.NotAnalysed as reason:
        return None, str(reason)
    except RecursionError:
        return None, "nested too deeply"
    except MemoryError:
        return None, "too large"
    except Exception as error:  # noqa: BLE001 - any failure on student code is "not analysed", never a crash
        return None, type(error).__name__


def analyse(spec, student: str, path: Path | None, root: Path | None, max_bytes: int) -> dict:
    """{"code", "forbidden", "lang", "answers"} of one hand-in, plus NOT_ANALYSED: [parts that failed]."""
    meta: dict = {}
    if path is None:
        return meta
    copy = read(EngineSubmission(student, path, root=root), max_bytes)  # the engine's bounded, link-free reader
    if copy.invalid:
        return meta
    failed: list[str] = []
    ids = [e.id for e in spec.exercises]
    found, problem = _total(code.graded_code, copy.cells, ids)
    meta["code"] = found or {}
    if problem:
        failed.append(f"graded code ({problem})")
    forbidden = {}
    for exercise in spec.exercises:
        if not exercise.forbidden_calls:
            continue
        uses, problem = _total(code.forbidden_uses, copy.cells, exercise.id, exercise.forbidden_calls)
        forbidden[exercise.id] = uses or []
        if problem:
            failed.append(f"forbidden APIs of {exercise.id} ({problem})")
    meta["forbidden"] = forbidden
    meta["lang"] = copy.lang
    if spec.hand_graded:
        answers, problem = _total(_answers, path, root, spec.hand_graded, max_bytes)
        meta["answers"] = answers or {}
        if problem:
            failed.append(f"hand-graded answers ({problem})")
    if failed:
        meta[NOT_ANALYSED] = failed
    return meta


def _answers(path: Path, root: Path | None, parts: dict, max_bytes: int) -> dict:
    try:
        raw = files.read_regular(path, root, max_bytes)
    except files.Refused:
        return {}
    try:
        notebook = json.loads(raw.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return {}
    return handgrading.answers(notebook, parts)
