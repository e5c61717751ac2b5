"""lab03, multi-head causal self-attention and the prefix test.

Two exercises:

- ``CausalSelfAttention(d_model, n_heads)``, an ``nn.Module`` (call kind
  "module"): the grader loads reference weights into ``q_proj``, ``k_proj``,
  ``v_proj`` and ``out_proj`` and compares ``forward(x, lengths)`` with a numpy
  reference within 1e-5. A wrong output is matched against the classic slips
  (each computed here by the same numpy code with one thing changed).
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
from ..exercise import Array, Case, Exercise, Feedback, Result, decode, describe, first_difference, shape_mismatch
from . import LabSpec
from .lab01 import rng_for

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
    "padding_wrong": "05 §2",
    # prefix_test
    "always_true": "07 §2",
    "missed_bugs": "07 §2",
    "always_false": "07 §6",
    "rejects_correct": "07 §6",
    "missed_positions": "07 §6",
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


def self_attention(x: np.ndarray, state: dict[str, np.ndarray], n_heads: int, lengths=None, *,
                   mask: str = "causal", scale: str = "head", axis: int = -1, padding: str = "keys",
                   split: str = "ok", masked_heads: str = "all") -> np.ndarray | None:
    """The reference forward pass, or one classic slip of it (keyword arguments).

    mask: causal | none | strict (diagonal blocked) | upper (triangle transposed)
    scale: head (1/sqrt(d_k)) | none | model (1/sqrt(d_model))
    axis: softmax axis, -1 (keys) or -2 (queries)
    padding: keys (block keys j >= length) | ignored | batch_on_heads (a (B, T, T) mask
             broadcast against (B, H, T, T) scores: batch row b's mask lands on head b)
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
        real = np.arange(T)[None, :] < np.asarray(lengths)[:, None]  # (B, T): real keys
        if padding == "keys":
            allowed &= real[:, None, None, :]
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
    ("padding_ignored", {"padding": "ignored"}),
]
PADDING_SLIPS = ("mask_batch_on_heads", "padding_ignored")


def real_rows(out: np.ndarray, lengths) -> np.ndarray:
    """The output with every padded query position (t >= length) set to 0."""
    if lengths is None:
        return out
    real = np.arange(out.shape[1])[None, :] < np.asarray(lengths)[:, None]  # (B, T)
    return np.where(real[:, :, None], out, 0.0)


def random_state(rng: np.random.Generator, d_model: int) -> dict[str, np.ndarray]:
    """Weights of the four layers; large enough that every slip moves the output visibly."""
    state = {}
    for name in LAYERS:
        state[f"{name}.weight"] = f32(rng.uniform(-1.5, 1.5, size=(d_model, d_model)) / math.sqrt(d_model))
        state[f"{name}.bias"] = f32(rng.uniform(-0.5, 0.5, size=d_model))
    return state


def module_case(name: str, rng: np.random.Generator, B: int, T: int, d_model: int, n_heads: int,
                lengths=None, lengths_as_tensor: bool = False, public: bool = True) -> Case:
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
    return Case(name, call, public=public, data={"padding": lengths is not None})


def case_inputs(case: Case) -> tuple[np.ndarray, dict[str, np.ndarray], int, Any]:
    call = case.call
    x = arg_array(call["args"][0])
    state = {key: arg_array(value) for key, value in call["state"].items()}
    lengths = call["kwargs"].get("lengths")
    if lengths is not None:
        lengths = arg_array(lengths).astype(int)
    return x, state, call["init"][1], lengths


