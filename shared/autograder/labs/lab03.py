"""lab03, multi-head causal self-attention and the prefix test.

Two exercises:

- ``CausalSelfAttention(d_model, n_heads)``, an ``nn.Module`` (call kind
  "module"): the grader loads reference weights into ``q_proj``, ``k_proj``,
  ``v_proj`` and ``out_proj`` and compares ``forward(x, lengths, padding_side)``
  with a numpy reference within 1e-5, at the real positions only (chapter 05:
  what comes out at a padding position means nothing). The padding cases pad
  on the right and on the left: only on the left does the key mask change a
  real output, so they are what the padding points measure. A wrong output is
  matched against the classic slips (each computed here by the same numpy
  code with one thing changed).
- ``prefix_test(model_fn, vocab_size, T=8, seed=0)``, the student's own test,
  graded mutation-style: it must say True on the correct tiny decoder and
  earns one point per leaking decoder it rejects. The decoders are Python
  source (``DECODER_TEMPLATE`` with one line swapped per bug) handed to the
  student's function as ``{"__function__": source}``; they build their weights
  inside the function from a fixed seed, so they are plain data.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import evidence, i18n
from ..i18n import N_
from ..exercise import Array, Case, Exercise, Feedback, Result, decode, describe, first_difference, shape_mismatch
from . import LabSpec
from .tensors import rng_for

ATOL = 1e-5  # the issue: "compare within 1e-5"
MATCH_ATOL = 1e-4  # recognising a slip: float32 student output against a float64 candidate
LAYERS = ("q_proj", "k_proj", "v_proj", "out_proj")

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
    "tolerance_too_loose": "07 §6",
    "no_evidence": "07 §2",
}


# ---------------------------------------------------------------- plain-data helpers (shared with lab04)
def f32(values) -> np.ndarray:
    """Round to float32 (what the student's tensor will hold) and compute on in float64."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def tensor_arg(values, dtype: str = "float32") -> dict:
    return {"__tensor__": np.asarray(values).tolist(), "dtype": dtype}


def arg_array(value: Any) -> np.ndarray:
    """An encoded tensor argument (from a Case's own call) back as a numpy array."""
    if isinstance(value, dict) and "__tensor__" in value:
        return np.array(value["__tensor__"], dtype=float)
    return np.asarray(value, dtype=float)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax as torch computes it: a row (or column) of -inf only gives NaN."""
    with np.errstate(invalid="ignore"):
        shifted = x - np.max(x, axis=axis, keepdims=True)
        e = np.exp(shifted)
        return e / e.sum(axis=axis, keepdims=True)


def close_nan(a: np.ndarray, b: np.ndarray, atol: float) -> bool:
    """Equal within atol, where NaN matches NaN and inf matches inf of the same sign."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    both_nan = np.isnan(a) & np.isnan(b)
    same_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    finite = np.isfinite(a) & np.isfinite(b)
    with np.errstate(invalid="ignore"):
        ok = both_nan | same_inf | (finite & (np.abs(a - b) <= atol))
    return bool(ok.all())


def is_float_array(value: Any, shape: tuple[int, ...]) -> bool:
    return isinstance(value, Array) and value.is_float and value.shape == tuple(shape)


def as_bool(value: Any) -> bool | None:
    """A Python bool, or a 0-d boolean tensor/array (`(a == b).all()`), as a bool; else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Array) and value.is_bool and value.shape == ():
        return bool(value.values)
    return None


class LabExercise(Exercise):
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


# ---------------------------------------------------------------- CausalSelfAttention: the math
def allowed_mask(T: int, kind: str = "causal") -> np.ndarray:
    """(T, T) bool, True = query i may read key j."""
    ones = np.ones((T, T), dtype=bool)
    return {
        "causal": np.tril(ones),
        "none": ones,
        "strict": np.tril(ones, k=-1),
        "upper": np.triu(ones),
    }[kind]


def real_positions(T: int, lengths, side: str = "right") -> np.ndarray:
    """(B, T) bool: True at the real tokens; padding on the right (positions < length) or on the left."""
    positions = np.arange(T)[None, :]
    lengths = np.asarray(lengths)[:, None]
    return positions >= T - lengths if side == "left" else positions < lengths


def self_attention(x: np.ndarray, state: dict[str, np.ndarray], n_heads: int, lengths=None, side: str = "right", *,
                   mask: str = "causal", scale: str = "head", axis: int = -1, padding: str = "keys",
                   split: str = "ok", masked_heads: str = "all") -> np.ndarray | None:
    """The reference forward pass, or one classic slip of it (keyword arguments).

    side: where the padding sits, "right" (after the real tokens) or "left" (before them)
    mask: causal | none | strict (diagonal blocked) | upper (triangle transposed)
    scale: head (1/sqrt(d_k)) | none | model (1/sqrt(d_model))
    axis: softmax axis, -1 (keys) or -2 (queries)
    padding: keys (block the padding keys) | ignored | queries (the padding mask on the query axis:
             padding rows blocked, padding keys still read) | side_ignored (always padded on the right)
             | batch_on_heads (a (B, T, T) mask broadcast against (B, H, T, T) scores: batch row b's
             mask lands on head b)
    split: ok | single_head | no_transpose (split by reshape) | merge_no_transpose | both_wrong
    masked_heads: all | first (only head 0 gets the causal mask)
    Returns None where the slip would have raised (so it cannot match).
    """
    B, T, D = x.shape

    def linear(name: str, z: np.ndarray) -> np.ndarray:
        return z @ state[f"{name}.weight"].T + state[f"{name}.bias"]

    heads = 1 if split == "single_head" else n_heads
    d_k = D // heads

    def split_heads(z: np.ndarray) -> np.ndarray:  # (B, T, D) -> (B, heads, T, d_k)
        if split in ("no_transpose", "both_wrong"):
            return z.reshape(B, heads, T, d_k)
        return z.reshape(B, T, heads, d_k).transpose(0, 2, 1, 3)

    q, k, v = (split_heads(linear(name, x)) for name in LAYERS[:3])
    scores = q @ k.swapaxes(-1, -2)  # (B, heads, T, T)
    if scale == "head":
        scores = scores / math.sqrt(d_k)
    elif scale == "model":
        scores = scores / math.sqrt(D)
    allowed = np.broadcast_to(allowed_mask(T, mask), (B, heads, T, T)).copy()
    if masked_heads == "first":
        allowed[:, 1:] = True
    if lengths is not None and padding != "ignored":
        real = real_positions(T, lengths, "right" if padding == "side_ignored" else side)  # (B, T)
        if padding in ("keys", "side_ignored"):
            allowed &= real[:, None, None, :]
        elif padding == "queries":
            allowed &= real[:, None, :, None]
        elif padding == "batch_on_heads":
            if B != heads and B != 1:
                return None
            allowed &= real[None, :, None, :]
    with np.errstate(invalid="ignore"):
        weights = softmax(np.where(allowed, scores, -np.inf), axis=axis)  # (B, heads, T, T)
    out = weights @ v  # (B, heads, T, d_k)
    if split in ("merge_no_transpose", "both_wrong"):
        out = out.reshape(B, T, D)
    else:
        out = out.transpose(0, 2, 1, 3).reshape(B, T, D)
    return linear("out_proj", out)


# Named slips of CausalSelfAttention, tried in this order; each is the reference with one change.
SLIPS: list[tuple[str, dict]] = [
    ("no_mask", {"mask": "none"}),
    ("diagonal_masked", {"mask": "strict"}),
    ("wrong_triangle", {"mask": "upper"}),
    ("forgot_scale", {"scale": "none"}),
    ("scale_d_model", {"scale": "model"}),
    ("wrong_axis", {"axis": -2}),
    ("heads_not_split", {"split": "single_head"}),
    ("wrong_head_split", {"split": "no_transpose"}),
    ("wrong_head_split", {"split": "merge_no_transpose"}),
    ("wrong_head_split", {"split": "both_wrong"}),
    ("mask_not_shared", {"masked_heads": "first"}),
    ("mask_batch_on_heads", {"padding": "batch_on_heads"}),
    ("padding_side_ignored", {"padding": "side_ignored"}),
    ("padding_ignored", {"padding": "ignored"}),
    # The real positions read the padding keys, as with the padding ignored; tried after padding_ignored,
    # which must match at the padding rows too, so what is left handled only the padding rows (the query axis).
    ("padding_queries", {"padding": "queries"}),
]
PADDING_SLIPS = ("mask_batch_on_heads", "padding_side_ignored", "padding_ignored", "padding_queries")


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


def random_state(rng: np.random.Generator, d_model: int) -> dict[str, np.ndarray]:
    """Weights of the four layers; large enough that every slip moves the output visibly."""
    state = {}
    for name in LAYERS:
        state[f"{name}.weight"] = f32(rng.uniform(-1.5, 1.5, size=(d_model, d_model)) / math.sqrt(d_model))
        state[f"{name}.bias"] = f32(rng.uniform(-0.5, 0.5, size=d_model))
    return state


def module_case(name: str, rng: np.random.Generator, B: int, T: int, d_model: int, n_heads: int,
                lengths=None, lengths_as_tensor: bool = False, public: bool = True, side: str = "right") -> Case:
    x = f32(rng.normal(size=(B, T, d_model)))  # (B, T, d_model)
    state = random_state(rng, d_model)
    call = {
        "kind": "module",
        "target": "CausalSelfAttention",
        "init": [d_model, n_heads],
        "state": {key: tensor_arg(value) for key, value in state.items()},
        "args": [tensor_arg(x)],
        "kwargs": {},
    }
    if lengths is not None:
        call["kwargs"]["lengths"] = tensor_arg(lengths, "int64") if lengths_as_tensor else list(lengths)
        if side != "right":  # right padding is the default: the lab's first signature still works there
            call["kwargs"]["padding_side"] = side
    return Case(name, call, public=public, data={"padding": lengths is not None})


def case_inputs(case: Case) -> tuple[np.ndarray, dict[str, np.ndarray], int, Any, str]:
    """x, the layers' state, n_heads, lengths (None or ints) and the padding side of one case."""
    call = case.call
    x = arg_array(call["args"][0])
    state = {key: arg_array(value) for key, value in call["state"].items()}
    lengths = call["kwargs"].get("lengths")
    if lengths is not None:
        lengths = arg_array(lengths).astype(int)
    return x, state, call["init"][1], lengths, call["kwargs"].get("padding_side", "right")


class CausalSelfAttentionExercise(LabExercise):
    id = "CausalSelfAttention"
    kind = "module"
    points = 5
    padding_points = 2  # of `points`: the cases with `lengths`
    # Hidden shapes, always all of them: T = 1, one head and many, odd head sizes, lengths of 1 and T,
    # padding on both sides.
    HIDDEN = ((1, 1, 4, 2, None, "right"), (3, 1, 6, 3, None, "right"), (2, 7, 8, 4, None, "right"),
              (1, 5, 12, 3, None, "right"), (2, 6, 8, 2, [6, 1], "right"), (3, 5, 6, 1, [2, 5, 3], "left"),
              (2, 1, 4, 2, [1, 1], "left"), (2, 4, 8, 4, [4, 3], "right"), (2, 6, 8, 2, [1, 4], "left"))
    section = "06 §1"
    lab_section = "1"
    diagnoses = (
        "no_mask", "diagonal_masked", "wrong_triangle", "forgot_scale", "scale_d_model", "wrong_axis",
        "heads_not_split", "wrong_head_split", "heads_wrong", "mask_not_shared", "mask_batch_on_heads",
        "padding_side_ignored", "padding_ignored", "padding_queries", "padding_wrong", "layers_missing",
    )

    def cases(self, ctx: dict, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(3)
        cases = [
            module_case("B=2, T=5, d_model=8, n_heads=2", rng, 2, 5, 8, 2),
            module_case("B=1, T=6, d_model=8, n_heads=4", rng, 1, 6, 8, 4),
            module_case("B=2, T=4, d_model=6, n_heads=1", rng, 2, 4, 6, 1),
            module_case("B=2, T=5, d_model=8, n_heads=2, lengths=[5, 2]", rng, 2, 5, 8, 2, lengths=[5, 2]),
            module_case("B=2, T=4, d_model=4, n_heads=2, lengths=tensor([1, 3])", rng, 2, 4, 4, 2,
                        lengths=[1, 3], lengths_as_tensor=True),
            # Left padding: the padding keys come before the real tokens, so only the key mask keeps them out.
            module_case("B=2, T=5, d_model=8, n_heads=2, lengths=[3, 5], padding_side='left'", rng, 2, 5, 8, 2,
                        lengths=[3, 5], side="left"),
            module_case("B=3, T=4, d_model=6, n_heads=3, lengths=tensor([2, 4, 1]), padding_side='left'", rng,
                        3, 4, 6, 3, lengths=[2, 4, 1], lengths_as_tensor=True, side="left"),
        ]
        if seed is not None:
            rng = rng_for(seed, self.id)
            for B, T, d_model, n_heads, lengths, side in self.HIDDEN:
                cases.append(module_case(f"hidden B={B}, T={T}", rng, B, T, d_model, n_heads, lengths=lengths,
                                         lengths_as_tensor=bool(rng.integers(0, 2)), public=False, side=side))
            for number in range(2):
                n_heads = int(rng.choice([1, 2, 4]))
                d_model = n_heads * int(rng.integers(2, 4))
                B, T = int(rng.integers(1, 4)), int(rng.integers(2, 8))
                lengths = [int(n) for n in rng.integers(1, T + 1, size=B)] if number == 1 else None
                side = "left" if rng.integers(0, 2) else "right"
                cases.append(module_case(f"random {number + 1}", rng, B, T, d_model, n_heads, lengths=lengths,
                                         lengths_as_tensor=bool(rng.integers(0, 2)), public=False, side=side))
        return cases

    def judge(self, ctx: dict, cases: list[Case], outputs: list[dict]) -> Result:
        for case, output in zip(cases, outputs):
            error = output.get("error")
            if error and "state_dict" in error.get("message", ""):
                # The module could not take the reference weights: name the interface, not a traceback.
                return self.diagnosed("layers_missing", message=error["message"][:160])
        return super().judge(ctx, cases, outputs)

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        inputs = [case_inputs(case) for case in cases]
        for case, (x, *_), got in zip(cases, inputs, values):
            if not is_float_array(got, x.shape):
                return shape_mismatch(self, case, got, f"float32 {tuple(x.shape)}")
        got = [value.values for value in values]
        want = [self_attention(*case_input) for case_input in inputs]
        right = [close_nan(real_rows(g, lengths, side), real_rows(w, lengths, side), ATOL)
                 for g, w, (_, _, _, lengths, side) in zip(got, want, inputs)]
        if all(right):
            return self.passed()
        plain = [not case.data["padding"] for case in cases]
        padding_only = all(ok for ok, p in zip(right, plain) if p)
        for name, slip in SLIPS:
            if padding_only != (name in PADDING_SLIPS):
                continue
            if self.matches(got, inputs, slip, skip_first=(name == "diagonal_masked"),
                            padding_rows=(name == "padding_ignored")):
                return self.diagnosed(name, points=self.points - self.padding_points if padding_only else 0)
        if padding_only:
            return self.diagnosed("padding_wrong", points=self.points - self.padding_points)
        one_head = [ok for ok, (_, _, heads, _, _) in zip(right, inputs) if heads == 1]
        if one_head and all(one_head):
            return self.diagnosed("heads_wrong")
        index = next(i for i, ok in enumerate(right) if not ok)
        lengths, side = inputs[index][3:]
        # first_difference allows 1e-12 more than close_nan: where every gap lies just above ATOL it finds
        # none, and the first entry is named (a bare (0,) picked a whole row, which the format below rejects).
        position = first_difference(np.nan_to_num(real_rows(got[index], lengths, side), nan=1e30),
                                    real_rows(want[index], lengths, side), ATOL) or (0,) * got[index].ndim
        return self.result(
            0, "failed",
            Feedback("common.failed", {"name": self.id}),
            Feedback("common.wrong_entry", {"case": cases[index].name, "index": ", ".join(map(str, position)),
                                            "got": f"{got[index][position]:.4g}"}),
            self.pointer(None),
            diagnosis="wrong_values",
        )

    @staticmethod
    def matches(got: list[np.ndarray], inputs, slip: dict, skip_first: bool = False,
                padding_rows: bool = False) -> bool:
        """Whether every output equals the slip's at the real positions (and at the padding ones too, with
        `padding_rows`: ignoring `lengths` leaves them reading the sequence like any other position)."""
        for value, (x, state, heads, lengths, side) in zip(got, inputs):
            candidate = self_attention(x, state, heads, lengths, side, **slip)
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


# ---------------------------------------------------------------- prefix_test: the decoders
DECODER_TEMPLATE = '''\
def model(ids):
    """A tiny decoder: token ids (B, T) -> logits (B, T, VOCAB)."""
    VOCAB, D, SEED = {vocab}, 8, {seed}
    g = torch.Generator().manual_seed(SEED)  # fixed weights, built here: the function is plain source
    emb = torch.randn(VOCAB, D, generator=g)  # (VOCAB, D)
    wq, wk, wv = (torch.randn(D, D, generator=g) / math.sqrt(D) for _ in range(3))  # (D, D) each
    unemb = torch.randn(D, VOCAB, generator=g)  # (D, VOCAB)
    extra = torch.randn(VOCAB, VOCAB, generator=g)  # (VOCAB, VOCAB): used by one buggy decoder
    ids = torch.as_tensor(ids).long()  # (B, T)
    B, T = ids.shape
{tokens}
    pos = torch.arange(T, dtype=torch.float32)[:, None] / torch.arange(1, D + 1)[None, :]  # (T, D)
    x = emb[tokens] + torch.sin(pos)  # (B, T, D)
    q, k, v = x @ wq, x @ wk, x @ wv  # (B, T, D)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D)  # (B, T, T)
{allowed}
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)  # (B, T, T)
    h = x + weights @ v  # (B, T, D)
{norm}
    logits = h @ unemb  # (B, T, VOCAB)
{leak}
    return logits
'''

CORRECT_LINES = {
    "tokens": "    tokens = ids  # (B, T)",
    "allowed": "    allowed = torch.ones(T, T, dtype=torch.bool).tril()  # (T, T): key j <= query i",
    "norm": "    h = F.layer_norm(h, (D,))  # (B, T, D): normalised over the features of each position",
    "leak": "    # (no extra path from later tokens)",
}

# Each bug swaps one line of the correct decoder.
BUG_LINES: dict[str, tuple[str, str]] = {
    "no_mask": ("allowed", "    allowed = torch.ones(T, T, dtype=torch.bool)  # (T, T): BUG, no mask"),
    "off_by_one": ("allowed",
                   "    allowed = torch.ones(T, T, dtype=torch.bool).tril(diagonal=1)  # (T, T): BUG, j <= i + 1"),
    "time_axis_norm": ("norm", "    h = (h - h.mean(dim=1, keepdim=True)) / torch.sqrt(h.var(dim=1, keepdim=True, "
                               "unbiased=False) + 1e-5)  # (B, T, D): BUG, normalised over time"),
    "shifted_input": ("tokens", "    tokens = torch.cat([ids[:, 1:], ids[:, -1:]], dim=1)  # (B, T): BUG, position t"
                                " gets token t + 1"),
    "middle_leak": ("leak", "    logits[:, :1] = logits[:, :1] + extra[tokens[:, T // 2]][:, None]  # (B, T, VOCAB):"
                            " BUG, position 0 reads token T // 2"),
}
# The whole-model bugs graded one point each; the position sweep (single-position leaks at every t and
# of every distance, plus one faint leak) is the fifth point.
# middle_leak stays available for demonstrations: the sweep covers it.
BUGS: tuple[str, ...] = ("no_mask", "off_by_one", "time_axis_norm", "shifted_input")
POSITION_LEAK = "position_leak"
FAINT_LEAK = "faint_leak"
SWEEP_BUGS = (POSITION_LEAK, FAINT_LEAK)
SWEEP = "positions"
CHECKS: tuple[str, ...] = BUGS + (SWEEP,)
PUBLIC_VOCAB = 11
PUBLIC_DECODER_SEED = 2024
PUBLIC_SWEEP_SEED = 10  # draws the public sweep (fixed: `check` shows the same cases every time)
# The faint leak moves the logits by at most 2 * FAINT (tanh keeps it bounded), always below 1e-3 and far
# above float32 rounding (~1e-6): a test that compares within 1e-5 sees it, one within 1e-3 cannot.
FAINT = 4e-4
CRASHED = "__prefix_test_crashed__"  # marks, in the judged values, a buggy decoder the test raised on


def sweep_leaks(T: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Single-position leaks (position t reads token s > t) for the sweep, 2T - 3 of them.

    Position t reads token t + 1, for every t: only the prefix length t + 1 shows such a leak, so a
    test that skips a prefix length (or a token, or compares only some positions) misses one. And for
    every distance d = 2 … T-1 one leak of that distance, at a position drawn from `rng`: a test that
    only looks at the next token, or never changes tokens that far ahead, misses one whatever the draw.
    """
    leaks = [(t, t + 1) for t in range(T - 1)]
    for distance in range(2, T):
        t = int(rng.integers(0, T - distance))
        leaks.append((t, t + distance))
    return sorted(leaks)


def position_leak_line(t: int, s: int, faint: bool = False) -> str:
    """Position t also reads token s > t, and nothing else leaks: only changing token s after t shows it."""
    assert 0 <= t < s
    if faint:
        return (f"    if T > {s}:\n"
                f"        logits[:, {t}] = logits[:, {t}] + {FAINT} * extra[tokens[:, {s}]].tanh()  # (B, VOCAB):"
                f" BUG, position {t} reads token {s}, faintly")
    return (f"    if T > {s}:\n"
            f"        logits[:, {t}] = logits[:, {t}] + extra[tokens[:, {s}]]  # (B, VOCAB): BUG, position {t} reads"
            f" token {s}")


def decoder_source(bug: str | None = None, vocab: int = PUBLIC_VOCAB, seed: int = PUBLIC_DECODER_SEED,
                   leak: tuple[int, int] | None = None) -> str:
    """Source of the tiny decoder `model`, correct (bug None), with one bug, or with one (faint) position leak."""
    lines = dict(CORRECT_LINES)
    if bug in SWEEP_BUGS:
        lines["leak"] = position_leak_line(*leak, faint=bug == FAINT_LEAK)
    elif bug is not None:
        slot, line = BUG_LINES[bug]
        lines[slot] = line
    return DECODER_TEMPLATE.format(vocab=vocab, seed=seed, **lines)


def decoder_function(bug: str | None = None, vocab: int = PUBLIC_VOCAB, seed: int = PUBLIC_DECODER_SEED,
                     leak: tuple[int, int] | None = None):
    """The decoder as a Python function, built exactly as the grader's worker builds it."""
    from ..runtime import decode_arg

    return decode_arg({"__function__": decoder_source(bug, vocab, seed, leak), "name": "model"})


def decoders(vocab: int = PUBLIC_VOCAB, seed: int = PUBLIC_DECODER_SEED) -> dict[str, Any]:
    """{"correct": f, "no_mask": f, ...}: the decoders `check` runs your prefix_test on."""
    return {name: decoder_function(None if name == "correct" else name, vocab, seed)
            for name in ("correct",) + tuple(BUG_LINES)}


class PrefixTestExercise(LabExercise):
    """prefix_test(model_fn, vocab_size, T=8, seed=0) -> bool, graded on a correct and on leaking decoders.

    Five points: one per whole-model bug (BUGS) and one for the position
    sweep: decoders in which one position t also reads one later token s,
    at every t = 0 … T-2 and of every distance s - t, placed per seed
    (sweep_leaks), and one decoder whose leak is faint (below 1e-3, far above
    rounding); all of them must be rejected. A rejection
    counts only when the test's own recorded calls show the leak (two inputs
    that agree up to t whose logits at or before t differ, on the grader's copy
    of the decoder). Nothing counts unless the correct decoder gets True.
    """

    id = "prefix_test"
    points = len(CHECKS)
    section = "07 §2"
    lab_section = "3"
    public_T = 8  # the signature's default
    hidden_T = 10
    diagnoses = ("always_true", "always_false", "rejects_correct", "missed_positions", "tolerance_too_loose",
                 "crashes", "missed_bugs", "wrong_type", "no_evidence")

    def run_set(self, vocab: int, decoder_seed: int, T: int, kwargs: dict, public: bool,
                rng: np.random.Generator) -> list[Case]:
        specs: list[tuple[str | None, tuple[int, int] | None]] = [(None, None)] + [(bug, None) for bug in BUGS]
        specs += [(POSITION_LEAK, leak) for leak in sweep_leaks(T, rng)]
        source = int(rng.integers(1, T))
        specs.append((FAINT_LEAK, (int(rng.integers(0, source)), source)))
        cases = []
        for bug, leak in specs:
            call = {"kind": "call", "target": self.id,
                    "args": [{"__function__": decoder_source(bug, vocab, decoder_seed, leak), "name": "model",
                              "record": True}, vocab], "kwargs": kwargs}
            label = bug or "correct"
            if leak is not None:
                label = f"position {leak[0]} reads token {leak[1]}" + (", faintly" if bug == FAINT_LEAK else "")
            if not public:
                label += f" (vocab_size={vocab}, T={T})"
            cases.append(Case(label, call, public=public,
                              data={"bug": bug or "correct", "optional": bug is not None, "leak": leak,
                                    "vocab": vocab, "decoder_seed": decoder_seed}))
        return cases

    def cases(self, ctx: dict, seed: int | None = None) -> list[Case]:
        cases = self.run_set(PUBLIC_VOCAB, PUBLIC_DECODER_SEED, self.public_T, {"T": self.public_T}, True,
                             np.random.default_rng(PUBLIC_SWEEP_SEED))
        if seed is not None:
            rng = rng_for(seed, self.id)
            # T is fixed and above the public (and default) 8: a test that ignores T and checks a fixed
            # number of prefixes loses the sweep whatever the seed.
            vocab, T = int(rng.integers(5, 21)), self.hidden_T
            decoder_seed, test_seed = int(rng.integers(0, 10_000)), int(rng.integers(0, 1000))
            cases += self.run_set(vocab, decoder_seed, T, {"T": T, "seed": test_seed}, False, rng)
        return cases

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

    @staticmethod
    def witnessed(case: Case, output: dict) -> bool:
        inputs = evidence.recorded_inputs(output)
        if not inputs:
            return False
        model = _trusted_decoder(case.data["bug"], case.data["vocab"], case.data["decoder_seed"], case.data["leak"])
        vocab = case.data["vocab"]

        def run(ids: np.ndarray) -> np.ndarray:
            import torch

            if ids.ndim != 2 or ids.shape[1] > 64 or ids.shape[0] > 64 or (ids < 0).any() or (ids >= vocab).any():
                raise ValueError("not token ids of this decoder")
            with torch.no_grad():
                return model(torch.tensor(ids, dtype=torch.long)).double().numpy()

        key = ("lab03", case.data["bug"], vocab, case.data["decoder_seed"], case.data["leak"])
        return evidence.witnessed(inputs, run, feature_dims=0, key=key)

    def judge_outputs(self, ctx: dict, cases: list[Case], values: list[Any]) -> Result:
        crashes = {}
        verdicts: dict[str, list] = {}
        missed_sweep: list[tuple[str, tuple[int, int], Any]] = []  # (bug, leak, verdict) of the sweep's misses
        for case, value in zip(cases, values):
            check = SWEEP if case.data["bug"] in SWEEP_BUGS else case.data["bug"]
            if isinstance(value, dict) and CRASHED in value:  # the test raised on a buggy decoder
                crashes.setdefault(check, value[CRASHED])
                verdict = None
            elif isinstance(value, dict) and UNSUPPORTED in value:
                verdict = "unsupported"
            else:
                verdict = as_bool(value)
                if verdict is None:
                    key = "lab03.returned_none" if value is None else "common.wrong_shape"
                    return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                                       Feedback(key, {"case": case.name, "expected": "bool", "got": describe(value)}),
                                       Feedback("lab03.wrong_type"), diagnosis="wrong_type")
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
                                             {"positions": ", ".join(str(t) for t in positions)}))
                for bug, leak, _ in missed_sweep:
                    if bug == FAINT_LEAK:
                        feedback.append(Feedback("lab03.missed.faint_leak", {"position": leak[0], "token": leak[1]}))
            else:
                feedback.append(Feedback(f"lab03.missed.{check}"))
        said = [v for check in CHECKS for v in verdicts[check]]
        if crashes:
            check, error = next(iter(crashes.items()))
            feedback.append(Feedback("lab03.crashes", {"bug": check, "type": error["type"],
                                                       "message": str(error["message"])[:160]}))
            diagnosis = "crashes"
        elif not caught and all(v is True for v in said):
            diagnosis = "always_true"
        elif "unsupported" in said:
            diagnosis = "no_evidence"
        elif missed == [SWEEP] and all(bug == FAINT_LEAK for bug, _, _ in missed_sweep):
            diagnosis = "tolerance_too_loose"  # every leak caught but the faint one: the comparison is too lax
        elif missed == [SWEEP]:
            diagnosis = "missed_positions"
        else:
            diagnosis = "missed_bugs"
        if diagnosis != "crashes":
            feedback.append(Feedback(f"lab03.{diagnosis}"))
        feedback.append(self.pointer(diagnosis))
        return self.result(len(caught), "failed", *feedback, diagnosis=diagnosis)


