"""lab01, masks: the additive causal mask, boolean masks in both conventions, padding,
causal + padding, and the sliding window.

Each exercise is a function of small integers. Cases are plain data; the judge
rebuilds the right mask with numpy and, when the student's differs, tries the
classic wrong masks (each computed here from the same arguments) to name the
mistake. Nothing in this module runs student code.

The helpers at the top (TensorExercise, tensor checks) are reused by lab02.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from .. import i18n
from ..i18n import N_
from ..exercise import Array, Case, Exercise, Feedback, Result, close, describe, first_difference, value_mismatch
from . import LabSpec

# Any value <= this counts as -inf in an additive mask: -1e4 (BERT's fill, safe in fp16), -1e9 stored in
# bf16 (-998244352) and finfo.min all block as well as -inf does next to finite scores.
BLOCK = -1e4
# Every T of the taught range is a hidden case (T = 1 included): a mask wrong for one size fails.
HIDDEN_T = tuple(range(1, 13))


# ---------------------------------------------------------------- helpers shared with lab02
def tensor_arg(values, dtype: str) -> dict:
    """An argument that reaches the student's code as a torch tensor."""
    return {"__tensor__": np.asarray(values).tolist(), "dtype": dtype}


def rng_for(seed: int, exercise_id: str) -> np.random.Generator:
    """The hidden cases of one exercise: drawn from the instructor's seed, different per exercise."""
    return np.random.default_rng([seed, zlib.crc32(exercise_id.encode())])


def shape_str(shape: tuple) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


def is_torch(value: Any) -> bool:
    return isinstance(value, Array) and not value.dtype.startswith("numpy.")


def is_torch_float(value: Any) -> bool:
    return is_torch(value) and value.is_float


def is_torch_bool(value: Any) -> bool:
    return is_torch(value) and value.dtype == "bool"


def as_additive(values: np.ndarray) -> np.ndarray:
    """Float mask with every value <= BLOCK read as -inf."""
    values = np.asarray(values, dtype=float)
    return np.where(values <= BLOCK, -np.inf, values)


class TensorExercise(Exercise):
    """An exercise whose answer is one tensor per case, with named wrong answers.

    Subclasses give `expected(case)` (np array), `expected_kind` ("bool" or
    "float") and `slips(case)`: (diagnosis, wrong answer, message key or None,
    params) tried in order when the answer is wrong. A slip may have another
    shape than the right answer (a mask that broadcasts wrongly).
    """

    expected_kind = "bool"
    atol = 0.0
    # Diagnosis -> chapter section, where it differs from `section`.
    sections: dict[str, str] = {}

    def expected(self, case: Case) -> np.ndarray:
        raise NotImplementedError

    def slips(self, case: Case) -> list[tuple[str, np.ndarray, str | None, dict]]:
        return []

    # -- messages
    def diagnose(self, diagnosis: str, key: str | None = None, points: float = 0.0,
                 extra: list[Feedback] | None = None, **params) -> Result:
        """Like Exercise.diagnosed, with an optional message key and a section per diagnosis."""
        if key is None:
            key = f"{self.lab}.{diagnosis}"
            if not i18n.has(key):
                key = f"diagnosis.{diagnosis}"
        feedback = [Feedback("common.failed", {"name": self.id}), Feedback(key, params), *(extra or [])]
        section = self.sections.get(diagnosis, self.section)
        if section:
            feedback.append(Feedback("common.see_section", {"section": section}))
        return self.result(points, "failed", *feedback, diagnosis=diagnosis)

    def wrong_type(self, case: Case, got: Any, expected: str) -> Result:
        """Wrong type, dtype or shape: say what was expected and what came back."""
        if not is_torch(got):
            expected = "torch.Tensor " + expected
        return self.result(
            0, "failed",
            Feedback("common.failed", {"name": self.id}),
            Feedback("common.wrong_shape", {"case": case.name, "expected": expected, "got": describe(got)}),
            diagnosis="wrong_shape",
        )

    # -- judging
    def kind_ok(self, got: Any) -> bool:
        return is_torch_bool(got) if self.expected_kind == "bool" else is_torch_float(got)

    def normalise(self, got: Array) -> np.ndarray:
        if self.expected_kind == "float":
            return as_additive(got.values)
        return got.values.astype(bool) if got.is_bool else got.values.astype(float)

    def same(self, got: np.ndarray, want: np.ndarray) -> bool:
        if got.shape != want.shape:
            return False
        if want.dtype == bool:
            return got.dtype == bool and bool(np.array_equal(got, want))
        return close(got, want, self.atol)

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        for case, got in zip(cases, values):
            result = self.judge_case(case, got)
            if result is not None:
                return result
        return self.passed()

    def judge_case(self, case: Case, got: Any) -> Result | None:
        want = self.expected(case)
        expected = f"{self.expected_kind} {shape_str(want.shape)}"
        if not isinstance(got, Array):
            return self.wrong_type(case, got, expected)
        answer = self.normalise(got)
        if self.kind_ok(got) and self.same(answer, want):
            return None
        special = self.special(case, got, answer)
        if special is not None:
            return special
        for diagnosis, slip, key, params in self.slips(case):
            if self.kind_ok(got) and self.same(answer, slip):
                return self.diagnose(diagnosis, key, **params)
        if not self.kind_ok(got) or answer.shape != want.shape:
            return self.wrong_type(case, got, expected)
        index = first_difference(answer.astype(float), want.astype(float), self.atol)
        return value_mismatch(self, case, answer.astype(float), index or (0,) * want.ndim)

    def special(self, case: Case, got: Array, answer: np.ndarray) -> Result | None:
        """A diagnosis that is not a fixed wrong answer (NaN in a mask...)."""
        return None


