"""Recorders for the exercises of labs 02-04 that judge whole answers with numpy references.

Each records, for the public cases only, the references' outputs that the
exercise's judge compares with (the right answer and every slip it tries, in
order) and the feedback of each diagnosis; the student release's
autograder/judges.py judges with them in the same order. A recorder calls the
exercise's own reference functions: there is one definition of each exercise.
"""
from __future__ import annotations

import numpy as np

from ..exercise import Exercise, Feedback
from ..labs import lab02, lab03, lab04
from .replay import plain_array, plain_result


def _public(exercise: Exercise) -> list:
    return [case for case in exercise.cases({}, None) if case.public]


def _feedback(item: Feedback) -> list:
    return [item.key, dict(item.params)]


def record_kv_cache_mask(exercise: lab04.KVCacheMaskExercise) -> dict:
    cases = []
    for case in _public(exercise):
        n, p = case.call["args"]
        cases.append({"name": case.name, "call": case.call, "shape": [n, p + n],
                      "right": plain_array(lab04.cache_mask(n, p)),
                      "slips": [[slip, plain_array(lab04.cache_mask(n, p, slip))] for slip in lab04.MASK_SLIPS]})
    diagnoses = {name: plain_result(exercise.diagnosed(name)) for name in (*lab04.MASK_SLIPS, "transposed")}
    return {"mode": "kv_cache_mask", "cases": cases, "diagnoses": diagnoses,
            "pointer": _feedback(exercise.pointer(None)), "passed": plain_result(exercise.passed())}


def record_cached_attention(exercise: lab04.CachedAttentionExercise) -> dict:
    cases = []
    for case in _public(exercise):
        q, k, v, k_all, v_all, T_past = lab04.attention_inputs(case)
        shapes = (q.shape[:-1] + v.shape[-1:], k_all.shape, v_all.shape)
        swapped = (np.concatenate([k, k_all[..., :T_past, :]], axis=-2),
                   np.concatenate([v, v_all[..., :T_past, :]], axis=-2))
        cases.append({
            "name": case.name, "call": case.call, "T_past": int(T_past), "k_shape": list(k.shape),
            "shapes": [list(s) for s in shapes],
            "expected_text": "tuple(" + ", ".join(f"float32 {s}" for s in shapes) + ")",
            "k_all": plain_array(k_all), "v_all": plain_array(v_all),
            "swapped": [plain_array(swapped[0]), plain_array(swapped[1])],
            "want": plain_array(lab04.attend(q, k_all, v_all)),
            "slips": [[name, plain_array(lab04.attend(q, k_all, v_all, **slip))] for name, slip in lab04.ATTENTION_SLIPS],
            "wrong_cache": plain_result(exercise.diagnosed("wrong_cache", case=case.name)),
        })
    names = [name for name, _ in lab04.ATTENTION_SLIPS] + ["cache_not_appended", "cache_order"]
    return {"mode": "cached_attention", "cases": cases, "atol": lab04.ATOL, "match_atol": lab04.MATCH_ATOL,
            "diagnoses": {name: plain_result(exercise.diagnosed(name)) for name in names},
            "pointer": _feedback(exercise.pointer(None)), "passed": plain_result(exercise.passed())}


def record_self_attention(exercise: lab03.CausalSelfAttentionExercise) -> dict:
    cases = []
    for case in _public(exercise):
        x, state, heads, lengths, side = lab03.case_inputs(case)
        slips = []
        for name, slip in lab03.SLIPS:
            candidate = lab03.self_attention(x, state, heads, lengths, side, **slip)
            slips.append([name, None if candidate is None else plain_array(candidate)])
        cases.append({"name": case.name, "call": case.call, "x_shape": list(x.shape), "heads": heads,
                      "lengths": None if lengths is None else [int(n) for n in lengths], "side": side,
                      "padding": bool(case.data["padding"]),
                      "want": plain_array(lab03.self_attention(x, state, heads, lengths, side)), "slips": slips})
    names = {name for name, _ in lab03.SLIPS} | {"padding_wrong", "heads_wrong"}
    return {"mode": "self_attention", "cases": cases, "atol": lab03.ATOL, "match_atol": lab03.MATCH_ATOL,
            "padding_slips": list(lab03.PADDING_SLIPS), "padding_points": exercise.padding_points,
            "diagnoses": {name: plain_result(exercise.diagnosed(name)) for name in sorted(names)},
            "layers_missing": plain_result(exercise.diagnosed("layers_missing", message="{message}")),
            "pointer": _feedback(exercise.pointer(None)), "passed": plain_result(exercise.passed())}


