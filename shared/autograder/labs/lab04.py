"""lab04, the mask at inference with a KV cache.

- ``kv_cache_mask(T_new, T_past)``: bool (T_new, T_past + T_new), True = may attend,
  aligned bottom-right: new query r (absolute position T_past + r) sees keys
  0 .. T_past + r. The classic slip is the top-left alignment of
  ``is_causal=True`` / ``tril(ones(L, S))``.
- ``cached_attention(q, k, v, past_k=None, past_v=None) -> (out, k_all, v_all)``.
  The grader cannot chain a student's calls (each call is plain data), so
  "decoding in chunks of sizes 1, 3, the rest equals full causal attention" is
  graded as three independent calls whose past is the prefix of the same
  sequence: their outputs, stacked, must be the full causal attention.
"""
from __future__ import annotations

import math

import numpy as np

from ..i18n import N_
from ..exercise import Case, Exercise
from . import LabSpec
from .judging04 import ATOL, CHAPTER_SECTIONS, MASK_SLIPS, CachedAttentionJudge, KVCacheMaskJudge  # noqa: F401
from .tensors import rng_for
from .lab03 import arg_array, f32, softmax, tensor_arg


# ---------------------------------------------------------------- the masks
def cache_mask(T_new: int, T_past: int, kind: str = "bottom_right") -> np.ndarray:
    """(T_new, T_past + T_new) bool, True = may attend; `kind` names the reference or a slip."""
    S = T_past + T_new
    ones = np.ones((T_new, S), dtype=bool)
    right = np.tril(ones, k=T_past)
    if kind == "bottom_right":
        return right
    if kind == "top_left":  # is_causal=True, tril(ones(L, S))
        return np.tril(ones)
    if kind == "diagonal_masked":
        return np.tril(ones, k=T_past - 1)
    if kind == "off_by_one":
        return np.tril(ones, k=T_past + 1)
    if kind == "inverted":
        return ~right
    if kind == "no_mask":
        return ones
    if kind == "past_blocked":
        mask = np.zeros((T_new, S), dtype=bool)
        mask[:, T_past:] = np.tril(np.ones((T_new, T_new), dtype=bool))
        return mask
    raise ValueError(kind)


class KVCacheMaskExercise(KVCacheMaskJudge):
    """kv_cache_mask's cases, and cache_mask as the reference (the judge: judging04)."""

    def cases(self, ctx: dict, seed: int | None = None) -> list[Case]:
        sizes = [(1, 5), (3, 2), (4, 0), (2, 4)]
        public = [True] * len(sizes)
        if seed is not None:
            # Every (T_new, T_past) of the taught range, T_past = 0 (no cache) and T_new = 1 (decoding) included.
            hidden = [(n, p) for n in range(1, 7) for p in range(0, 7)]
            sizes += hidden
            public += [False] * len(hidden)
        return [Case(f"kv_cache_mask({n}, {p})", {"kind": "call", "target": self.id, "args": [n, p]}, public=pub)
                for (n, p), pub in zip(sizes, public)]

    def reference(self, case: Case) -> np.ndarray:
        return cache_mask(*case.call["args"])

    def slip_references(self, case: Case) -> list:
        return [(slip, cache_mask(*case.call["args"], slip)) for slip in MASK_SLIPS]


# ---------------------------------------------------------------- attention with a cache
def attend(q: np.ndarray, k_all: np.ndarray, v_all: np.ndarray, mask: str = "bottom_right",
           scale: bool = True, axis: int = -1, past_ignored: bool = False) -> np.ndarray:
    """softmax(q k_allᵀ / √d_k + mask) v_all for the new queries, or one classic slip of it."""
    T_new, S = q.shape[-2], k_all.shape[-2]
    if past_ignored:
        k_all, v_all = k_all[..., S - T_new:, :], v_all[..., S - T_new:, :]
        S = T_new
    scores = q @ k_all.swapaxes(-1, -2)  # (..., T_new, S)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    allowed = cache_mask(T_new, S - T_new, mask)  # (T_new, S)
    with np.errstate(invalid="ignore"):
        weights = softmax(np.where(allowed, scores, -np.inf), axis=axis)
    return weights @ v_all  # (..., T_new, d_v)


ATTENTION_SLIPS: list[tuple[str, dict]] = [
    ("top_left", {"mask": "top_left"}),
    ("no_mask", {"mask": "no_mask"}),
    ("diagonal_masked", {"mask": "diagonal_masked"}),
    ("forgot_scale", {"scale": False}),
    ("wrong_axis", {"axis": -2}),
    ("past_ignored", {"past_ignored": True}),
]


def attention_case(name: str, q, k, v, past_k=None, past_v=None, public: bool = True,
                   label: tuple[str, dict] | None = None) -> Case:
    call = {"kind": "call", "target": "cached_attention", "args": [tensor_arg(q), tensor_arg(k), tensor_arg(v)]}
    if past_k is not None:
        call["kwargs"] = {"past_k": tensor_arg(past_k), "past_v": tensor_arg(past_v)}
    elif name.startswith("chunk"):
        call["kwargs"] = {"past_k": None, "past_v": None}
    return Case(name, call, public=public, label=label)