# ---------------------------------------------------------------- the masks, in numpy
def allowed(T: int) -> np.ndarray:
    """True where query i may read key j (j <= i)."""
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def additive(allowed_mask: np.ndarray) -> np.ndarray:
    return np.where(allowed_mask, 0.0, -np.inf)


def key_padding(lengths: list[int], T: int) -> np.ndarray:
    """(B, T): True at the real tokens of each sequence."""
    return np.arange(T)[None, :] < np.asarray(lengths)[:, None]


def window(T: int, W: int, lo: int = 0) -> np.ndarray:
    """True where i - W + 1 + lo <= j <= i."""
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return (j <= i) & (j >= i - W + 1 + lo)


# ---------------------------------------------------------------- exercises
# Where the book explains each mask (chapter §section); a diagnosis may point elsewhere.
SECTION = "02 §0"  # the rule and the matrix M
CONVENTIONS = "04 §4"  # one mask, many conventions
PADDING = "05 §1"  # the padding mask
COMBINED = "05 §2"  # padding and causal together
WINDOW = "09 §0"  # sliding windows
COMMON = {"diagonal_masked": "02 §2", "convention_inverted": "08 §5", "binary_mask": "02 §1",
          "nan_in_mask": "04 §1", "zero_inf_swapped": "02 §0", "padding_shape": "06 §1",
          "padding_queries": "05 §5"}


class CausalMask(TensorExercise):
    id = "causal_mask"
    points = 2
    section = SECTION
    sections = COMMON
    expected_kind = "float"
    diagnoses = ("wrong_triangle", "diagonal_masked", "zero_inf_swapped", "binary_mask", "nan_in_mask")

    def cases(self, ctx, seed=None):
        sizes = [4, 1, 6]
        sizes_hidden = list(HIDDEN_T) + [int(rng_for(seed, self.id).integers(13, 33))] if seed is not None else []
        return ([Case(f"causal_mask({T})", {"kind": "call", "target": self.id, "args": [T]}, data={"T": T})
                 for T in sizes]
                + [Case(f"causal_mask({T})", {"kind": "call", "target": self.id, "args": [T]}, public=False,
                        data={"T": T}) for T in sizes_hidden])

    def expected(self, case):
        return additive(allowed(case.data["T"]))

    def slips(self, case):
        ok = allowed(case.data["T"])
        strict = np.tril(ok, k=-1)
        return [
            ("wrong_triangle", additive(ok.T), None, {}),
            ("diagonal_masked", additive(strict), None, {}),
            ("zero_inf_swapped", additive(~ok), None, {}),
            ("binary_mask", ok.astype(float), None, {}),
            ("binary_mask", (~ok).astype(float), None, {}),
        ]

    def special(self, case, got, answer):
        if self.kind_ok(got) and answer.shape == self.expected(case).shape and np.isnan(answer).any():
            return self.diagnose("nan_in_mask")
        return None


