"""lab03's judges: CausalSelfAttention and prefix_test, on a reference given per case.

The exercises themselves (cases, the numpy forward pass and its slips, the
decoders) are in lab03.py; these classes hold everything else about them, and
the student release runs them as they are on the references recorded for the
public cases (labs/judging.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import evidence, i18n
from ..exercise import Case, Feedback, Result, decode, describe, first_wrong_entry, shape_mismatch
from .judging import Judge, as_bool, close_nan, is_float_array

ATOL = 1e-5  # the issue: "compare within 1e-5"
MATCH_ATOL = 1e-4  # recognising a slip: float32 student output against a float64 candidate

# Where the book explains each mistake (chapter §section); a diagnosis not listed
# here is specific to this lab and points to the lab's own section.
CHAPTER_SECTIONS = {
    # CausalSelfAttention
    "no_mask": "02 §0",
    "wrong_triangle": "03 §3",
    "diagonal_masked": "08 §3",
    "forgot_scale": "03 §2",
    "scale_d_model": "06 §4",
    "wrong_axis": "03 §4",
    "heads_not_split": "06 §0",
    "wrong_head_split": "06 §4",
    "heads_wrong": "06 §4",
    "mask_not_shared": "06 §1",
    "mask_batch_on_heads": "06 §4",
    "padding_ignored": "05 §2",
    "padding_queries": "05 §5",
    "padding_side_ignored": "05 §2",
    "padding_wrong": "05 §2",
    # prefix_test
    "always_true": "07 §2",
    "missed_bugs": "07 §2",
    "always_false": "07 §6",
    "rejects_correct": "07 §6",
    "missed_positions": "07 §6",
    "only_next_token": "07 §6",
    "tolerance_too_loose": "07 §6",
    "no_evidence": "07 §2",
}


# The slips of CausalSelfAttention that concern padding only (lab03.SLIPS lists every slip, in order).
PADDING_SLIPS = ("mask_batch_on_heads", "padding_side_ignored", "padding_ignored", "padding_queries")

# prefix_test: the whole-model bugs graded one point each; the position sweep (single-position leaks at
# every t and of every distance, plus one faint leak) is the fifth point.
BUGS: tuple[str, ...] = ("no_mask", "off_by_one", "time_axis_norm", "shifted_input")
POSITION_LEAK = "position_leak"
FAINT_LEAK = "faint_leak"
MIDDLE_LEAK = "middle_leak"  # the lab's own demonstration decoder (§4): position 0 reads token T // 2
SWEEP_BUGS = (POSITION_LEAK, FAINT_LEAK, MIDDLE_LEAK)
SWEEP = "positions"
CHECKS: tuple[str, ...] = BUGS + (SWEEP,)
CRASHED = "__prefix_test_crashed__"  # marks, in the judged values, a buggy decoder the test raised on
UNSUPPORTED = "__prefix_test_unsupported__"  # marks a rejection the test's own calls do not back up


class LabExercise(Judge):
    """Diagnoses point to chapter 03 where it explains the step, else to this lab's own section."""

    lab_section = ""
    chapter_sections: dict[str, str] = CHAPTER_SECTIONS

    def diagnosed(self, diagnosis: str, points: float = 0.0, **params) -> Result:
        key = f"{self.lab}.{diagnosis}"
        if not i18n.has(key):
            key = f"diagnosis.{diagnosis}"
        feedback = [Feedback("common.failed", {"name": self.id}), Feedback(key, params)]
        return self.result(points, "failed", *feedback, self.pointer(diagnosis), diagnosis=diagnosis)

    def pointer(self, diagnosis: str | None) -> Feedback:
        chapter = self.chapter_sections.get(diagnosis or "")
        if chapter:
            return Feedback("common.see_section", {"section": chapter})
        return Feedback(f"{self.lab}.see_lab", {"section": self.lab_section})

    def wrong_entry(self, case: Case, position: tuple[int, ...], got: str) -> Result:
        """No slip fits: the case and the first wrong entry with the student's value, never the right one."""
        return self.result(
            0, "failed",
            Feedback("common.failed", {"name": self.id}),
            Feedback("common.wrong_entry", {"case": case.shown, "index": ", ".join(map(str, position)), "got": got}),
            self.pointer(None),
            diagnosis="wrong_values",
        )


