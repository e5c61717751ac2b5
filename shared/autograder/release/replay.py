"""Record, from the exercise definitions, what the student release's `check` needs: plain data only.

For every public case: the call, the right output and, where the definition
names its slips case by case (TensorExercise: labs 01 and 05), every slip's
output with its diagnosis and message. The exercises of labs 02-04 are
judged in the release by their own judges (labs/judging*.py, shipped as they
are): for them the case's data and its references are recorded (record_judge).
No hidden case is drawn (no seed is used), and no code is recorded except the
public decoders that lab03's notebook shows.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .. import i18n
from ..exercise import Exercise
from ..labs import LAB_IDS, get_lab
from ..labs import judging, lab00, tensors


def plain_array(values: np.ndarray) -> dict:
    values = np.asarray(values)
    is_bool = values.dtype == bool
    flat = values.reshape(-1).tolist() if is_bool else [float(x) for x in values.astype(float).reshape(-1)]
    return {"values": flat, "bool": bool(is_bool), "shape": list(values.shape)}


def _label(case) -> list | None:
    """The case's description in the reader's language (message key and parameters), as plain data."""
    return [case.label[0], judging.to_plain(case.label[1])] if case.label else None


def _public(exercise: Exercise, ctx: dict) -> list:
    return [case for case in exercise.cases(ctx, None) if case.public]


def record_tensor(exercise: tensors.TensorExercise) -> dict:
    """Each public case's right answer and slips (diagnosis, answer, message key, params), for TensorExercise's
    own judge in the release."""
    cases = []
    for case in _public(exercise, {}):
        want = exercise.expected(case)
        cases.append({"name": case.name, "label": _label(case), "call": case.call, "expected": plain_array(want),
                      "slips": [{"diagnosis": name, "value": plain_array(slip), "key": key,
                                 "params": judging.to_plain(params)} for name, slip, key, params in exercise.slips(case)]})
    return {"mode": "tensor", "expected_kind": exercise.expected_kind, "kind_key": exercise.kind_key, "atol": exercise.atol,
            "slip_atol": exercise.slip_atol, "sections": dict(exercise.sections), "special_rule": exercise.special_rule,
            "cases": cases}


def is_tensor_exercise(exercise: Exercise) -> bool:
    """Judged case by case with TensorExercise's own loop (no override of how cases are judged)."""
    kind = type(exercise)
    return (isinstance(exercise, tensors.TensorExercise) and kind.judge is Exercise.judge
            and kind.kind_ok is tensors.TensorExercise.kind_ok and kind.normalise is tensors.TensorExercise.normalise
            and kind.same is tensors.TensorExercise.same and kind.same_slip is tensors.TensorExercise.same_slip
            and kind.judge_outputs is tensors.TensorExercise.judge_outputs
            and kind.judge_case is tensors.TensorExercise.judge_case
            and kind.diagnose is tensors.TensorExercise.diagnose and kind.wrong_type is tensors.TensorExercise.wrong_type
            and kind.passed is Exercise.passed and kind.result is Exercise.result
            and kind.special is tensors.TensorExercise.special)


def record_hand(exercise: lab00.HandExercise) -> dict:
    return {"mode": "hand", "shape": list(exercise.shape), "atol": exercise.atol}


def record_lab(lab_id: str) -> dict:
    spec = get_lab(lab_id)
    exercises = []
    for exercise in spec.exercises:
        common = {"id": exercise.id, "points": exercise.points, "section": exercise.section, "kind": exercise.kind}
        if isinstance(exercise, lab00.HandExercise):
            exercises.append({**common, **record_hand(exercise)})
        elif is_tensor_exercise(exercise):
            exercises.append({**common, **record_tensor(exercise)})
        elif judging.judge_class(exercise) is not None:
            exercises.append({**common, **record_judge(exercise)})
        else:  # a judge the release cannot replay would give other feedback than the grader's: stop
            raise SystemExit(f"release: no recorder for {lab_id}.{exercise.id} ({type(exercise).__name__}); "
                             "judge it with a class of autograder/labs/judging*.py, which the release ships")
    return {"id": lab_id, "max_score": spec.max_score, "context_names": list(spec.context_names),
            "exercises": exercises}


def redefined(exercise: Exercise, judge: type) -> list[str]:
    """Names of the judge class that the exercise's own classes define again, other than where references come from.

    The release runs the judge class alone (its references recorded): anything else a lab module's class
    changed about judging (a tolerance, a section, a method) would make `check` say something else.
    """
    judged = {name for kind in judge.__mro__ if kind is not object for name in vars(kind)}
    allowed = set(judging.REFERENCE_METHODS) | {"cases"}
    return sorted({name for kind in type(exercise).__mro__ if kind not in judge.__mro__ for name in vars(kind)
                   if name in judged and name not in allowed and not name.startswith("__")})


def record_judge(exercise: Exercise) -> dict:
    """The judge class's name, and each public case with its data and its references, as plain data."""
    judge = judging.judge_class(exercise)
    changed = redefined(exercise, judge)
    if changed:
        raise SystemExit(f"release: {type(exercise).__name__} redefines {', '.join(changed)} of {judge.__name__}: "
                         "the release's check would judge otherwise; move it into the judge class")
    cases = _public(exercise, {})
    names = [case.name for case in cases]
    if len(set(names)) != len(names):
        raise SystemExit(f"release: {exercise.id} has two public cases of one name; the release finds them by name")
    module = judge.__module__.rsplit(".", 1)[-1]
    return {"mode": "judge", "judge": f"{module}.{judge.__name__}",
            "cases": [{"name": case.name, "label": _label(case), "call": case.call, "data": judging.to_plain(case.data),
                       "reference": judging.to_plain(exercise.reference(case)),
                       "slip_references": judging.to_plain(exercise.slip_references(case))} for case in cases]}


def record_all() -> dict:
    return {lab_id: record_lab(lab_id) for lab_id in LAB_IDS}


def public_decoders() -> dict[str, str]:
    from ..labs import lab03

    return {"correct": lab03.decoder_source(None), **{bug: lab03.decoder_source(bug) for bug in lab03.BUG_LINES}}


def messages() -> dict:
    """Every message of every domain in every listed language, through i18n's public interface."""
    import labbook.texts  # noqa: F401  (adds the book's own domain)

    for lab_id in LAB_IDS:
        get_lab(lab_id)
    domains = {domain: {key: {lang: i18n.text(key, lang) for lang in i18n.ALL_LANGS} for key in i18n.keys(domain)}
               for domain in i18n.DOMAINS}
    plurals: dict[str, dict[str, list[str]]] = {}
    for key in (key for domain in i18n.DOMAINS for key in i18n.keys(domain)):
        for lang in i18n.ALL_LANGS:
            forms = i18n.plural_forms(key, lang)
            if forms:
                plurals.setdefault(key, {})[lang] = list(forms)
    return {"langs": list(i18n.LANGS), "all_langs": list(i18n.ALL_LANGS), "names": dict(i18n.LANGUAGE_NAMES),
            "decimal_comma": [lang for lang in i18n.ALL_LANGS if i18n.decimal_comma(lang)], "domains": domains,
            "plurals": plurals, "plural_rules": {lang: i18n.plural_rule(lang) for lang in i18n.ALL_LANGS}}


def dump(path: Path, data) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True), encoding="utf-8")