class BoolSquareMask(TensorExercise):
    """A (T, T) boolean mask of one T."""

    section = CONVENTIONS
    sections = {**COMMON, "wrong_triangle": SECTION}
    sizes = (4, 1, 6)

    def cases(self, ctx, seed=None):
        hidden = list(HIDDEN_T) + [int(rng_for(seed, self.id).integers(13, 33))] if seed is not None else []
        return ([Case(f"{self.id}({T})", {"kind": "call", "target": self.id, "args": [T]}, data={"T": T})
                 for T in self.sizes]
                + [Case(f"{self.id}({T})", {"kind": "call", "target": self.id, "args": [T]}, public=False,
                        data={"T": T}) for T in hidden])


class AllowedMask(BoolSquareMask):
    id = "allowed_mask"
    points = 1
    diagnoses = ("convention_inverted", "diagonal_masked", "wrong_triangle")

    def expected(self, case):
        return allowed(case.data["T"])

    def slips(self, case):
        ok = allowed(case.data["T"])
        return [
            ("convention_inverted", ~ok, "lab01.convention_inverted", {}),
            ("diagonal_masked", np.tril(ok, k=-1), None, {}),
            ("wrong_triangle", ok.T, None, {}),
        ]


class BlockedMask(BoolSquareMask):
    id = "blocked_mask"
    points = 1
    diagnoses = ("convention_inverted", "diagonal_masked", "wrong_triangle")

    def expected(self, case):
        return ~allowed(case.data["T"])

    def slips(self, case):
        ok = allowed(case.data["T"])
        return [
            ("convention_inverted", ok, "lab01.convention_inverted_blocked", {}),
            ("diagonal_masked", ~np.tril(ok, k=-1), None, {}),
            ("wrong_triangle", ~ok.T, None, {}),
        ]


def lengths_arg(lengths: list[int], as_tensor: bool):
    return tensor_arg(lengths, "int64") if as_tensor else list(lengths)


class LengthsExercise(TensorExercise):
    """Exercises called as f(lengths, T); lengths come as a list or as a 1-D int64 tensor."""

    section = PADDING
    sections = {**COMMON, "convention_inverted": "05 §5"}
    public_cases = (([3, 5, 1], 5, False), ([2, 4], 4, True), ([3], 3, False))

    def cases(self, ctx, seed=None):
        specs = list(self.public_cases)
        hidden = []
        if seed is not None:
            rng = rng_for(seed, self.id)
            # Every T from 1 to 8, batches of one to four, and the edge lengths 1 and T each time.
            for T in range(1, 9):
                B = int(rng.integers(1, 5))
                lengths = [int(n) for n in rng.integers(1, T + 1, size=B)]
                lengths[0] = T  # one full sequence, as in a real batch
                if B > 1:
                    lengths[-1] = 1
                hidden.append((lengths, T, bool(T % 2)))
            hidden.append(([1, 1, 1], 3, True))
        out = []
        for public, group in ((True, specs), (False, hidden)):
            for lengths, T, as_tensor in group:
                shown = f"torch.tensor({lengths})" if as_tensor else str(lengths)
                out.append(Case(f"{self.id}({shown}, {T})",
                                {"kind": "call", "target": self.id, "args": [lengths_arg(lengths, as_tensor), T]},
                                public=public, data={"lengths": lengths, "T": T}))
        return out

    def reshaped(self, case, got: Array, answer: np.ndarray, want: np.ndarray) -> Result | None:
        """The right values in a shape that broadcasts wrongly against (B, H, T, T)."""
        if is_torch_bool(got) and answer.shape != want.shape and answer.size == want.size:
            if np.array_equal(answer.reshape(-1), want.reshape(-1)):
                return self.diagnose("padding_shape", got=shape_str(answer.shape), expected=shape_str(want.shape))
        return None


class PaddingMask(LengthsExercise):
    id = "padding_mask"
    points = 2
    diagnoses = ("padding_shape", "convention_inverted", "length_off_by_one")

    def expected(self, case):
        return key_padding(case.data["lengths"], case.data["T"])[:, None, None, :]  # (B, 1, 1, T)

    def slips(self, case):
        lengths, T = case.data["lengths"], case.data["T"]
        want = self.expected(case)
        longer = (np.arange(T)[None, :] <= np.asarray(lengths)[:, None])[:, None, None, :]
        return [
            ("convention_inverted", ~want, "lab01.convention_inverted_padding", {}),
            ("length_off_by_one", longer, None, {}),
        ]

    def special(self, case, got, answer):
        return self.reshaped(case, got, answer, self.expected(case))