# ---------------------------------------------------------------- real positions
def real_positions(T: int, lengths, side: str = "right") -> np.ndarray:
    """(B, T) bool: True at the real tokens; padding on the right (positions < length) or on the left."""
    positions = np.arange(T)[None, :]
    lengths = np.asarray(lengths)[:, None]
    return positions >= T - lengths if side == "left" else positions < lengths


def compared_rows(out: np.ndarray, lengths, side: str = "right", skip_first: bool = False) -> np.ndarray:
    """The output with every padding query position set to 0, and with `skip_first` each sequence's first
    real position too (the one a masked diagonal leaves without any key)."""
    B, T = out.shape[:2]
    keep = np.ones((B, T), dtype=bool) if lengths is None else real_positions(T, lengths, side)
    if skip_first:
        first = keep.argmax(axis=1)  # (B,): the first real position of each sequence
        keep = keep.copy()
        keep[np.arange(B), first] = False
    return np.where(keep[:, :, None], out, 0.0)


def real_rows(out: np.ndarray, lengths, side: str = "right") -> np.ndarray:
    """The output with every padding query position set to 0."""
    return compared_rows(out, lengths, side)


# ---------------------------------------------------------------- CausalSelfAttention
class CausalSelfAttentionJudge(LabExercise):
    """CausalSelfAttention(d_model, n_heads): forward(x, lengths, padding_side) at the real positions.

    reference(case): {"out": the right output (B, T, d_model), "lengths": None or ints, "side": "right" or
    "left", "heads": n_heads}; slip_references(case): [(diagnosis, that slip's output or None)] in the
    order of lab03.SLIPS (None: the slip would have raised on this case).
    """

    id = "CausalSelfAttention"
    kind = "module"
    points = 5
    padding_points = 2  # of `points`: the cases with `lengths`
    section = "06 §1"
    lab_section = "1"
    diagnoses = (
        "no_mask", "diagonal_masked", "wrong_triangle", "forgot_scale", "scale_d_model", "wrong_axis",
        "heads_not_split", "wrong_head_split", "heads_wrong", "mask_not_shared", "mask_batch_on_heads",
        "padding_side_ignored", "padding_ignored", "padding_queries", "padding_wrong", "layers_missing",
    )

    def judge(self, ctx: dict, cases: list[Case], outputs: list[dict]) -> Result:
        for case, output in zip(cases, outputs):
            error = output.get("error")
            if error and "state_dict" in error.get("message", ""):
                # The module could not take the reference weights: name the interface, not a traceback.
                return self.diagnosed("layers_missing", message=error["message"][:160])
        return super().judge(ctx, cases, outputs)

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        references = [self.reference(case) for case in cases]
        for case, reference, got in zip(cases, references, values):
            shape = reference["out"].shape  # (B, T, d_model), the shape of x
            if not is_float_array(got, shape):
                return shape_mismatch(self, case, got, f"float32 {tuple(shape)}")
        got = [value.values for value in values]
        want = [reference["out"] for reference in references]
        right = [close_nan(real_rows(g, r["lengths"], r["side"]), real_rows(w, r["lengths"], r["side"]), ATOL)
                 for g, w, r in zip(got, want, references)]
        if all(right):
            return self.passed()
        plain = [not case.data["padding"] for case in cases]
        padding_only = all(ok for ok, p in zip(right, plain) if p)
        slips = [self.slip_references(case) for case in cases]  # per case: [(name, output or None)] in SLIPS' order
        for number, (name, _) in enumerate(slips[0]):
            if padding_only != (name in PADDING_SLIPS):
                continue
            if self.matches_slip(got, references, [case_slips[number][1] for case_slips in slips],
                            skip_first=(name == "diagonal_masked"), padding_rows=(name == "padding_ignored")):
                return self.diagnosed(name, points=self.points - self.padding_points if padding_only else 0)
        if padding_only:
            return self.diagnosed("padding_wrong", points=self.points - self.padding_points)
        one_head = [ok for ok, reference in zip(right, references) if reference["heads"] == 1]
        if one_head and all(one_head):
            return self.diagnosed("heads_wrong")
        index = next(i for i, ok in enumerate(right) if not ok)
        lengths, side = references[index]["lengths"], references[index]["side"]
        position = first_wrong_entry(np.nan_to_num(real_rows(got[index], lengths, side), nan=1e30),
                                     real_rows(want[index], lengths, side), ATOL)
        return self.wrong_entry(cases[index], position, f"{got[index][position]:.4g}")

    @staticmethod
    def matches_slip(got: list[np.ndarray], references: list[dict], candidates: list[np.ndarray | None],
                     skip_first: bool = False, padding_rows: bool = False) -> bool:
        """Whether every output equals the slip's at the real positions (and at the padding ones too, with
        `padding_rows`: ignoring `lengths` leaves them reading the sequence like any other position)."""
        for value, reference, candidate in zip(got, references, candidates):
            lengths, side = reference["lengths"], reference["side"]
            if candidate is None:
                return False
            if not padding_rows:
                # A masked diagonal leaves the first real position without a key: NaN with -inf, zeros
                # with SDPA, the mean of V with -1e9; whatever the student wrote there, the rest tells.
                value = compared_rows(value, lengths, side, skip_first)
                candidate = compared_rows(candidate, lengths, side, skip_first)
            if not close_nan(value, candidate, MATCH_ATOL):
                return False
        return True