def record_causal_attention(exercise: lab02.CausalAttention) -> dict:
    cases = []
    for case in _public(exercise):
        as_input = lab02.f32 if case.data.get("dtype", "float32") == "float32" else np.asarray
        Q, K, V = (as_input(case.data[name]) for name in ("Q", "K", "V"))
        right_w = lab02.right_weights(Q, K)
        _, slips = lab02.weights_and_slips(Q, K)
        cases.append({"name": case.name, "call": case.call, "batched": bool(case.data["batched"]),
                      "T": int(Q.shape[-2]), "right_w": plain_array(right_w), "right_out": plain_array(right_w @ V),
                      "transposed_out": plain_array(np.swapaxes(right_w, -1, -2) @ V),
                      "slips": [[name, plain_array(slip)] for name, slip in slips]})
    names = {name for name in exercise.diagnoses}
    keys = {name: (f"lab02.{name}" if f"lab02.{name}" in _catalogue() else f"diagnosis.{name}") for name in names}
    return {"mode": "causal_attention", "cases": cases, "atol": lab02.ATOL, "slip_atol": lab02.SLIP_ATOL,
            "keys": keys, "sections": {name: exercise.sections.get(name, exercise.section) for name in names},
            "passed": plain_result(exercise.passed())}


def record_jacobian_leaks(exercise: lab02.JacobianLeaks) -> dict:
    from ..labs import bugs02

    cases = []
    for case in _public(exercise):
        impl = bugs02.impl_of(lab02._impl_data(case))
        T = case.data["kwargs"]["T"]
        impl_key = "position_leak" if case.data.get("base") == bugs02.POSITION_LEAK else case.data["impl"]
        cases.append({"name": case.name, "call": case.call, "T": T, "d": case.data["kwargs"]["d"],
                      "impl": case.data["impl"], "impl_key": impl_key,
                      "impl_params": {k: case.data[k] for k in ("query", "key") if k in case.data},
                      "want": plain_array(impl.pattern(T))})
    return {"mode": "jacobian_leaks", "cases": cases, "section": exercise.section,
            "sections": dict(exercise.sections), "passed": plain_result(exercise.passed())}


def _catalogue() -> dict:
    from .. import i18n

    return i18n.catalogue()


RECORDERS = {
    lab04.KVCacheMaskExercise: record_kv_cache_mask,
    lab04.CachedAttentionExercise: record_cached_attention,
    lab03.CausalSelfAttentionExercise: record_self_attention,
    lab02.CausalAttention: record_causal_attention,
    lab02.JacobianLeaks: record_jacobian_leaks,
}


def record_perturbation_test(exercise: lab02.PerturbationTest) -> dict:
    from ..labs import bugs02

    cases = []
    for case in _public(exercise):
        name = case.data.get("base", case.data["impl"])
        cases.append({"name": case.name, "call": case.call, "group": name, "key": case.data.get("key"),
                      "query": case.data.get("query"), "wseed": int(case.data["wseed"])})
    diagnoses = {name: plain_result(exercise.diagnose_test(name)) for name in exercise.diagnoses}
    return {"mode": "perturbation_test", "cases": cases, "correct": list(exercise.CORRECT),
            "leak_bugs": list(exercise.LEAK_BUGS), "nan_defect": exercise.NAN_DEFECT,
            "checks": list(exercise.CHECKS), "position_leak": bugs02.POSITION_LEAK,
            "faint_leak": bugs02.FAINT_LEAK,
            "section": exercise.section, "sections": dict(exercise.sections), "diagnoses": diagnoses,
            "passed": plain_result(exercise.passed(Feedback("lab02.caught_all", {})))}


def record_prefix_test(exercise: lab03.PrefixTestExercise) -> dict:
    cases = []
    for case in _public(exercise):
        cases.append({"name": case.name, "call": case.call, "bug": case.data["bug"],
                      "optional": bool(case.data["optional"]), "leak": case.data["leak"],
                      "vocab": case.data["vocab"]})
    pointers = {name: _feedback(exercise.pointer(name)) for name in exercise.diagnoses}
    return {"mode": "prefix_test", "cases": cases, "checks": list(lab03.CHECKS), "sweep": lab03.SWEEP,
            "position_leak": lab03.POSITION_LEAK, "faint_leak": lab03.FAINT_LEAK, "pointers": pointers,
            "diagnoses": {name: plain_result(exercise.diagnosed(name)) for name in ("always_false", "rejects_correct")},
            "passed": plain_result(exercise.passed(Feedback("lab03.caught_all", {})))}


RECORDERS[lab02.PerturbationTest] = record_perturbation_test
RECORDERS[lab03.PrefixTestExercise] = record_prefix_test
