"""Record, from the exercise definitions, what the student release's `check` needs: plain data only.

For every public case: the call, the right output and, where the definition
names its slips case by case (lab01's TensorExercise), every slip's output with
the exact feedback the definition gives it; labs 02-04 in replay_labs.py. No hidden case is drawn (no seed is used), and no code is
recorded except the public decoders that lab03's notebook shows.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .. import i18n
from ..exercise import Exercise, Result
from ..labs import LAB_IDS, get_lab
from ..labs import lab00, lab01, lab05, tensors


def plain_result(result: Result) -> dict:
    return {"points": result.points, "status": result.status, "diagnosis": result.diagnosis,
            "feedback": [[item.key, dict(item.params)] for item in result.feedback]}


def plain_array(values: np.ndarray) -> dict:
    values = np.asarray(values)
    is_bool = values.dtype == bool
    flat = values.reshape(-1).tolist() if is_bool else [float(x) for x in values.astype(float).reshape(-1)]
    return {"values": flat, "bool": bool(is_bool), "shape": list(values.shape)}


def _public(exercise: Exercise, ctx: dict) -> list:
    return [case for case in exercise.cases(ctx, None) if case.public]


def record_tensor(exercise: tensors.TensorExercise) -> dict:
    cases = []
    for case in _public(exercise, {}):
        want = exercise.expected(case)
        record = {"name": case.name, "call": case.call, "expected": plain_array(want),
                  "expected_text": f"{exercise.expected_kind} {tensors.shape_str(want.shape)}",
                  "slips": [{"value": plain_array(slip), "result": plain_result(exercise.diagnose(name, key, **params))}
                            for name, slip, key, params in exercise.slips(case)]}
        if isinstance(exercise, lab01.CausalMask):
            record["special"] = {"kind": "nan", "result": plain_result(exercise.diagnose("nan_in_mask"))}
        elif isinstance(exercise, lab01.LengthsExercise):
            result = exercise.diagnose("padding_shape", got="", expected=tensors.shape_str(want.shape))
            record["special"] = {"kind": "reshaped", "result": plain_result(result)}
        cases.append(record)
    return {"mode": "tensor", "expected_kind": exercise.expected_kind, "atol": exercise.atol,
            "slip_atol": exercise.slip_atol, "block": tensors.BLOCK, "cases": cases,
            "passed": plain_result(exercise.passed())}


def is_tensor_exercise(exercise: Exercise) -> bool:
    """Judged case by case with TensorExercise's own loop (no override of how cases are judged)."""
    kind = type(exercise)
    # kind_ok: the answer's type, as TensorExercise reads expected_kind ("bool", "float") or lab05's int64 answers
    known_kinds = (tensors.TensorExercise.kind_ok, lab05.LongExercise.kind_ok)
    return (isinstance(exercise, tensors.TensorExercise) and kind.judge is Exercise.judge
            and kind.kind_ok in known_kinds and kind.normalise is tensors.TensorExercise.normalise
            and kind.same is tensors.TensorExercise.same and kind.same_slip is tensors.TensorExercise.same_slip
            and kind.judge_outputs is tensors.TensorExercise.judge_outputs
            and kind.judge_case is tensors.TensorExercise.judge_case
            and kind.special in (tensors.TensorExercise.special, lab01.CausalMask.special,
                                 lab01.PaddingMask.special, lab01.CombinedMask.special))


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
        elif type(exercise) in RECORDERS:
            exercises.append({**common, **RECORDERS[type(exercise)](exercise)})
        else:  # a judge the release cannot replay would give other feedback than the grader's: stop
            raise SystemExit(f"release: no recorder for {lab_id}.{exercise.id} ({type(exercise).__name__}); "
                             "add one to autograder/release/replay_labs.py and a judge to its student package")
    return {"id": lab_id, "max_score": spec.max_score, "context_names": list(spec.context_names),
            "exercises": exercises}


from .replay_labs import RECORDERS  # noqa: E402  (they use the helpers above)


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
    return {"langs": list(i18n.LANGS), "all_langs": list(i18n.ALL_LANGS), "names": dict(i18n.LANGUAGE_NAMES),
            "domains": domains}


def dump(path: Path, data) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True), encoding="utf-8")