def chunk_cases(rng: np.random.Generator, lead: tuple[int, ...], T: int, d_k: int, d_v: int,
                sizes: list[int], public: bool = True) -> list[Case]:
    """One sequence decoded in chunks: chunk c gets the keys and values before it as its cache."""
    Q = f32(rng.normal(size=lead + (T, d_k)))  # (..., T, d_k)
    K = f32(rng.normal(size=lead + (T, d_k)))  # (..., T, d_k)
    V = f32(rng.normal(size=lead + (T, d_v)))  # (..., T, d_v)
    cases, start = [], 0
    label = ", ".join(str(s) for s in sizes)
    for number, size in enumerate(sizes, 1):
        end = start + size
        past = (K[..., :start, :], V[..., :start, :]) if start else (None, None)
        cases.append(attention_case(f"chunk {number} of ({label}), T={T}", Q[..., start:end, :], K[..., start:end, :],
                                    V[..., start:end, :], *past, public=public,
                                    label=("lab04.case.chunk", {"number": number, "sizes": label, "T": T})))
        start = end
    return cases


def attention_inputs(case: Case) -> tuple[np.ndarray, ...]:
    q, k, v = (arg_array(a) for a in case.call["args"])
    kwargs = case.call.get("kwargs") or {}
    if kwargs.get("past_k") is None:
        return q, k, v, k, v, 0
    past_k, past_v = arg_array(kwargs["past_k"]), arg_array(kwargs["past_v"])
    return q, k, v, np.concatenate([past_k, k], axis=-2), np.concatenate([past_v, v], axis=-2), past_k.shape[-2]


class CachedAttentionExercise(CachedAttentionJudge):
    """cached_attention's cases, chunk by chunk, and attend() as the reference (the judge: judging04)."""

    def cases(self, ctx: dict, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(4)
        cases = [
            attention_case("no cache, T=4", f32(rng.normal(size=(4, 3))), f32(rng.normal(size=(4, 3))),
                           f32(rng.normal(size=(4, 2))), label=("lab04.case.no_cache", {"T": 4})),
            attention_case("one new token, T_past=4", f32(rng.normal(size=(2, 1, 3))), f32(rng.normal(size=(2, 1, 3))),
                           f32(rng.normal(size=(2, 1, 2))), f32(rng.normal(size=(2, 4, 3))),
                           f32(rng.normal(size=(2, 4, 2))), label=("lab04.case.one_new_token", {"T_past": 4})),
        ]
        cases += chunk_cases(rng, (2, 2), 7, 4, 3, [1, 3, 3])
        if seed is not None:
            rng = rng_for(seed, self.id)
            # Fixed chunkings at the edges (one token at a time, the whole sequence at once, d_k = d_v = 1,
            # no leading dims and two), then one drawn by the seed.
            for lead, T, d_k, d_v, sizes in (((), 1, 1, 1, [1]), ((3,), 5, 2, 1, [1, 1, 1, 1, 1]),
                                             ((2, 2), 6, 3, 2, [6]), ((), 7, 1, 3, [2, 5])):
                cases += chunk_cases(rng, lead, T, d_k, d_v, sizes, public=False)
            T = int(rng.integers(4, 10))
            first = int(rng.integers(1, T - 1))
            second = int(rng.integers(1, T - first))
            sizes = [first, second] + ([T - first - second] if T - first - second else [])
            lead = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3))))
            cases += chunk_cases(rng, lead, T, int(rng.integers(2, 6)), int(rng.integers(1, 5)), sizes, public=False)
        return cases

    def reference(self, case: Case) -> dict:
        q, k, v, k_all, v_all, T_past = attention_inputs(case)
        swapped = (np.concatenate([k, k_all[..., :T_past, :]], axis=-2),
                   np.concatenate([v, v_all[..., :T_past, :]], axis=-2))
        return {"out": attend(q, k_all, v_all), "k_all": k_all, "v_all": v_all, "T_past": int(T_past),
                "k_shape": list(k.shape), "swapped": swapped}

    def slip_references(self, case: Case) -> list:
        q, _, _, k_all, v_all, _ = attention_inputs(case)
        return [(name, attend(q, k_all, v_all, **slip)) for name, slip in ATTENTION_SLIPS]


EXERCISES: list[Exercise] = [KVCacheMaskExercise(), CachedAttentionExercise()]

# Message keys this module builds at run time (diagnosed(name), f"lab04.<part>.{name}"), listed for `make catalogs`.
N_(
    "lab04.cache_not_appended", "lab04.cache_order", "lab04.diagonal_masked", "lab04.forgot_scale",
    "lab04.inverted", "lab04.no_mask", "lab04.off_by_one", "lab04.past_blocked", "lab04.past_ignored",
    "lab04.see_lab", "lab04.top_left", "lab04.transposed", "lab04.wrong_axis", "lab04.wrong_cache",
)

# The stubs' hints (Lab.hint(exercise), which a stub raises in the notebook's language).
N_(
    "lab04.hint.kv_cache_mask", "lab04.hint.cached_attention",
)

LAB = LabSpec(id="lab04", exercises=EXERCISES)