class CombinedMask(LengthsExercise):
    id = "combined_mask"
    points = 2
    section = COMBINED
    diagnoses = ("combined_with_or", "padding_shape", "convention_inverted", "padding_queries",
                 "padding_missing", "causal_missing")

    def parts(self, case):
        lengths, T = case.data["lengths"], case.data["T"]
        causal = allowed(T)[None, None, :, :]  # (1, 1, T, T)
        keys = key_padding(lengths, T)[:, None, None, :]  # (B, 1, 1, T): padded keys
        queries = key_padding(lengths, T)[:, None, :, None]  # (B, 1, T, 1): padded queries
        return causal, keys, queries

    def expected(self, case):
        causal, keys, _ = self.parts(case)
        return causal & keys  # (B, 1, T, T)

    def slips(self, case):
        causal, keys, queries = self.parts(case)
        want = causal & keys
        T = case.data["T"]
        return [
            ("combined_with_or", causal | keys, None, {}),
            ("convention_inverted", ~want, "lab01.convention_inverted", {}),
            ("padding_queries", causal & keys & queries, None, {}),
            ("padding_queries", causal & queries, None, {}),
            ("padding_missing", np.broadcast_to(causal, want.shape), None, {}),
            ("padding_missing", causal, None, {}),
            ("padding_missing", allowed(T), None, {}),
            ("causal_missing", np.broadcast_to(keys, want.shape), None, {}),
            ("causal_missing", keys, None, {}),
        ]

    def special(self, case, got, answer):
        return self.reshaped(case, got, answer, self.expected(case))


class SlidingWindowMask(TensorExercise):
    id = "sliding_window_mask"
    points = 2
    section = WINDOW
    sections = COMMON
    diagnoses = ("window_too_wide", "window_too_narrow", "window_not_causal", "convention_inverted",
                 "wrong_triangle", "diagonal_masked")

    def cases(self, ctx, seed=None):
        specs = [(6, 3), (5, 1), (4, 4), (3, 5)]
        hidden = []
        if seed is not None:
            # Every window of the taught range: T = 1 … 10 and W = 1 … T + 1 (a window wider than T is causal).
            hidden = [(T, W) for T in range(1, 11) for W in range(1, T + 2)]
        return ([Case(f"sliding_window_mask({T}, {W})", {"kind": "call", "target": self.id, "args": [T, W]},
                      data={"T": T, "W": W}) for T, W in specs]
                + [Case(f"sliding_window_mask({T}, {W})", {"kind": "call", "target": self.id, "args": [T, W]},
                        public=False, data={"T": T, "W": W}) for T, W in hidden])

    def expected(self, case):
        return window(case.data["T"], case.data["W"])

    def slips(self, case):
        T, W = case.data["T"], case.data["W"]
        want = window(T, W)
        i = np.arange(T)[:, None]
        j = np.arange(T)[None, :]
        return [
            ("window_too_wide", window(T, W + 1), None, {"W": W, "W1": W + 1}),
            ("window_too_narrow", window(T, W - 1) if W > 1 else np.zeros((T, T), bool), None, {"W": W}),
            ("window_not_causal", np.abs(i - j) < W, None, {}),
            ("convention_inverted", ~want, "lab01.convention_inverted", {}),
            ("wrong_triangle", want.T, None, {}),
            ("diagonal_masked", want & (j < i), None, {}),
            ("diagonal_masked", (j < i) & (j >= i - W), None, {}),
        ]


EXERCISES: list[Exercise] = [CausalMask(), AllowedMask(), BlockedMask(), PaddingMask(), CombinedMask(),
                             SlidingWindowMask()]


# Message keys this module builds at run time (diagnosed(name), f"lab01.<part>.{name}"), listed for `make catalogs`.
N_(
    "lab01.causal_missing", "lab01.combined_with_or", "lab01.length_off_by_one", "lab01.nan_in_mask",
    "lab01.padding_missing", "lab01.padding_queries", "lab01.padding_shape", "lab01.window_not_causal",
    "lab01.window_too_narrow", "lab01.window_too_wide", "lab01.wrong_triangle",
)

LAB = LabSpec(id="lab01", exercises=EXERCISES)