class CausalSelfAttentionExercise(LabExercise):
    id = "CausalSelfAttention"
    kind = "module"
    points = 5
    padding_points = 2  # of `points`: the cases with `lengths`
    # Hidden shapes, always all of them: T = 1, one head and many, odd head sizes, lengths of 1 and T.
    HIDDEN = ((1, 1, 4, 2, None), (3, 1, 6, 3, None), (2, 7, 8, 4, None), (1, 5, 12, 3, None),
              (2, 6, 8, 2, [6, 1]), (3, 5, 6, 1, [2, 5, 3]), (2, 1, 4, 2, [1, 1]), (2, 4, 8, 4, [4, 3]))
    section = "06 §1"
    lab_section = "1"
    diagnoses = (
        "no_mask", "diagonal_masked", "wrong_triangle", "forgot_scale", "scale_d_model", "wrong_axis",
        "heads_not_split", "wrong_head_split", "heads_wrong", "mask_not_shared", "mask_batch_on_heads",
        "padding_ignored", "padding_wrong", "layers_missing",
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
        ]
        if seed is not None:
            rng = rng_for(seed, self.id)
            for B, T, d_model, n_heads, lengths in self.HIDDEN:
                cases.append(module_case(f"hidden B={B}, T={T}", rng, B, T, d_model, n_heads, lengths=lengths,
                                         lengths_as_tensor=bool(rng.integers(0, 2)), public=False))
            for number in range(2):
                n_heads = int(rng.choice([1, 2, 4]))
                d_model = n_heads * int(rng.integers(2, 4))
                B, T = int(rng.integers(1, 4)), int(rng.integers(2, 8))
                lengths = [int(n) for n in rng.integers(1, T + 1, size=B)] if number == 1 else None
                cases.append(module_case(f"random {number + 1}", rng, B, T, d_model, n_heads, lengths=lengths,
                                         lengths_as_tensor=bool(rng.integers(0, 2)), public=False))
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
        for case, (x, _, _, _), got in zip(cases, inputs, values):
            if not is_float_array(got, x.shape):
                return shape_mismatch(self, case, got, f"float32 {tuple(x.shape)}")
        got = [value.values for value in values]
        want = [self_attention(x, state, heads, lengths) for x, state, heads, lengths in inputs]
        right = [self.right(g, w, state, lengths) for g, w, (_, state, _, lengths) in zip(got, want, inputs)]
        if all(right):
            return self.passed()
        plain = [not case.data["padding"] for case in cases]
        padding_only = all(ok for ok, p in zip(right, plain) if p)
        for name, slip in SLIPS:
            if padding_only != (name in PADDING_SLIPS):
                continue
            if self.matches(got, inputs, slip, ignore_first=(name == "diagonal_masked"),
                            padded_rows=(name == "padding_ignored")):
                return self.diagnosed(name, points=self.points - self.padding_points if padding_only else 0)
        if padding_only:
            return self.diagnosed("padding_wrong", points=self.points - self.padding_points)
        one_head = [ok for ok, (_, _, heads, _) in zip(right, inputs) if heads == 1]
        if one_head and all(one_head):
            return self.diagnosed("heads_wrong")
        index = next(i for i, ok in enumerate(right) if not ok)
        lengths = inputs[index][3]
        position = first_difference(np.nan_to_num(real_rows(got[index], lengths), nan=1e30),
                                    real_rows(want[index], lengths), ATOL) or (0,)
        return self.result(
            0, "failed",
            Feedback("common.failed", {"name": self.id}),
            Feedback("common.wrong_entry", {"case": cases[index].name, "index": ", ".join(map(str, position)),
                                            "got": f"{got[index][position]:.4g}"}),
            self.pointer(None),
            diagnosis="wrong_values",
        )

    @staticmethod
    def right(got: np.ndarray, want: np.ndarray, state: dict, lengths) -> bool:
        """Right at every real position; at a padded query position any of the usual conventions.

        Chapter 05: outputs at padded positions mean nothing and the loss
        ignores them, so zeroing them (before or after out_proj), blocking
        their rows (NaN with -inf, zeros with SDPA) or leaving what the key
        mask gives are all right. Only reading the padding keys there is not:
        that is the missing key mask (with right padding and a causal mask a
        real position never sees a padding key, so the padded rows are the only
        place where a missing key mask shows).
        """
        if not close_nan(real_rows(got, lengths), real_rows(want, lengths), ATOL):
            return False
        if lengths is None:
            return True
        bias = state["out_proj.bias"]
        for b, length in enumerate(lengths):
            for t in range(int(length), got.shape[1]):
                row = got[b, t]
                if not (np.all(np.isnan(row)) or np.all(np.abs(row) <= ATOL) or close_nan(row, want[b, t], ATOL)
                        or close_nan(row, bias, ATOL)):
                    return False
        return True

    @staticmethod
    def matches(got: list[np.ndarray], inputs, slip: dict, ignore_first: bool = False,
                padded_rows: bool = False) -> bool:
        """Whether every output equals the slip's: at real positions, or everywhere with `padded_rows`."""
        for value, (x, state, heads, lengths) in zip(got, inputs):
            candidate = self_attention(x, state, heads, lengths, **slip)
            if candidate is None:
                return False
            if not padded_rows:
                value, candidate = real_rows(value, lengths), real_rows(candidate, lengths)
            if ignore_first:
                # Position 0 has no key left: NaN with -inf, zeros with SDPA, the mean of V with -1e9.
                value, candidate = value[:, 1:], candidate[:, 1:]
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
# The whole-model bugs graded one point each; the position sweep (one leak at each t) is the fifth point.
# middle_leak stays available for demonstrations: the sweep covers it.
BUGS: tuple[str, ...] = ("no_mask", "off_by_one", "time_axis_norm", "shifted_input")
POSITION_LEAK = "position_leak"
SWEEP = "positions"
CHECKS: tuple[str, ...] = BUGS + (SWEEP,)
PUBLIC_VOCAB = 11
PUBLIC_DECODER_SEED = 2024
CRASHED = "__prefix_test_crashed__"  # marks, in the judged values, a buggy decoder the test raised on


def position_leak_line(t: int, s: int) -> str:
    """Position t also reads token s > t, and nothing else leaks: only changing token s after t shows it."""
    assert 0 <= t < s
    return (f"    if T > {s}:\n"
            f"        logits[:, {t}] = logits[:, {t}] + extra[tokens[:, {s}]]  # (B, VOCAB): BUG, position {t} reads"
            f" token {s}")


