"""lab04's judges: kv_cache_mask and cached_attention, on a reference given per case.

The exercises themselves (cases, the masks and the numpy attention with their
slips) are in lab04.py; these classes hold everything else about them, and the
student release runs them as they are on the references recorded for the
public cases (labs/judging.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..exercise import Array, Case, Feedback, Result, describe, first_wrong_entry, shape_mismatch
from .judging import close_nan, is_float_array
from .judging03 import LabExercise

ATOL = 1e-5
MATCH_ATOL = 1e-4

# Where the book explains each mistake (chapter §section); the others point to the lab's own section.
CHAPTER_SECTIONS = {
    "top_left": "08 §7",
    "diagonal_masked": "08 §3",
    "off_by_one": "08 §4",
    "inverted": "08 §5",
    "no_mask": "09 §1",
    "past_blocked": "09 §1",
    "transposed": "09 §1",
    "forgot_scale": "03 §2",
    "wrong_axis": "03 §4",
    "past_ignored": "09 §1",
    "cache_not_appended": "09 §1",
    "cache_order": "09 §1",
    "wrong_cache": "09 §1",
}


# The slips of kv_cache_mask, tried in this order (lab04.cache_mask draws each).
MASK_SLIPS = ("top_left", "diagonal_masked", "off_by_one", "inverted", "no_mask", "past_blocked")


class KVCacheMaskJudge(LabExercise):
    """kv_cache_mask(T_new, T_past): reference(case) the right mask, bool (T_new, T_past + T_new);
    slip_references(case) [(slip, its mask)] in the order of MASK_SLIPS."""

    id = "kv_cache_mask"
    points = 3
    section = "09 §1"
    lab_section = "1"
    chapter_sections = CHAPTER_SECTIONS
    diagnoses = MASK_SLIPS + ("transposed",)

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        sizes = [tuple(case.call["args"]) for case in cases]
        for case, (T_new, T_past), got in zip(cases, sizes, values):
            shape = (T_new, T_past + T_new)
            if isinstance(got, Array) and got.is_bool and got.shape == shape[::-1] and shape[0] != shape[1]:
                if np.array_equal(got.values.T, self.reference(case)):
                    return self.diagnosed("transposed")
            if not (isinstance(got, Array) and got.is_bool and got.shape == shape):
                return shape_mismatch(self, case, got, f"bool {shape}")
        got = [value.values for value in values]
        rights = [self.reference(case) for case in cases]
        if all(np.array_equal(g, right) for g, right in zip(got, rights)):
            return self.passed()
        slips = [self.slip_references(case) for case in cases]  # per case: [(slip, its mask)] in MASK_SLIPS' order
        for number, slip in enumerate(MASK_SLIPS):
            if all(np.array_equal(g, case_slips[number][1]) for g, case_slips in zip(got, slips)):
                return self.diagnosed(slip)
        index = next(i for i, (g, right) in enumerate(zip(got, rights)) if not np.array_equal(g, right))
        position = tuple(int(i) for i in np.argwhere(got[index] != rights[index])[0])
        return self.wrong_entry(cases[index], position, str(bool(got[index][position])))


class CachedAttentionJudge(LabExercise):
    """cached_attention(q, k, v, past_k=None, past_v=None) -> (out, k_all, v_all).

    reference(case): {"out": the right output, "k_all", "v_all": the right caches, "T_past": the length of
    the past, "k_shape": the shape of the new k, "swapped": the caches with past and new in the wrong
    order}; slip_references(case): [(diagnosis, its output)] in the order of lab04.ATTENTION_SLIPS.
    """

    id = "cached_attention"
    points = 5
    section = "09 §1"
    lab_section = "3"
    chapter_sections = CHAPTER_SECTIONS
    diagnoses = ("top_left", "no_mask", "diagonal_masked", "forgot_scale", "wrong_axis", "past_ignored",
                 "cache_not_appended", "cache_order", "wrong_cache", "wrong_return")

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        references = [self.reference(case) for case in cases]
        for case, reference, got in zip(cases, references, values):
            shapes = (reference["out"].shape, reference["k_all"].shape, reference["v_all"].shape)
            expected = "tuple(" + ", ".join(f"float32 {s}" for s in shapes) + ")"
            if not (isinstance(got, tuple) and len(got) == 3):
                return self.wrong_return(case, got, expected)
            if reference["T_past"] and isinstance(got[1], Array) and got[1].shape == tuple(reference["k_shape"]):
                return self.diagnosed("cache_not_appended")
            if not all(is_float_array(part, shape) for part, shape in zip(got, shapes)):
                return shape_mismatch(self, case, got, expected)
        for case, reference, got in zip(cases, references, values):
            if not (close_nan(got[1].values, reference["k_all"], ATOL)
                    and close_nan(got[2].values, reference["v_all"], ATOL)):
                swapped_k, swapped_v = reference["swapped"]
                if close_nan(got[1].values, swapped_k, ATOL) and close_nan(got[2].values, swapped_v, ATOL):
                    return self.diagnosed("cache_order")
                return self.diagnosed("wrong_cache", case=case.shown)
        outs = [value[0].values for value in values]
        want = [reference["out"] for reference in references]
        right = [close_nan(g, w, ATOL) for g, w in zip(outs, want)]
        if all(right):
            return self.passed()
        slips = [self.slip_references(case) for case in cases]  # per case: [(name, its output)], in the same order
        for number, (name, _) in enumerate(slips[0]):
            if all(self.matches(g, case_slips[number][1]) for g, case_slips in zip(outs, slips)):
                return self.diagnosed(name)
        index = right.index(False)
        position = first_wrong_entry(np.nan_to_num(outs[index], nan=1e30), want[index], ATOL)
        return self.wrong_entry(cases[index], position, f"{outs[index][position]:.4g}")

    @staticmethod
    def matches(got: np.ndarray, candidate: np.ndarray) -> bool:
        # A query with no key left (diagonal blocked, no cache) is NaN, zeros or the mean of V
        # depending on how it was masked: compare where the candidate is defined.
        defined = ~np.isnan(candidate)
        return close_nan(got[defined], candidate[defined], MATCH_ATOL)

    def wrong_return(self, case: Case, got: Any, expected: str) -> Result:
        return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                           Feedback("common.wrong_type", {"case": case.shown, "expected": expected, "got": describe(got)}),
                           Feedback("lab04.wrong_return"), diagnosis="wrong_return")

