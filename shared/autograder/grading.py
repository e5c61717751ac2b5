"""Grade one lab given a way to make calls: the loop shared by `check` and the batch grader.

`call(spec) -> output` is where student code runs: `runtime.run_call` on the
notebook's namespace for `check`, a sandboxed worker for the grader. Everything
here works on the plain data that comes back.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .exercise import Exercise, Feedback, Result, decode

if TYPE_CHECKING:  # a type only: the student release ships this file with its own labs package
    from .labs import LabSpec

Call = Callable[[dict], dict]


def read_context(spec: LabSpec, call: Call) -> tuple[dict, tuple[str, dict] | None]:
    values = {}
    for name in spec.context_names:
        output = call({"kind": "value", "target": name})
        values[name] = decode(output["ok"]) if "ok" in output else None
    return spec.make_context(values)


def grade_exercise(exercise: Exercise, ctx: dict, call: Call, seed: int | None = None) -> Result:
    cases = exercise.cases(ctx, seed)
    outputs = [call(case.call) for case in cases]
    return exercise.judge(ctx, cases, outputs)


def context_problem_result(exercise: Exercise, problem: tuple[str, dict]) -> Result:
    key, params = problem
    return exercise.result(0, "not_answered", Feedback(key, params))


def grade_lab(spec: LabSpec, call: Call, seed: int | None = None, only: list[str] | None = None) -> list[Result]:
    ctx, problem = read_context(spec, call)
    results = []
    for exercise in spec.exercises:
        if only is not None and exercise.id not in only:
            continue
        if problem is not None:
            results.append(context_problem_result(exercise, problem))
        else:
            results.append(grade_exercise(exercise, ctx, call, seed))
    return results
