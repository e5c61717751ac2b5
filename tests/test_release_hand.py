"""lab00 in the release: the same problems as the grader's, and no function that hands out the answers.

Every function and method of the release's autograder package is called with
every combination of plausible arguments (a student id, its Q/K/V, an exercise
id, an answer, a tolerance); nothing returned (nor yielded) may contain a right
answer of that student.
"""
from __future__ import annotations

import json

import numpy as np

from autograder.labs import lab00
from release_bundle import json_from, run_in_venv

STUDENTS = ("s1234567", "ana", "Bob-7")

FUZZ = r'''
import importlib, inspect, itertools, json, pkgutil, sys, types, io, contextlib
import numpy as np
import autograder
from autograder import hand
found = []

def holds_answer(value, answers, depth=0):
    if depth > 4:
        return False
    if isinstance(value, types.GeneratorType):
        value = list(itertools.islice(value, 50))
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        if any(holds_answer(v, answers, depth + 1) for v in value):
            return True
    try:
        array = np.asarray(value, dtype=float)
    except Exception:
        return False
    return any(array.shape == np.shape(a) and np.allclose(np.nan_to_num(array), np.nan_to_num(a)) for a in answers)

functions = []
for module_info in pkgutil.walk_packages(autograder.__path__, "autograder."):
    module = importlib.import_module(module_info.name)
    for name, value in vars(module).items():
        if getattr(value, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(value):
            functions.append((f"{module.__name__}.{name}", value))
        elif inspect.isclass(value):
            for attr, method in vars(value).items():
                if inspect.isfunction(method):
                    functions.append((f"{module.__name__}.{name}.{attr}", method))
def fuzz():  # a function: what it holds stays out of __main__, which notebook_lang reads
    calls = 0
    data = json.loads(sys.argv[1])
    checks = [hand.HandCheck(e, 2, "", tuple(s), 0.0151) for e, s in data["shapes"].items()]
    for student, answers in data["answers"].items():
        answers = [np.array(a, dtype=float) for a in answers]
        problem = hand.variant(student)
        pool = [student, problem, 0.0151, np.zeros((3, 3)), *data["shapes"], *checks]
        for qualified, function in functions:
            try:
                parameters = [p for p in inspect.signature(function).parameters.values()
                              if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            except (TypeError, ValueError):
                continue
            if len(parameters) > 4:
                continue
            for args in itertools.product(pool, repeat=len(parameters)):
                calls += 1
                try:
                    with contextlib.redirect_stdout(io.StringIO()):
                        value = function(*args)
                except Exception:
                    continue
                if holds_answer(value, answers):
                    found.append(qualified)
    return calls


calls = fuzz()
print(json.dumps({"found": sorted(set(found)), "calls": calls, "functions": len(functions),
                  "variants": {s: {k: v.tolist() for k, v in hand.variant(s).items()} for s in json.loads(sys.argv[1])["ids"]}}))
'''


def right_answers(student: str) -> list:
    problem = lab00.variant(student)
    return [exercise.reference(problem).tolist() for exercise in lab00.EXERCISES]


def test_no_function_of_the_release_returns_a_students_answers():
    ids = [f"student-{n}" for n in range(150)] + list(STUDENTS)
    data = {"answers": {s: right_answers(s) for s in STUDENTS}, "ids": ids,
            "shapes": {exercise.id: list(exercise.shape) for exercise in lab00.EXERCISES}}
    out = json_from(run_in_venv(FUZZ, json.dumps(data), timeout=300))
    assert out["functions"] > 50 and out["calls"] > 10_000
    assert out["found"] == []
    for student, problem in out["variants"].items():  # the same problem as the grader's
        assert {k: np.array(v).tolist() for k, v in problem.items()} == {k: v.tolist() for k, v in lab00.variant(student).items()}


def test_the_fuzz_finds_an_answer_when_one_is_handed_out():
    code = FUZZ.replace("from autograder import hand\n", "from autograder import hand\n"
                        "hand.leak = lambda student: (lambda p: p['Q'] @ p['K'].T)(hand.variant(student))\n"
                        "hand.leak.__module__ = 'autograder.hand'\n")
    code = code.replace("for module_info in pkgutil.walk_packages(autograder.__path__, \"autograder.\"):",
                        "for module_info in [m for m in pkgutil.walk_packages(autograder.__path__, 'autograder.') if m.name == 'autograder.hand']:")
    data = {"answers": {"ana": right_answers("ana")}, "ids": [],
            "shapes": {exercise.id: list(exercise.shape) for exercise in lab00.EXERCISES}}
    out = json_from(run_in_venv(code, json.dumps(data), timeout=300))
    assert "autograder.hand.leak" in out["found"]