# ---------------------------------------------------------------- prefix_test
class PrefixTestJudge(LabExercise):
    """prefix_test(model_fn, vocab_size, T=8, seed=0) -> bool, graded on a correct and on leaking decoders.

    Five points: one per whole-model bug (BUGS) and one for the position
    sweep: decoders in which one position t also reads one later token s,
    s = t + 1 at every t, a farther s at every t, and every distance s - t,
    drawn per seed (lab03.sweep_leaks), the lab's middle leak, and one decoder
    whose leak is faint (below 1e-3, far above rounding); all of them must be
    rejected. A test that catches the next-token leaks and none of the farther
    ones gets its own diagnosis (only_next_token). A rejection counts only
    when the test's own recorded calls show the leak (two inputs that agree up
    to t whose logits at or before t differ, on the grader's copy of the
    decoder: trusted_function). Nothing counts unless the correct decoder gets True.
    """

    id = "prefix_test"
    points = len(CHECKS)
    section = "07 §2"
    lab_section = "3"
    diagnoses = ("always_true", "always_false", "rejects_correct", "missed_positions", "only_next_token",
                 "tolerance_too_loose", "crashes", "missed_bugs", "wrong_type", "no_evidence")

    def reference(self, case: Case) -> Any:
        return None  # the decoder the test is run on, trusted_function(case), is all the reference

    def judge(self, ctx: dict, cases: list[Case], outputs: list[dict]) -> Result:
        # Cases of buggy decoders are "optional" for the base class: a crash there costs that
        # bug only, so it is marked here, while the raw outputs are still at hand.
        marked = []
        for case, output in zip(cases, outputs):
            if case.data["bug"] != "correct" and "ok" not in output:
                error = output.get("error") or {"type": next(iter(output), "error"), "message": ""}
                output = {"ok": {CRASHED: {"type": error["type"], "message": error["message"]}}}
            elif (case.data["bug"] != "correct" and "ok" in output and as_bool(decode(output["ok"])) is False
                  and not self.witnessed(case, output)):
                output = {"ok": {UNSUPPORTED: True}}
            marked.append(output)
        return super().judge(ctx, cases, marked)

    def witnessed(self, case: Case, output: dict) -> bool:
        inputs = evidence.recorded_inputs(output)
        if not inputs:
            return False
        model = self.trusted_function(case)
        vocab = case.data["vocab"]

        def run(ids: np.ndarray) -> np.ndarray:
            import torch

            if ids.ndim != 2 or ids.shape[1] > 64 or ids.shape[0] > 64 or (ids < 0).any() or (ids >= vocab).any():
                raise ValueError("not token ids of this decoder")
            with torch.no_grad():
                return model(torch.tensor(ids, dtype=torch.long)).double().numpy()

        leak = tuple(case.data["leak"]) if case.data["leak"] else None  # a list in the release's data
        key = ("lab03", case.data["bug"], vocab, case.data["decoder_seed"], leak)
        return evidence.witnessed(inputs, run, feature_dims=0, key=key)

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        crashes = {}
        verdicts: dict[str, list] = {}
        missed_sweep: list[tuple[str, tuple[int, int], Any]] = []  # (bug, leak, verdict) of the sweep's misses
        distant: set[tuple[str, tuple[int, int]]] = set()  # (bug, leak): the sweep's leaks from 2+ tokens ahead
        for case, value in zip(cases, values):
            check = SWEEP if case.data["bug"] in SWEEP_BUGS else case.data["bug"]
            if isinstance(value, dict) and CRASHED in value:  # the test raised on a buggy decoder
                crashes.setdefault(check, (case, value[CRASHED]))
                verdict = None
            elif isinstance(value, dict) and UNSUPPORTED in value:
                verdict = "unsupported"
            else:
                verdict = as_bool(value)
                if verdict is None:
                    key = "lab03.returned_none" if value is None else "common.not_a_bool"
                    return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                                       Feedback(key, {"case": case.shown, "got": describe(value)}),
                                       Feedback("lab03.wrong_type"), diagnosis="wrong_type")
            if check == SWEEP and case.data["leak"][1] - case.data["leak"][0] > 1:
                distant.add((case.data["bug"], tuple(case.data["leak"])))
            if check == SWEEP and verdict is not False:
                missed_sweep.append((case.data["bug"], tuple(case.data["leak"]), verdict))
            verdicts.setdefault(check, []).append(verdict)
        if not all(v is True for v in verdicts["correct"]):
            flagged_all = all(v in (False, "unsupported") for check in CHECKS for v in verdicts[check])
            return self.diagnosed("always_false" if flagged_all else "rejects_correct")
        caught = [check for check in CHECKS if all(v is False for v in verdicts[check])]
        missed = [check for check in CHECKS if check not in caught]
        if not missed:
            return self.passed(Feedback("lab03.caught_all", {}))
        feedback = [Feedback("common.failed", {"name": self.id}),
                    Feedback("lab03.passed_checks", {"caught": len(caught), "total": len(CHECKS)})]
        for check in missed:
            if check in crashes:
                continue
            if check == SWEEP:
                positions = sorted({leak[0] for bug, leak, _ in missed_sweep if bug == POSITION_LEAK})
                if positions:
                    feedback.append(Feedback("lab03.missed.positions",
                                             {"positions": ", ".join(str(t) for t in positions),
                                              "count": len(positions)}, count="count"))
                for bug, leak, _ in missed_sweep:
                    if bug == FAINT_LEAK:
                        feedback.append(Feedback("lab03.missed.faint_leak", {"position": leak[0], "token": leak[1]}))
                    elif bug == MIDDLE_LEAK:
                        feedback.append(Feedback("lab03.missed.middle_leak", {"token": leak[1]}))
            else:
                feedback.append(Feedback(f"lab03.missed.{check}"))
        said = [v for check in CHECKS for v in verdicts[check]]
        if crashes:
            crashed, error = next(iter(crashes.values()))
            feedback.append(Feedback("lab03.crashes", {"bug": crashed.shown, "type": error["type"],
                                                       "message": str(error["message"])[:160]}))
            diagnosis = "crashes"
        elif not caught and all(v is True for v in said):
            diagnosis = "always_true"
        elif "unsupported" in said:
            diagnosis = "no_evidence"
        elif missed == [SWEEP] and all(bug == FAINT_LEAK for bug, _, _ in missed_sweep):
            diagnosis = "tolerance_too_loose"  # every leak caught but the faint one: the comparison is too lax
        elif missed == [SWEEP] and {(bug, leak) for bug, leak, _ in missed_sweep} == distant:
            diagnosis = "only_next_token"  # blind to exactly the leaks from two or more tokens ahead
        elif missed == [SWEEP]:
            diagnosis = "missed_positions"
        else:
            diagnosis = "missed_bugs"
        if diagnosis == "only_next_token":
            position, token = min(leak for bug, leak, _ in missed_sweep if bug == POSITION_LEAK)  # the first, as an example
            feedback.append(Feedback("lab03.only_next_token", {"position": position, "token": token}))
        elif diagnosis != "crashes":
            feedback.append(Feedback(f"lab03.{diagnosis}"))
        feedback.append(self.pointer(diagnosis))
        return self.result(len(caught), "failed", *feedback, diagnosis=diagnosis)



i18n.NP_("lab03.missed.positions")  # one position, several positions
