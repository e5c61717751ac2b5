"""lab01, masks: the additive causal mask, boolean masks in both conventions, padding,
causal + padding, and the sliding window.

Each exercise is a function of small integers. Cases are plain data; the judge
rebuilds the right mask with numpy and, when the student's differs, tries the
classic wrong masks (each computed here from the same arguments) to name the
mistake. Nothing in this module runs student code.

The judging machinery (TensorExercise) lives in labs/tensors.py, shared with lab02.
"""
from __future__ import annotations

import numpy as np

from ..exercise import Case, Exercise
from ..i18n import N_
from . import LabSpec
from .tensors import TensorExercise, rng_for, tensor_arg

# Every T of the taught range is a hidden case (T = 1 included): a mask wrong for one size fails.
HIDDEN_T = tuple(range(1, 13))

# The stubs' hints (Lab.hint(exercise), which a stub raises in the notebook's language).
N_(
    "lab01.hint.causal_mask", "lab01.hint.allowed_mask", "lab01.hint.blocked_mask", "lab01.hint.padding_mask",
    "lab01.hint.combined_mask", "lab01.hint.sliding_window_mask",
)


# ---------------------------------------------------------------- the masks, in numpy
def allowed(T: int) -> np.ndarray:
    """True where query i may read key j (j <= i)."""
    return np.tril(np.ones((T, T), dtype=bool))  # (T, T)


def next_key_too(T: int) -> np.ndarray:
    """True where j <= i + 1: the causal mask off by one, each query also reads the next key."""
    return np.tril(np.ones((T, T), dtype=bool), k=1)  # (T, T)


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
          "padding_queries": "05 §5", "off_by_one": "08 §4"}


class CausalMask(TensorExercise):
    id = "causal_mask"
    points = 2
    section = SECTION
    sections = COMMON
    expected_kind = "float"
    diagnoses = ("wrong_triangle", "diagonal_masked", "off_by_one", "zero_inf_swapped", "binary_mask", "nan_in_mask")

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
            ("off_by_one", additive(next_key_too(case.data["T"])), None, {}),
            ("zero_inf_swapped", additive(~ok), None, {}),
            ("binary_mask", ok.astype(float), None, {}),
            ("binary_mask", (~ok).astype(float), None, {}),
        ]

    special_rule = "nan_in_mask"  # a float mask that holds NaN is named before any slip is tried
    kind_key = "common.kind.additive_mask"  # a wrong dtype is told what the additive mask is


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
    diagnoses = ("convention_inverted", "diagonal_masked", "off_by_one", "wrong_triangle")

    def expected(self, case):
        return allowed(case.data["T"])

    def slips(self, case):
        ok = allowed(case.data["T"])
        return [
            ("convention_inverted", ~ok, "lab01.convention_inverted", {}),
            ("diagonal_masked", np.tril(ok, k=-1), None, {}),
            ("off_by_one", next_key_too(case.data["T"]), None, {}),
            ("wrong_triangle", ok.T, None, {}),
        ]


class BlockedMask(BoolSquareMask):
    id = "blocked_mask"
    points = 1
    diagnoses = ("convention_inverted", "diagonal_masked", "off_by_one", "wrong_triangle")

    def expected(self, case):
        return ~allowed(case.data["T"])

    def slips(self, case):
        ok = allowed(case.data["T"])
        return [
            ("convention_inverted", ok, "lab01.convention_inverted_blocked", {}),
            ("diagonal_masked", ~np.tril(ok, k=-1), None, {}),
            ("off_by_one", ~next_key_too(case.data["T"]), None, {}),  # triu(diagonal=2)
            ("wrong_triangle", ~ok.T, None, {}),
        ]


def lengths_arg(lengths: list[int], as_tensor: bool):
    return tensor_arg(lengths, "int64") if as_tensor else list(lengths)


class LengthsExercise(TensorExercise):
    """Exercises called as f(lengths, T); lengths come as a list or as a 1-D int64 tensor."""

    section = PADDING
    sections = {**COMMON, "convention_inverted": "05 §5"}
    special_rule = "padding_shape"  # the right values in a shape that broadcasts wrongly against (B, H, T, T)
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


class CombinedMask(LengthsExercise):
    id = "combined_mask"
    points = 2
    section = COMBINED
    diagnoses = ("combined_with_or", "padding_shape", "convention_inverted", "padding_queries",
                 "padding_missing", "causal_missing", "off_by_one")

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
            ("off_by_one", next_key_too(T)[None, None] & keys, None, {}),
        ]


class SlidingWindowMask(TensorExercise):
    id = "sliding_window_mask"
    points = 2
    section = WINDOW
    sections = COMMON
    diagnoses = ("window_too_wide", "window_too_narrow", "window_not_causal", "convention_inverted",
                 "wrong_triangle", "diagonal_masked", "off_by_one")

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
            ("off_by_one", (j <= i + 1) & (j >= i - W + 2), None, {}),  # the window shifted one key ahead
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