UNSUPPORTED = "__prefix_test_unsupported__"  # marks a rejection the test's own calls do not back up
_DECODERS: dict[tuple, Any] = {}


def _trusted_decoder(bug: str, vocab: int, seed: int, leak):
    key = (bug, vocab, seed, tuple(leak) if leak else None)
    if key not in _DECODERS:
        if len(_DECODERS) > 256:
            _DECODERS.clear()
        _DECODERS[key] = decoder_function(None if bug == "correct" else bug, vocab, seed,
                                          tuple(leak) if leak else None)
    return _DECODERS[key]


EXERCISES: list[Exercise] = [CausalSelfAttentionExercise(), PrefixTestExercise()]

# Message keys this module builds at run time (diagnosed(name), f"lab03.<part>.{name}"), listed for `make catalogs`.
N_(
    "lab03.always_false", "lab03.always_true", "lab03.diagonal_masked", "lab03.forgot_scale",
    "lab03.heads_not_split", "lab03.heads_wrong", "lab03.layers_missing", "lab03.mask_batch_on_heads",
    "lab03.mask_not_shared", "lab03.missed.middle_leak", "lab03.missed.no_mask", "lab03.missed.off_by_one",
    "lab03.missed.shifted_input", "lab03.missed.time_axis_norm", "lab03.missed_bugs",
    "lab03.missed_positions", "lab03.no_evidence", "lab03.no_mask", "lab03.padding_ignored",
    "lab03.padding_queries", "lab03.padding_side_ignored", "lab03.padding_wrong", "lab03.rejects_correct",
    "lab03.scale_d_model", "lab03.see_lab", "lab03.tolerance_too_loose", "lab03.wrong_axis",
    "lab03.wrong_head_split", "lab03.wrong_triangle",
)

LAB = LabSpec(id="lab03", exercises=EXERCISES)