def decoder_source(bug: str | None = None, vocab: int = PUBLIC_VOCAB, seed: int = PUBLIC_DECODER_SEED,
                   leak: tuple[int, int] | None = None) -> str:
    """Source of the tiny decoder `model`, correct (bug None), with one bug, or with one position leak."""
    lines = dict(CORRECT_LINES)
    if bug == POSITION_LEAK:
        lines["leak"] = position_leak_line(*leak)
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
    sweep: for every t = 0 … T-2 a decoder in which position t alone also
    reads one later token; all of them must be rejected. A rejection counts
    only when the test's own recorded calls show the leak (two inputs that
    agree up to t whose logits at or before t differ, on the grader's copy of
    the decoder). Nothing counts unless the correct decoder gets True.
    """

    id = "prefix_test"
    points = len(CHECKS)
    section = "07 §2"
    lab_section = "3"
    public_T = 8  # the signature's default
    hidden_T = 10
    diagnoses = ("always_true", "always_false", "rejects_correct", "missed_positions", "crashes",
                 "missed_bugs", "wrong_type", "no_evidence")

    def run_set(self, vocab: int, decoder_seed: int, T: int, kwargs: dict, public: bool) -> list[Case]:
        specs: list[tuple[str | None, tuple[int, int] | None]] = [(None, None)] + [(bug, None) for bug in BUGS]
        # Position t reads token t + 1: only the prefix length t + 1 (change the tokens after t,
        # compare position t) reveals it, so a test that skips any t misses one of these.
        specs += [(POSITION_LEAK, (t, t + 1)) for t in range(T - 1)]
        cases = []
        for bug, leak in specs:
            call = {"kind": "call", "target": self.id,
                    "args": [{"__function__": decoder_source(bug, vocab, decoder_seed, leak), "name": "model",
                              "record": True}, vocab], "kwargs": kwargs}
            label = bug or "correct"
            if leak is not None:
                label = f"position {leak[0]} reads token {leak[1]}"
            if not public:
                label += f" (vocab_size={vocab}, T={T})"
            cases.append(Case(label, call, public=public,
                              data={"bug": bug or "correct", "optional": bug is not None, "leak": leak,
                                    "vocab": vocab, "decoder_seed": decoder_seed}))
        return cases

    def cases(self, ctx: dict, seed: int | None = None) -> list[Case]:
        cases = self.run_set(PUBLIC_VOCAB, PUBLIC_DECODER_SEED, self.public_T, {"T": self.public_T}, True)
        if seed is not None:
            rng = rng_for(seed, self.id)
            # T is fixed and above the public (and default) 8: a test that ignores T and checks a fixed
            # number of prefixes loses the sweep whatever the seed.
            vocab, T = int(rng.integers(5, 21)), self.hidden_T
            decoder_seed, test_seed = int(rng.integers(0, 10_000)), int(rng.integers(0, 1000))
            cases += self.run_set(vocab, decoder_seed, T, {"T": T, "seed": test_seed}, False)
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
        missed_positions: list[int] = []
        for case, value in zip(cases, values):
            check = SWEEP if case.data["bug"] == POSITION_LEAK else case.data["bug"]
            if isinstance(value, dict) and CRASHED in value:  # the test raised on a buggy decoder
                crashes.setdefault(check, value[CRASHED])
                verdicts.setdefault(check, []).append(None)
                if check == SWEEP:
                    missed_positions.append(case.data["leak"][0])
                continue
            if isinstance(value, dict) and UNSUPPORTED in value:
                verdicts.setdefault(check, []).append("unsupported")
                if check == SWEEP:
                    missed_positions.append(case.data["leak"][0])
                continue
            verdict = as_bool(value)
            if verdict is None:
                key = "lab03.returned_none" if value is None else "common.wrong_shape"
                return self.result(0, "failed", Feedback("common.failed", {"name": self.id}),
                                   Feedback(key, {"case": case.name, "expected": "bool", "got": describe(value)}),
                                   Feedback("lab03.wrong_type"), diagnosis="wrong_type")
            if check == SWEEP and verdict is not False:
                missed_positions.append(case.data["leak"][0])
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
                positions = ", ".join(str(t) for t in sorted(set(missed_positions)))
                feedback.append(Feedback("lab03.missed.positions", {"positions": positions}))
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

BUG_TEXT = {
    "no_mask": {
        "en": "the decoder without a mask (every position reads the whole sequence)",
        "es": "el decodificador sin máscara (cada posición lee toda la secuencia)",
        "de": "den Decoder ohne Maske (jede Position liest die ganze Folge)",
        "hi-Latn": "bina mask wala decoder (har position poori sequence padh leti hai)",
    },
    "off_by_one": {
        "en": "the off-by-one mask (position t also reads token t + 1)",
        "es": "la máscara desplazada en uno (la posición t también lee el token t + 1)",
        "de": "die um eins verschobene Maske (Position t liest auch Token t + 1)",
        "hi-Latn": "off-by-one mask (position t token t + 1 bhi padh leti hai)",
    },
    "time_axis_norm": {
        "en": "the normalisation over the time axis (every position sees the mean of all positions)",
        "es": "la normalización sobre el eje del tiempo (cada posición ve la media de todas)",
        "de": "die Normierung über die Zeitachse (jede Position sieht den Mittelwert aller Positionen)",
        "hi-Latn": "time axis par normalisation (har position saari positions ka mean dekh leti hai)",
    },
    "shifted_input": {
        "en": "the input pipeline shifted the wrong way (position t is fed token t + 1)",
        "es": "el preprocesado desplazado al revés (la posición t recibe el token t + 1)",
        "de": "die falsch herum verschobene Eingabe (Position t bekommt Token t + 1)",
        "hi-Latn": "ulta shift hua input pipeline (position t ko token t + 1 mil jaata hai)",
    },
    "middle_leak": {
        "en": "the leak from one middle token (position 0 reads token T // 2, not the last one)",
        "es": "la fuga desde un token intermedio (la posición 0 lee el token T // 2, no el último)",
        "de": "das Leck aus einem mittleren Token (Position 0 liest Token T // 2, nicht das letzte)",
        "hi-Latn": "beech ke ek token se leak (position 0 token T // 2 padhti hai, last wala nahi)",
    },
}
MISSED = {
    "en": "Your test said True for {bug}.",
    "es": "Tu prueba dijo True para {bug}.",
    "de": "Dein Test sagte True für {bug}.",
    "hi-Latn": "Tumhare test ne {bug} ke liye True bola.",
}

MESSAGES = {
    "lab03.see_lab": {
        "en": "(See §{section} of this lab.)",
        "es": "(Consulta el §{section} de este lab.)",
        "de": "(Siehe §{section} dieses Labs.)",
        "hi-Latn": "(Is lab ka §{section} dekho.)",
    },
    "lab03.not_solved": {
        "en": "⏳ Run this cell again once {name} is implemented.",
        "es": "⏳ Vuelve a ejecutar esta celda cuando {name} esté implementado.",
        "de": "⏳ Führe diese Zelle erneut aus, sobald {name} implementiert ist.",
        "hi-Latn": "⏳ {name} implement ho jaye, tab yeh cell dobara run karna.",
    },
    # CausalSelfAttention
    "lab03.no_mask": {
        "en": "your output is attention without any causal mask: position t reads the tokens after it. Build one (T, T) mask, True where key j <= query i, and apply it to the scores of every head before the softmax.",
        "es": "tu salida es atención sin máscara causal: la posición t lee los tokens que vienen después. Construye una máscara (T, T), True donde key j <= query i, y aplícala a los scores de cada cabeza antes del softmax.",
        "de": "deine Ausgabe ist Attention ganz ohne kausale Maske: Position t liest die Tokens nach ihr. Baue eine (T, T)-Maske, True wo Key j <= Query i, und wende sie vor dem Softmax auf die Scores jedes Kopfes an.",
        "hi-Latn": "tumhara output bina causal mask wala attention hai: position t apne baad ke tokens padh rahi hai. Ek (T, T) mask banao, True jahan key j <= query i, aur softmax se pehle har head ke scores par lagao.",
    },
    "lab03.diagonal_masked": {
        "en": "your mask also blocks the diagonal (j = i): position 0 has no key left to read (NaN with -inf, zeros with SDPA). A position may read itself: allow j <= i, block only j > i.",
        "es": "tu máscara también bloquea la diagonal (j = i): a la posición 0 no le queda ninguna key (NaN con -inf, ceros con SDPA). Una posición puede leerse a sí misma: permite j <= i y bloquea solo j > i.",
        "de": "deine Maske sperrt auch die Diagonale (j = i): Position 0 bleibt kein Key zum Lesen (NaN mit -inf, Nullen mit SDPA). Eine Position darf sich selbst lesen: erlaube j <= i, sperre nur j > i.",
        "hi-Latn": "tumhara mask diagonal (j = i) ko bhi block karta hai: position 0 ke paas padhne ko koi key nahi bachti (-inf ke saath NaN, SDPA ke saath zeros). Position khud ko padh sakti hai: j <= i allow karo, sirf j > i block karo.",
    },
    "lab03.wrong_triangle": {
        "en": "your mask is transposed: position i reads the keys j >= i (the future) instead of j <= i. Use tril, not triu, for the allowed keys.",
        "es": "tu máscara está traspuesta: la posición i lee las keys j >= i (el futuro) en lugar de j <= i. Usa tril, no triu, para las keys permitidas.",
        "de": "deine Maske ist transponiert: Position i liest die Keys j >= i (die Zukunft) statt j <= i. Nimm tril, nicht triu, für die erlaubten Keys.",
        "hi-Latn": "tumhara mask transposed hai: position i keys j >= i (future) padh rahi hai, j <= i nahi. Allowed keys ke liye tril use karo, triu nahi.",
    },
    "lab03.forgot_scale": {
        "en": "you forgot the 1/√d_k scale: divide each head's scores by √d_k, with d_k = d_model // n_heads, before the softmax.",
        "es": "olvidaste la escala 1/√d_k: divide los scores de cada cabeza entre √d_k, con d_k = d_model // n_heads, antes del softmax.",
        "de": "du hast die Skalierung 1/√d_k vergessen: teile die Scores jedes Kopfes vor dem Softmax durch √d_k, mit d_k = d_model // n_heads.",
        "hi-Latn": "tum 1/√d_k scale bhool gaye: softmax se pehle har head ke scores ko √d_k se divide karo, jahan d_k = d_model // n_heads.",
    },
    "lab03.scale_d_model": {
        "en": "you scaled by 1/√d_model: each head's dot products have d_k = d_model // n_heads terms, so divide by √d_k.",
        "es": "escalaste por 1/√d_model: los productos escalares de cada cabeza tienen d_k = d_model // n_heads términos, así que divide entre √d_k.",
        "de": "du hast mit 1/√d_model skaliert: die Skalarprodukte eines Kopfes haben d_k = d_model // n_heads Summanden, also teile durch √d_k.",
        "hi-Latn": "tumne 1/√d_model se scale kiya: har head ke dot product mein d_k = d_model // n_heads terms hote hain, isliye √d_k se divide karo.",
    },
    "lab03.wrong_axis": {
        "en": "you normalised over the wrong axis: the scores are (B, n_heads, T_query, T_key) and the softmax runs over the keys, dim=-1, so that each query's row sums to 1.",
        "es": "normalizaste sobre el eje equivocado: los scores son (B, n_heads, T_query, T_key) y el softmax va sobre las keys, dim=-1, para que la fila de cada query sume 1.",
        "de": "du hast über die falsche Achse normiert: die Scores sind (B, n_heads, T_query, T_key), der Softmax läuft über die Keys, dim=-1, damit die Zeile jeder Query 1 ergibt.",
        "hi-Latn": "tumne galat axis par normalise kiya: scores (B, n_heads, T_query, T_key) hain aur softmax keys par chalta hai, dim=-1, taaki har query ki row ka sum 1 ho.",
    },
    "lab03.heads_not_split": {
        "en": "your output is single-head attention over all d_model features: n_heads is ignored. Split q, k and v into n_heads heads of width d_k = d_model // n_heads: view(B, T, n_heads, d_k).transpose(1, 2).",
        "es": "tu salida es atención de una sola cabeza sobre las d_model componentes: n_heads se ignora. Divide q, k y v en n_heads cabezas de ancho d_k = d_model // n_heads: view(B, T, n_heads, d_k).transpose(1, 2).",
        "de": "deine Ausgabe ist Attention mit einem einzigen Kopf über alle d_model Merkmale: n_heads wird ignoriert. Teile q, k und v in n_heads Köpfe der Breite d_k = d_model // n_heads: view(B, T, n_heads, d_k).transpose(1, 2).",
        "hi-Latn": "tumhara output saare d_model features par single-head attention hai: n_heads ignore ho gaya. q, k aur v ko n_heads heads mein todo, har head ki width d_k = d_model // n_heads: view(B, T, n_heads, d_k).transpose(1, 2).",
    },
    "lab03.wrong_head_split": {
        "en": "the heads are split or merged with a plain reshape: (B, T, d_model).view(B, n_heads, T, d_k) mixes positions and features. Split with view(B, T, n_heads, d_k).transpose(1, 2) and merge with transpose(1, 2).reshape(B, T, d_model).",
        "es": "las cabezas se separan o se juntan con un simple reshape: (B, T, d_model).view(B, n_heads, T, d_k) mezcla posiciones y componentes. Separa con view(B, T, n_heads, d_k).transpose(1, 2) y junta con transpose(1, 2).reshape(B, T, d_model).",
        "de": "die Köpfe werden mit einem bloßen reshape getrennt oder zusammengefügt: (B, T, d_model).view(B, n_heads, T, d_k) vermischt Positionen und Merkmale. Trenne mit view(B, T, n_heads, d_k).transpose(1, 2) und füge mit transpose(1, 2).reshape(B, T, d_model) zusammen.",
        "hi-Latn": "heads ko simple reshape se split ya merge kiya gaya: (B, T, d_model).view(B, n_heads, T, d_k) positions aur features ko mix kar deta hai. Split karo view(B, T, n_heads, d_k).transpose(1, 2) se, aur merge karo transpose(1, 2).reshape(B, T, d_model) se.",
    },
    "lab03.heads_wrong": {
        "en": "right with one head, wrong with several: look at how you split q, k, v into heads of width d_model // n_heads and how you merge them back before out_proj.",
        "es": "correcto con una cabeza, incorrecto con varias: revisa cómo separas q, k, v en cabezas de ancho d_model // n_heads y cómo las juntas antes de out_proj.",
        "de": "richtig mit einem Kopf, falsch mit mehreren: prüfe, wie du q, k, v in Köpfe der Breite d_model // n_heads trennst und vor out_proj wieder zusammenfügst.",
        "hi-Latn": "ek head ke saath sahi, kai heads ke saath galat: dekho q, k, v ko d_model // n_heads width ke heads mein kaise split karte ho aur out_proj se pehle wapas kaise merge karte ho.",
    },
    "lab03.mask_not_shared": {
        "en": "only the first head is masked, the other heads read the future. One causal mask serves all heads: give it shape (T, T) or (B, 1, T, T) so that it broadcasts over the head axis.",
        "es": "solo la primera cabeza está enmascarada; las demás leen el futuro. Una sola máscara causal sirve a todas las cabezas: dale forma (T, T) o (B, 1, T, T) para que se difunda sobre el eje de las cabezas.",
        "de": "nur der erste Kopf ist maskiert, die anderen lesen die Zukunft. Eine kausale Maske gilt für alle Köpfe: gib ihr die Form (T, T) oder (B, 1, T, T), damit sie über die Kopfachse broadcastet.",
        "hi-Latn": "sirf pehla head masked hai, baaki heads future padh rahe hain. Ek hi causal mask saare heads ke liye hai: use shape (T, T) ya (B, 1, T, T) do taaki woh head axis par broadcast ho.",
    },
    "lab03.mask_batch_on_heads": {
        "en": "your mask has shape (B, T, T): against scores (B, n_heads, T, T) it broadcasts as (1, B, T, T), so the padding of sequence b lands on head b. Give the mask shape (B, 1, T, T).",
        "es": "tu máscara tiene forma (B, T, T): frente a scores (B, n_heads, T, T) se difunde como (1, B, T, T), así que el padding de la secuencia b cae en la cabeza b. Dale forma (B, 1, T, T).",
        "de": "deine Maske hat die Form (B, T, T): gegen Scores (B, n_heads, T, T) broadcastet sie als (1, B, T, T), also landet das Padding von Folge b auf Kopf b. Gib der Maske die Form (B, 1, T, T).",
        "hi-Latn": "tumhare mask ki shape (B, T, T) hai: scores (B, n_heads, T, T) ke against woh (1, B, T, T) ban kar broadcast hota hai, toh sequence b ka padding head b par lag jaata hai. Mask ko shape (B, 1, T, T) do.",
    },
    "lab03.padding_ignored": {
        "en": "right at every real position, but the padded positions read the padding keys: the key mask is missing. With right padding and a causal mask a real token never reaches a padding key, so only the padded rows show it; the same module with left padding (batched generation, chapter 05) would read padding. Block the keys j >= lengths[b] as well.",
        "es": "correcto en todas las posiciones reales, pero las posiciones de padding leen las keys de padding: falta la máscara de keys. Con padding a la derecha y máscara causal un token real nunca llega a una key de padding, así que solo lo muestran las filas de padding; el mismo módulo con padding a la izquierda (generación por lotes, capítulo 05) leería padding. Bloquea también las keys j >= lengths[b].",
        "de": "an jeder echten Position richtig, aber die Padding-Positionen lesen die Padding-Keys: die Key-Maske fehlt. Mit Padding rechts und kausaler Maske erreicht ein echtes Token nie einen Padding-Key, deshalb zeigen es nur die Padding-Zeilen; dasselbe Modul mit Padding links (Batch-Generierung, Kapitel 05) würde Padding lesen. Sperre zusätzlich die Keys j >= lengths[b].",
        "hi-Latn": "har real position par sahi, lekin padded positions padding keys padh rahi hain: key mask missing hai. Right padding aur causal mask ke saath real token kabhi padding key tak nahi pahunchta, isliye yeh sirf padded rows mein dikhta hai; wahi module left padding (batched generation, chapter 05) ke saath padding padh lega. Keys j >= lengths[b] ko bhi block karo.",
    },
    "lab03.padding_wrong": {
        "en": "right without lengths, wrong with them: combine the two masks with AND, allowed[b, 0, i, j] = (j <= i) and (j < lengths[b]), shape (B, 1, T, T); lengths may come as a list or a tensor.",
        "es": "correcto sin lengths, incorrecto con ellas: combina las dos máscaras con AND, allowed[b, 0, i, j] = (j <= i) and (j < lengths[b]), forma (B, 1, T, T); lengths puede llegar como lista o como tensor.",
        "de": "ohne lengths richtig, mit lengths falsch: verknüpfe beide Masken mit UND, allowed[b, 0, i, j] = (j <= i) and (j < lengths[b]), Form (B, 1, T, T); lengths kann als Liste oder als Tensor kommen.",
        "hi-Latn": "lengths ke bina sahi, unke saath galat: dono masks ko AND se jodo, allowed[b, 0, i, j] = (j <= i) and (j < lengths[b]), shape (B, 1, T, T); lengths list ya tensor dono ho sakta hai.",
    },
    "lab03.layers_missing": {
        "en": "the reference weights could not be loaded ({message}). The module needs exactly four layers nn.Linear(d_model, d_model) with bias, named q_proj, k_proj, v_proj and out_proj, and no other parameters.",
        "es": "no se pudieron cargar los pesos de referencia ({message}). El módulo necesita exactamente cuatro capas nn.Linear(d_model, d_model) con bias, llamadas q_proj, k_proj, v_proj y out_proj, y ningún otro parámetro.",
        "de": "die Referenzgewichte ließen sich nicht laden ({message}). Das Modul braucht genau vier Schichten nn.Linear(d_model, d_model) mit Bias, namens q_proj, k_proj, v_proj und out_proj, und keine weiteren Parameter.",
        "hi-Latn": "reference weights load nahi ho paaye ({message}). Module mein exactly chaar layers nn.Linear(d_model, d_model) bias ke saath chahiye, naam q_proj, k_proj, v_proj aur out_proj, aur koi doosra parameter nahi.",
    },
    # prefix_test
    "lab03.always_true": {
        "en": "It says True for every decoder, even those that leak. For each t, change the tokens after t and compare the logits at positions <= t before and after.",
        "es": "Dice True para todos los decodificadores, incluso los que tienen fugas. Para cada t, cambia los tokens después de t y compara los logits en las posiciones <= t antes y después.",
        "de": "Er sagt True für jeden Decoder, auch für die undichten. Verändere für jedes t die Tokens nach t und vergleiche die Logits an den Positionen <= t vorher und nachher.",
        "hi-Latn": "Yeh har decoder ke liye True bolta hai, leaky walon ke liye bhi. Har t ke liye t ke baad ke tokens badlo aur positions <= t ke logits pehle aur baad mein compare karo.",
    },
    "lab03.always_false": {
        "en": "your test says False for every decoder, the correct one included. A test that rejects everything proves nothing: it must say True for the correct decoder (no points until it does). Compare with a tolerance, and only the logits at positions <= t.",
        "es": "tu prueba dice False para todos los decodificadores, incluido el correcto. Una prueba que lo rechaza todo no demuestra nada: debe decir True para el decodificador correcto (sin puntos hasta que lo haga). Compara con una tolerancia, y solo los logits en las posiciones <= t.",
        "de": "dein Test sagt False für jeden Decoder, auch für den richtigen. Ein Test, der alles ablehnt, beweist nichts: er muss für den richtigen Decoder True sagen (vorher gibt es keine Punkte). Vergleiche mit einer Toleranz und nur die Logits an den Positionen <= t.",
        "hi-Latn": "tumhara test har decoder ke liye False bolta hai, sahi wale ke liye bhi. Jo test sab kuch reject kare woh kuch prove nahi karta: sahi decoder ke liye use True bolna hoga (tab tak zero points). Tolerance ke saath compare karo, aur sirf positions <= t ke logits.",
    },
    "lab03.rejects_correct": {
        "en": "your test says the correct decoder is not causal. It must say True for it (no points until it does): compare only the logits at positions <= t, with a tolerance such as 1e-5, and change only tokens after t.",
        "es": "tu prueba dice que el decodificador correcto no es causal. Debe decir True para él (sin puntos hasta que lo haga): compara solo los logits en las posiciones <= t, con una tolerancia como 1e-5, y cambia solo tokens después de t.",
        "de": "dein Test hält den richtigen Decoder für nicht kausal. Er muss für ihn True sagen (vorher gibt es keine Punkte): vergleiche nur die Logits an den Positionen <= t, mit einer Toleranz wie 1e-5, und verändere nur Tokens nach t.",
        "hi-Latn": "tumhara test sahi decoder ko non-causal bolta hai. Uske liye True aana chahiye (tab tak zero points): sirf positions <= t ke logits compare karo, 1e-5 jaisi tolerance ke saath, aur sirf t ke baad ke tokens badlo.",
    },
    "lab03.crashes": {
        "en": "On the decoder {bug} your test raised {type} instead of returning False: {message}. A test answers with a bool: compare and return False, don't assert.",
        "es": "Con el decodificador {bug} tu prueba lanzó {type} en lugar de devolver False: {message}. Una prueba responde con un bool: compara y devuelve False, no uses assert.",
        "de": "Beim Decoder {bug} hat dein Test {type} ausgelöst, statt False zurückzugeben: {message}. Ein Test antwortet mit einem bool: vergleiche und gib False zurück, statt assert zu benutzen.",
        "hi-Latn": "Decoder {bug} par tumhare test ne False return karne ki jagah {type} raise kiya: {message}. Test ka jawab bool hota hai: compare karo aur False return karo, assert mat karo.",
    },
    "lab03.missed_bugs": {
        "en": "Each decoder it accepted lets a position see a token after it. For every t, change the tokens after t and compare the logits at positions <= t.",
        "es": "Cada decodificador que aceptó deja que una posición vea un token posterior. Para cada t, cambia los tokens después de t y compara los logits en las posiciones <= t.",
        "de": "Jeder Decoder, den er akzeptiert hat, lässt eine Position ein späteres Token sehen. Verändere für jedes t die Tokens nach t und vergleiche die Logits an den Positionen <= t.",
        "hi-Latn": "Jo bhi decoder isne accept kiya, usme koi position apne baad ka token dekh leti hai. Har t ke liye t ke baad ke tokens badlo aur positions <= t ke logits compare karo.",
    },
    "lab03.wrong_type": {
        "en": "prefix_test answers with a bool: True (causal) or False (leaks).",
        "es": "prefix_test responde con un bool: True (causal) o False (tiene fugas).",
        "de": "prefix_test antwortet mit einem bool: True (kausal) oder False (undicht).",
        "hi-Latn": "prefix_test ka jawab ek bool hai: True (causal) ya False (leak hai).",
    },
    "lab03.returned_none": {
        "en": "for {case} expected {expected}, but got {got}: did you forget `return`?",
        "es": "para {case} se esperaba {expected}, pero llegó {got}: ¿olvidaste el `return`?",
        "de": "für {case} wurde {expected} erwartet, zurück kam aber {got}: fehlt ein `return`?",
        "hi-Latn": "{case} ke liye {expected} expected tha, lekin mila {got}: kahin `return` to nahi bhool gaye?",
    },
    "lab03.caught_all": {
        "en": "It says True for the correct decoder and rejects every leaking one: no mask, off by one, normalisation over time, the shifted input, and a single leak at each position t = 0 … T-2.",
        "es": "Dice True para el decodificador correcto y rechaza todos los que tienen fugas: sin máscara, desplazada en uno, normalización sobre el tiempo, la entrada desplazada y una fuga aislada en cada posición t = 0 … T-2.",
        "de": "Er sagt True für den richtigen Decoder und lehnt jeden undichten ab: keine Maske, um eins verschoben, Normierung über die Zeit, die verschobene Eingabe und ein einzelnes Leck an jeder Position t = 0 … T-2.",
        "hi-Latn": "Yeh sahi decoder ke liye True bolta hai aur har leaky decoder ko reject karta hai: koi mask nahi, off-by-one, time par normalisation, shifted input, aur har position t = 0 … T-2 par ek akela leak.",
    },
    "lab03.passed_checks": {
        "en": "Your test passed {caught} of the {total} checks.",
        "es": "Tu prueba superó {caught} de las {total} comprobaciones.",
        "de": "Dein Test hat {caught} der {total} Prüfungen bestanden.",
        "hi-Latn": "Tumhare test ne {total} mein se {caught} checks pass kiye.",
    },
    "lab03.missed.positions": {
        "en": "It accepted decoders in which a single position reads a later token, at position(s) {positions}.",
        "es": "Aceptó decodificadores en los que una sola posición lee un token posterior, en la(s) posición(es) {positions}.",
        "de": "Er hat Decoder akzeptiert, in denen eine einzige Position ein späteres Token liest, an Position(en) {positions}.",
        "hi-Latn": "Isne aise decoders accept kiye jinmein sirf ek position baad ka token padhti hai, position(s) {positions} par.",
    },
    "lab03.missed_positions": {
        "en": "It misses leaks that only some prefix lengths reveal (comparing position 0 alone, or the last position alone, is not enough). For every t = 0 … T-2, change all the tokens after t and compare the logits at every position <= t.",
        "es": "No ve fugas que solo revelan algunas longitudes de prefijo (comparar solo la posición 0, o solo la última, no basta). Para cada t = 0 … T-2, cambia todos los tokens después de t y compara los logits en cada posición <= t.",
        "de": "Er übersieht Lecks, die nur manche Präfixlängen zeigen (nur Position 0 oder nur die letzte Position zu vergleichen reicht nicht). Verändere für jedes t = 0 … T-2 alle Tokens nach t und vergleiche die Logits an jeder Position <= t.",
        "hi-Latn": "Yeh woh leaks miss karta hai jo sirf kuch prefix lengths dikhati hain (sirf position 0 ya sirf last position compare karna kaafi nahi). Har t = 0 … T-2 ke liye t ke baad ke saare tokens badlo aur har position <= t ke logits compare karo.",
    },
    "lab03.no_evidence": {
        "en": "It rejected a decoder without showing why: none of the inputs it passed to that decoder agree up to some t while their logits at or before t differ. A rejection counts only if the test itself called the decoder on inputs that show the leak (the grader records them); recognising a decoder by its code earns nothing.",
        "es": "Rechazó un decodificador sin mostrar por qué: ninguna de las entradas que le pasó coincide hasta algún t con logits distintos en t o antes. Un rechazo solo cuenta si la propia prueba llamó al decodificador con entradas que muestran la fuga (el corrector las registra); reconocer un decodificador por su código no da puntos.",
        "de": "Er hat einen Decoder abgelehnt, ohne es zu zeigen: keine seiner Eingaben an diesen Decoder stimmt bis zu einem t überein, während die Logits an t oder davor abweichen. Eine Ablehnung zählt nur, wenn der Test den Decoder selbst mit Eingaben aufgerufen hat, die das Leck zeigen (der Grader zeichnet sie auf); einen Decoder an seinem Code zu erkennen bringt nichts.",
        "hi-Latn": "Isne ek decoder ko reject kiya par wajah nahi dikhayi: usko diye gaye inputs mein koi bhi do aise nahi jo kisi t tak same hon aur t ya usse pehle ke logits alag hon. Rejection tabhi count hota hai jab test ne khud decoder ko aise inputs par call kiya ho jo leak dikhate hain (grader unhe record karta hai); code dekh kar decoder pehchaanne ke koi points nahi.",
    },
}
for _bug, _texts in BUG_TEXT.items():
    MESSAGES[f"lab03.missed.{_bug}"] = {lang: MISSED[lang].format(bug=text) for lang, text in _texts.items()}

i18n.register(MESSAGES)

LAB = LabSpec(id="lab03", exercises=EXERCISES)
