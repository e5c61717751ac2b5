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

from ..i18n import N_
from ..exercise import Case, Exercise
from . import LabSpec
from .judging import close_nan  # noqa: F401  (the lab's tests read the judges' names here)
from .judging03 import (ATOL, BUGS, CHAPTER_SECTIONS, FAINT_LEAK, MIDDLE_LEAK, PADDING_SLIPS,  # noqa: F401
                        POSITION_LEAK, SWEEP_BUGS, CausalSelfAttentionJudge, PrefixTestJudge, real_positions, real_rows)
from .tensors import rng_for

LAYERS = ("q_proj", "k_proj", "v_proj", "out_proj")


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


def random_state(rng: np.random.Generator, d_model: int) -> dict[str, np.ndarray]:
    """Weights of the four layers; large enough that every slip moves the output visibly."""
    state = {}
    for name in LAYERS:
        state[f"{name}.weight"] = f32(rng.uniform(-1.5, 1.5, size=(d_model, d_model)) / math.sqrt(d_model))
        state[f"{name}.bias"] = f32(rng.uniform(-0.5, 0.5, size=d_model))
    return state


def module_call_name(B: int, T: int, d_model: int, n_heads: int, lengths=None, lengths_as_tensor: bool = False,
                     side: str = "right") -> str:
    """A case named by what it passes: code, the same in every language."""
    name = f"B={B}, T={T}, d_model={d_model}, n_heads={n_heads}"
    if lengths is not None:  # without lengths no padding side is passed either (module_case)
        listed = "[" + ", ".join(str(n) for n in lengths) + "]"
        name += f", lengths={f'tensor({listed})' if lengths_as_tensor else listed}"
        name += ", padding_side='left'" if side == "left" else ""
    return name


def module_case(rng: np.random.Generator, B: int, T: int, d_model: int, n_heads: int, lengths=None,
                lengths_as_tensor: bool = False, public: bool = True, side: str = "right") -> Case:
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
    return Case(module_call_name(B, T, d_model, n_heads, lengths, lengths_as_tensor, side), call, public=public,
                data={"padding": lengths is not None})


def case_inputs(case: Case) -> tuple[np.ndarray, dict[str, np.ndarray], int, Any, str]:
    """x, the layers' state, n_heads, lengths (None or ints) and the padding side of one case."""
    call = case.call
    x = arg_array(call["args"][0])
    state = {key: arg_array(value) for key, value in call["state"].items()}
    lengths = call["kwargs"].get("lengths")
    if lengths is not None:
        lengths = arg_array(lengths).astype(int)
    return x, state, call["init"][1], lengths, call["kwargs"].get("padding_side", "right")


class CausalSelfAttentionExercise(CausalSelfAttentionJudge):
    """CausalSelfAttention's cases and the numpy forward pass as the reference (the judge: judging03)."""

    # Hidden shapes, always all of them: T = 1, one head and many, odd head sizes, lengths of 1 and T,
    # padding on both sides.
    HIDDEN = ((1, 1, 4, 2, None, "right"), (3, 1, 6, 3, None, "right"), (2, 7, 8, 4, None, "right"),
              (1, 5, 12, 3, None, "right"), (2, 6, 8, 2, [6, 1], "right"), (3, 5, 6, 1, [2, 5, 3], "left"),
              (2, 1, 4, 2, [1, 1], "left"), (2, 4, 8, 4, [4, 3], "right"), (2, 6, 8, 2, [1, 4], "left"))

    def cases(self, ctx: dict, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(3)
        cases = [
            module_case(rng, 2, 5, 8, 2),
            module_case(rng, 1, 6, 8, 4),
            module_case(rng, 2, 4, 6, 1),
            module_case(rng, 2, 5, 8, 2, lengths=[5, 2]),
            module_case(rng, 2, 4, 4, 2, lengths=[1, 3], lengths_as_tensor=True),
            # Left padding: the padding keys come before the real tokens, so only the key mask keeps them out.
            module_case(rng, 2, 5, 8, 2, lengths=[3, 5], side="left"),
            module_case(rng, 3, 4, 6, 3, lengths=[2, 4, 1], lengths_as_tensor=True, side="left"),
        ]
        if seed is not None:
            rng = rng_for(seed, self.id)
            for B, T, d_model, n_heads, lengths, side in self.HIDDEN:
                cases.append(module_case(rng, B, T, d_model, n_heads, lengths=lengths,
                                         lengths_as_tensor=bool(rng.integers(0, 2)), public=False, side=side))
            for number in range(2):
                n_heads = int(rng.choice([1, 2, 4]))
                d_model = n_heads * int(rng.integers(2, 4))
                B, T = int(rng.integers(1, 4)), int(rng.integers(2, 8))
                lengths = [int(n) for n in rng.integers(1, T + 1, size=B)] if number == 1 else None
                side = "left" if rng.integers(0, 2) else "right"
                cases.append(module_case(rng, B, T, d_model, n_heads, lengths=lengths,
                                         lengths_as_tensor=bool(rng.integers(0, 2)), public=False, side=side))
        return cases

    def reference(self, case: Case) -> dict:
        x, state, heads, lengths, side = case_inputs(case)
        return {"out": self_attention(x, state, heads, lengths, side), "heads": heads, "side": side,
                "lengths": None if lengths is None else [int(n) for n in lengths]}

    def slip_references(self, case: Case) -> list:
        x, state, heads, lengths, side = case_inputs(case)
        return [(name, self_attention(x, state, heads, lengths, side, **slip)) for name, slip in SLIPS]

    @staticmethod
    def matches(got: list[np.ndarray], inputs, slip: dict, skip_first: bool = False,
                padding_rows: bool = False) -> bool:
        """Whether every output equals the slip's (keyword arguments of self_attention), as the judge compares."""
        references = [{"lengths": lengths, "side": side} for _, _, _, lengths, side in inputs]
        candidates = [self_attention(*case_input, **slip) for case_input in inputs]
        return CausalSelfAttentionJudge.matches_slip(got, references, candidates, skip_first, padding_rows)


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
# The whole-model bugs graded one point each (BUGS, in judging03) are some of these; middle_leak is graded
# with the position sweep.
PUBLIC_VOCAB = 11
PUBLIC_DECODER_SEED = 2024
PUBLIC_SWEEP_SEED = 10  # draws the public sweep (fixed: `check` shows the same cases every time)
# The faint leak moves the logits by at most 2 * FAINT (tanh keeps it bounded), always below 1e-3 and far
# above float32 rounding (~1e-6): a test that compares within 1e-5 sees it, one within 1e-3 cannot.
FAINT = 4e-4


def sweep_leaks(T: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Single-position leaks (position t reads token s > t) for the sweep, each (t, s) once.

    Position t reads token t + 1, for every t: only the prefix length t + 1 shows such a leak, so a
    test that skips a prefix length (or a token, or compares only some positions) misses one. For
    every t = 0 … T-3, position t reads a token s drawn from t + 2 … T-1: a test that only changes the
    next token, or only compares position t, misses all of them. And for every distance d = 2 … T-1 one
    leak of that distance, at a position drawn from `rng`: a test blind to one distance misses it
    whatever the draw.
    """
    leaks = {(t, t + 1) for t in range(T - 1)}
    for t in range(T - 2):
        leaks.add((t, int(rng.integers(t + 2, T))))
    for distance in range(2, T):
        t = int(rng.integers(0, T - distance))
        leaks.add((t, t + distance))
    return sorted(leaks)


def middle_leak(T: int) -> tuple[int, int]:
    """The (position, token) the lab's middle_leak decoder leaks at length T: position 0 reads token T // 2."""
    return (0, T // 2)


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
    if bug in (POSITION_LEAK, FAINT_LEAK):
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


class PrefixTestExercise(PrefixTestJudge):
    """prefix_test's cases: a correct decoder, one per bug and the position sweep (the judge: judging03)."""

    public_T = 8  # the signature's default
    hidden_T = 10

    def run_set(self, vocab: int, decoder_seed: int, T: int, kwargs: dict, public: bool,
                rng: np.random.Generator) -> list[Case]:
        specs: list[tuple[str | None, tuple[int, int] | None]] = [(None, None)] + [(bug, None) for bug in BUGS]
        specs += [(POSITION_LEAK, leak) for leak in sweep_leaks(T, rng)]
        specs.append((MIDDLE_LEAK, middle_leak(T)))  # the lab's own demonstration (§4) is graded too
        source = int(rng.integers(1, T))
        specs.append((FAINT_LEAK, (int(rng.integers(0, source)), source)))
        cases = []
        for bug, leak in specs:
            call = {"kind": "call", "target": self.id,
                    "args": [{"__function__": decoder_source(bug, vocab, decoder_seed, leak), "name": "model",
                              "record": True}, vocab], "kwargs": kwargs}
            label = bug or "correct"
            if bug == MIDDLE_LEAK:
                label = f"middle_leak: position 0 reads token T // 2 = {leak[1]}"
            elif leak is not None:
                label = f"position {leak[0]} reads token {leak[1]}" + (", faintly" if bug == FAINT_LEAK else "")
            if not public:
                label += f" (vocab_size={vocab}, T={T})"
            # what the student reads: the decoder described in their language (the name stays the case's id)
            shown = (f"lab03.case.{bug or 'correct'}",
                     {"position": leak[0], "token": leak[1]} if leak is not None else {})
            cases.append(Case(label, call, public=public,
                              data={"bug": bug or "correct", "optional": bug is not None, "leak": leak,
                                    "vocab": vocab, "decoder_seed": decoder_seed}, label=shown))
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

    def trusted_function(self, case: Case):
        return _trusted_decoder(case.data["bug"], case.data["vocab"], case.data["decoder_seed"], case.data["leak"])


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
    # the decoders' descriptions (Case.label)
    "lab03.case.correct", "lab03.case.no_mask", "lab03.case.off_by_one", "lab03.case.time_axis_norm",
    "lab03.case.shifted_input", "lab03.case.position_leak", "lab03.case.faint_leak", "lab03.case.middle_leak",
)

# The stubs' hints (Lab.hint(exercise), which a stub raises in the notebook's language).
N_(
    "lab03.hint.CausalSelfAttention", "lab03.hint.prefix_test",
)

LAB = LabSpec(id="lab03", exercises=EXERCISES)
